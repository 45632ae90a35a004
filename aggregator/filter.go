package aggregator

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// What a server's config entry exposes of its tools (config.Tools: the
// filter fields of every dialect, and renames) is applied here, by the
// server's own tool names, before the registry names them for the client
// (internal/naming): a filter works the same whatever names the client
// gets. A reload that changes only this swaps the child's view and
// rebuilds the registry; the server is not restarted.

// toolView is config.Tools made ready for lookups.
type toolView struct {
	tools   config.Tools
	allow   []map[string]bool // one set per allow list: a tool must be in each
	deny    map[string]bool
	renames map[string]string // original -> exposed
}

func newToolView(t config.Tools) *toolView {
	v := &toolView{tools: t, deny: map[string]bool{}, renames: map[string]string{}}
	for _, l := range t.Lists {
		set := v.deny
		if l.Allow {
			set = make(map[string]bool, len(l.Names))
			v.allow = append(v.allow, set)
		}
		for _, r := range l.Names {
			set[r.Name] = true
		}
	}
	for _, r := range t.Renames {
		v.renames[r.Original] = r.Exposed
	}
	return v
}

// expose returns the name under which the server's tool name is exposed,
// or false when the entry hides it (config.Tools.Expose).
func (v *toolView) expose(name string) (string, bool) {
	if v.deny[name] {
		return "", false
	}
	for _, set := range v.allow {
		if !set[name] {
			return "", false
		}
	}
	if exposed, ok := v.renames[name]; ok {
		return exposed, true
	}
	return name, true
}

// exposedTools splits the child's tools into those its entry exposes,
// under their exposed names (a renamed one still calls the child by its
// own name: rawName), and those it hides.
func (v *toolView) exposedTools(tools []namedEntry) (shown, hidden []namedEntry) {
	if v.tools.IsZero() {
		return tools, nil
	}
	shown = make([]namedEntry, 0, len(tools))
	for _, e := range tools {
		exposed, ok := v.expose(e.name)
		switch {
		case !ok:
			hidden = append(hidden, e)
		case exposed != e.name:
			e.name, e.renamed = exposed, true
			shown = append(shown, e)
		default:
			shown = append(shown, e)
		}
	}
	return shown, hidden
}

// hiddenNames are the names the client would call the hidden tools by,
// for a clear refusal: a call to one of them never reaches its server.
func hiddenNames(n naming.Scheme, hidden []naming.Entry) map[string]string {
	if len(hidden) == 0 {
		return nil
	}
	m := make(map[string]string, len(hidden))
	for i, as := range n.Assign(hidden) {
		m[as.Name] = hidden[i].Key
	}
	return m
}

// checked returns the exposed names of the child's tools (its own names,
// in its order), and says what the entry hides and renames, for --check:
// "hides delete_repo, fork; renames read_file to cat", or "".
func (v *toolView) checked(tools []string) (exposed []string, what string) {
	var hidden, renamed []string
	for _, t := range tools {
		name, ok := v.expose(t)
		switch {
		case !ok:
			hidden = append(hidden, shown(t))
		case name != t:
			renamed = append(renamed, shown(t)+" to "+shown(name))
			exposed = append(exposed, name)
		default:
			exposed = append(exposed, name)
		}
	}
	var parts []string
	if len(hidden) > 0 {
		parts = append(parts, fmt.Sprintf("hides %d: %s", len(hidden), strings.Join(hidden, ", ")))
	}
	if len(renamed) > 0 {
		parts = append(parts, "renames "+strings.Join(renamed, ", "))
	}
	return exposed, strings.Join(parts, "; ")
}

// shown is s as the report shows it: quoted, with escapes, when it holds
// anything but printable characters (a server's tool name may hold a
// newline that would forge a row, a tab that would shift the columns, or
// terminal escape sequences).
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
