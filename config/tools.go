package config

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Tools is what a server entry says of the server's tools: which of them
// are exposed, and under which names. Every name in it is the server's own
// (its original) tool name, matched exactly. The zero value exposes every
// tool under its own name.
//
// The fields are those users already write in other clients' files:
//
//	includeTools / excludeTools      Gemini CLI
//	enabled_tools / disabled_tools   Codex, mcpproxy-go
//	disabledTools                    1mcp, Roo Code
//	exposedTools / hiddenTools       the "coordinator" (mcp-proxy-hub); an
//	                                 exposedTools entry may be a rename,
//	                                 {"original": "read_file", "exposed": "cat"}
//
// An allow list (includeTools, enabled_tools, exposedTools), when present,
// exposes only the tools it names (when several are present, only those
// that each names); a deny list (the others) removes the tools it names;
// deny wins, whatever the dialect.
type Tools struct {
	Lists   []ToolList // in file order
	Renames []Rename   // in file order
}

// ToolList is one filter field of a server entry.
type ToolList struct {
	Field string // as written: "excludeTools"
	Allow bool   // an allow list; else a deny list
	Names []ToolRef
}

// ToolRef is one tool name of a filter field and where it is written.
type ToolRef struct {
	Name  string // the server's own tool name
	Where string // its JSON path: mcpServers.fs.excludeTools[0]
}

// Rename is an exposedTools entry that gives a tool another name.
type Rename struct {
	Original, Exposed string
	Where             string // its JSON path: mcpServers.fs.exposedTools[1]
}

// toolFields are the filter fields of a server entry: true for an allow
// list.
var toolFields = map[string]bool{
	"includeTools": true, "excludeTools": false,
	"enabled_tools": true, "disabled_tools": false,
	"disabledTools": false,
	"exposedTools":  true, "hiddenTools": false,
}

// IsZero reports whether t exposes every tool under its own name.
func (t Tools) IsZero() bool { return len(t.Lists) == 0 && len(t.Renames) == 0 }

// Equal reports whether t and u say the same, in the same places.
func (t Tools) Equal(u Tools) bool {
	return slices.EqualFunc(t.Lists, u.Lists, func(a, b ToolList) bool {
		return a.Field == b.Field && a.Allow == b.Allow && slices.Equal(a.Names, b.Names)
	}) && slices.Equal(t.Renames, u.Renames)
}

// Expose returns the name under which the server's tool name is exposed,
// or false when the entry hides it.
func (t Tools) Expose(name string) (string, bool) {
	for _, l := range t.Lists {
		named := slices.ContainsFunc(l.Names, func(r ToolRef) bool { return r.Name == name })
		if named != l.Allow {
			return "", false
		}
	}
	for _, r := range t.Renames {
		if r.Original == name {
			return r.Exposed, true
		}
	}
	return name, true
}

// Refs returns every tool name the entry's lists write, with where, in
// file order (a rename's original is in its exposedTools list).
func (t Tools) Refs() []ToolRef {
	var refs []ToolRef
	for _, l := range t.Lists {
		refs = append(refs, l.Names...)
	}
	return refs
}

// toolList reads the filter field (an array of tool names; for
// exposedTools, names or renames) into s.Tools.
func (p *parser) toolList(s *Server, at, field string, raw json.RawMessage) {
	if kind(raw) == 'n' {
		return
	}
	var elems []json.RawMessage
	if kind(raw) != '[' || json.Unmarshal(raw, &elems) != nil {
		what := "an array of tool names"
		if field == "exposedTools" {
			what += ` or {"original", "exposed"} objects`
		}
		p.problem(at, "must be %s", what)
		return
	}
	list := ToolList{Field: field, Allow: toolFields[field]}
	for i, e := range elems {
		where := fmt.Sprintf("%s[%d]", at, i)
		name, ok := asString(e)
		if !ok && field == "exposedTools" && kind(e) == '{' {
			var r Rename
			if r, ok = p.rename(where, e); ok {
				name = r.Original
				if r.Exposed != r.Original {
					s.Tools.Renames = append(s.Tools.Renames, r)
				}
			} else {
				continue
			}
		} else if !ok {
			p.problem(where, "must be a tool name (a string)")
			continue
		}
		if name == "" {
			p.problem(where, "must not be empty")
			continue
		}
		list.Names = append(list.Names, ToolRef{Name: name, Where: where})
	}
	if list.Allow && len(elems) == 0 {
		p.warnings = append(p.warnings, Problem{Where: at, Msg: "an empty allow list: no tool of this server is exposed"})
	}
	s.Tools.Lists = append(s.Tools.Lists, list)
}

// rename reads an exposedTools entry {"original": NAME, "exposed": NAME}
// ("exposed" may be left out: the tool keeps its name).
func (p *parser) rename(where string, raw json.RawMessage) (Rename, bool) {
	members, _ := objectMembers(raw)
	r := Rename{Where: where}
	ok := true
	for _, m := range members {
		switch m.name {
		case "original", "exposed":
			v, isString := asString(m.value)
			if !isString || v == "" {
				p.problem(child(where, m.name), "must be a non-empty string")
				ok = false
			} else if m.name == "original" {
				r.Original = v
			} else {
				r.Exposed = v
			}
		}
	}
	if r.Original == "" && ok {
		p.problem(child(where, "original"), "missing: the server's own name of the tool")
		return r, false
	}
	if r.Exposed == "" {
		r.Exposed = r.Original
	}
	return r, ok
}

// checkExposed reports the exposed names of an exposedTools list that
// would be one: two renames onto one name, a rename onto a name the list
// also exposes, or one tool renamed twice.
func (p *parser) checkExposed(s Server) {
	for _, l := range s.Tools.Lists {
		if l.Field != "exposedTools" {
			continue
		}
		exposedAt := map[string]string{} // exposed name -> where first
		originalAt := map[string]string{}
		for _, ref := range l.Names {
			exposed, _ := s.Tools.renameOf(ref.Where, ref.Name)
			if first, dup := originalAt[ref.Name]; dup {
				if exposed != ref.Name || s.Tools.renamedAt(first) {
					p.problem(ref.Where, "tool %q is listed again (first at %s): give it one exposed name", ref.Name, first)
				}
				continue
			}
			originalAt[ref.Name] = ref.Where
			if first, dup := exposedAt[exposed]; dup {
				p.problem(ref.Where, "exposes %q, which %s exposes too: two tools cannot have one name", exposed, first)
				continue
			}
			exposedAt[exposed] = ref.Where
		}
	}
}

// renameOf is the exposed name the rename written at where gives name.
func (t Tools) renameOf(where, name string) (string, bool) {
	for _, r := range t.Renames {
		if r.Where == where {
			return r.Exposed, true
		}
	}
	return name, false
}

func (t Tools) renamedAt(where string) bool {
	_, ok := t.renameOf(where, "")
	return ok
}
