package aggregator

import (
	"fmt"
	"strings"
)

// knownClient is what a client, known by its clientInfo.name, does with the
// tool names it is given (measured with each client, and read in its code;
// README's client section says the same).
type knownClient struct {
	name string // clientInfo.name; a name ending in * is a prefix
	// strict: it refuses every tool of a server when one name does not
	// match strictPattern, so it is served the strict form.
	strict bool
	// fate says what the client does to a listed name: "" when nothing,
	// else a short phrase ("truncated", "dropped", ...). key and tool are
	// the server key and the child's own name, listed as name.
	fate func(key, tool, name string) string
}

// knownClients: Claude Desktop checks names; Claude Code and Codex replace
// characters outside [a-zA-Z0-9_-] with _ and prefix mcp__SERVER__, and
// Codex shortens a name over 64 characters with a hash; Gemini CLI keeps
// [a-zA-Z0-9_.:-], prefixes mcp_SERVER_ and truncates a name over 63;
// Cursor drops a tool whose server and tool name exceed 60 characters. The
// lengths are counted with the shortest server name the client may give
// the aggregator (one character), so that what is reported certainly
// happens. A separator the client replaces is not reported: it is replaced
// in every name, and calls still work.
var knownClients = []knownClient{
	{name: "claude-ai", strict: true, fate: func(key, tool, name string) string {
		if !conforms(name) {
			return "refused, with every other tool of the server"
		}
		return ""
	}},
	{name: "claude-code", fate: func(key, tool, name string) string {
		return replacedBy(key, tool, strictByte)
	}},
	{name: "codex-mcp-client", fate: func(key, tool, name string) string {
		if len("mcp__s__")+len(name) > 64 {
			return "shortened with a hash"
		}
		return replacedBy(key, tool, strictByte)
	}},
	{name: "gemini-cli-mcp-client", fate: func(key, tool, name string) string {
		if len("mcp_s_")+len(name) > 63 {
			return "truncated"
		}
		return replacedBy(key, tool, func(c byte) bool { return strictByte(c) || c == '.' || c == ':' })
	}},
	{name: "cursor*", fate: func(key, tool, name string) string {
		if len("s")+len(name) > 60 {
			return "dropped"
		}
		return ""
	}},
}

// replacedBy is "with characters replaced" when key or tool has a character
// that keep refuses.
func replacedBy(key, tool string, keep func(byte) bool) string {
	for _, s := range []string{key, tool} {
		for i := 0; i < len(s); i++ {
			if !keep(s[i]) {
				return "with characters replaced"
			}
		}
	}
	return ""
}

// lookupClient finds a known client by its clientInfo.name.
func lookupClient(name string) (knownClient, bool) {
	for _, k := range knownClients {
		if k.name == name || strings.HasSuffix(k.name, "*") && strings.HasPrefix(name, strings.TrimSuffix(k.name, "*")) {
			return k, true
		}
	}
	return knownClient{}, false
}

// namingFor is the naming a client gets: the strict form for a client known
// to need it, or for any client with Options.StrictNames; "__" between key
// and name then, and ":" otherwise, unless Options.Separator was given.
func (o Options) namingFor(clientName string) naming {
	k, _ := lookupClient(clientName)
	n := naming{sep: o.Separator, strict: o.StrictNames || k.strict}
	if n.sep == "" {
		n.sep = ":"
		if n.strict {
			n.sep = strictSep
		}
	}
	return n
}

// reportNames writes, once the children are ready, one warning when tool
// names were changed for the client or will be changed by it, and with
// --debug one line per such name.
func (a *Aggregator) reportNames() {
	a.regMu.Lock()
	clientName := a.clientName
	a.regMu.Unlock()
	r := a.reg.Load()
	k, known := lookupClient(clientName)
	counts := make(map[string]int)
	var order []string
	var changed int
	for _, t := range r.toolNames {
		if t.hidden {
			continue
		}
		what := t.change.describe()
		if known {
			if fate := k.fate(t.entry.key, t.entry.name, t.name); fate != "" {
				what = strings.TrimPrefix(what+"; by "+clientName+": "+fate, "; ")
				if counts[fate] == 0 {
					order = append(order, fate)
				}
				counts[fate]++
			}
		}
		if what == "" {
			continue
		}
		changed++
		a.log.Debugf("tool %q of server %q is listed as %q (%s)", t.entry.name, t.entry.key, t.name, what)
	}
	if changed == 0 {
		return
	}
	a.log.Warnf("%s; --debug lists them", a.namesSummary(r, clientName, counts, order))
}

// namesSummary is the warning of reportNames, without its end.
func (a *Aggregator) namesSummary(r *registry, clientName string, counts map[string]int, order []string) string {
	var ours, fates []string
	for _, ch := range []nameChange{charsReplaced, shortened, disambiguated} {
		n := 0
		for _, t := range r.toolNames {
			if !t.hidden && t.change&ch != 0 {
				n++
			}
		}
		if n > 0 {
			ours = append(ours, fmt.Sprintf("%d %s", n, ch.describe()))
		}
	}
	for _, f := range order {
		fates = append(fates, fmt.Sprintf("%d %s", counts[f], f))
	}
	var parts []string
	if len(ours) > 0 {
		parts = append(parts, fmt.Sprintf("tool names made to match %s for %s: %s", strictPattern, clientLabel(clientName), strings.Join(ours, ", ")))
	}
	if len(fates) > 0 {
		parts = append(parts, fmt.Sprintf("tool names that %s will change: %s", clientLabel(clientName), strings.Join(fates, ", ")))
	}
	return strings.Join(parts, "; ")
}

func clientLabel(name string) string {
	if name == "" {
		return "the client"
	}
	return fmt.Sprintf("client %q", name)
}
