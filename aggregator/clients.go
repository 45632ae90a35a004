package aggregator

import (
	"fmt"
	"strings"
	"time"
)

// knownClient is what a client, known by its clientInfo.name, does with the
// tool names it is given and with a list that changes (measured with each
// client where it can run here, else read in its code; README's client
// table says the same, with its sources).
type knownClient struct {
	names []string // clientInfo.name; a name ending in * is a prefix
	label string   // as people call it: "Claude Code"
	// strict: it refuses every tool of a server when one name does not
	// match strictPattern, so it is served the strict form.
	strict bool
	// prefix is how many characters the client puts before a listed name
	// when it shows it to its model, for a server name (the aggregator's,
	// in the client's config) of n characters.
	prefix func(n int) int
	// limit is the longest name, prefix included, that works; over is
	// what happens to a longer one.
	limit int
	over  string
	// chars are the characters the client keeps in names; it replaces
	// the others with _.
	chars charView
	// ignoresListChanged: the client takes its first tools/list as final
	// (it never fetches the list again on notifications/tools/list_changed).
	ignoresListChanged bool
	// startupTimeout is how long the client waits for a server to answer
	// initialize and its first tools/list (0: not known).
	startupTimeout time.Duration
}

// DefaultServerNameLen is the length assumed for the name the client gives
// the aggregator in its config (which no client sends) when
// Options.ServerNameLen is 0: names are made to fit each known client's
// limit with its prefix for a server name of up to this many characters.
const DefaultServerNameLen = 16

// knownClients: Claude Desktop checks names itself; Claude Code prefixes
// mcp__SERVER__ and the Anthropic API refuses a request with a name over
// 64 characters; Codex puts tools in a namespace mcp__SERVER, which
// gateways with the same 64-character rule flatten to mcp__SERVER__name;
// Gemini CLI prefixes mcp_SERVER_ and truncates a name over 63; Cursor
// drops a tool whose server and tool name exceed 60 characters; VS Code
// prefixes mcp_ and at most 13 characters of the server's name and cuts
// at 64.
var knownClients = []knownClient{
	{names: []string{"claude-ai"}, label: "Claude Desktop", strict: true,
		prefix: func(int) int { return 0 }, limit: strictMaxLen, over: "refused, with every other tool of the server",
		ignoresListChanged: true},
	{names: []string{"claude-code"}, label: "Claude Code",
		prefix: func(n int) int { return len("mcp__") + n + len("__") }, limit: 64, over: "refused by the model API (every request fails)",
		chars: keepsStrict},
	{names: []string{"codex-mcp-client"}, label: "Codex",
		prefix: func(n int) int { return len("mcp__") + n + len("__") }, limit: 64, over: "refused by 64-character model APIs (every request fails)",
		chars: keepsStrict, ignoresListChanged: true, startupTimeout: 30 * time.Second},
	{names: []string{"gemini-cli-mcp-client"}, label: "Gemini CLI",
		prefix: func(n int) int { return len("mcp_") + n + len("_") }, limit: 63, over: "truncated",
		chars: keepsGemini},
	{names: []string{"cursor*"}, label: "Cursor",
		prefix: func(n int) int { return n }, limit: 60, over: "dropped"},
	{names: []string{"Visual Studio Code*", "Code - OSS*"}, label: "VS Code",
		prefix: func(n int) int { return len("mcp_") + min(n, 13) + len("_") }, limit: 64, over: "truncated"},
}

// lookupClient finds a known client by its clientInfo.name.
func lookupClient(name string) (knownClient, bool) {
	for _, k := range knownClients {
		for _, n := range k.names {
			if n == name || strings.HasSuffix(n, "*") && strings.HasPrefix(name, strings.TrimSuffix(n, "*")) {
				return k, true
			}
		}
	}
	return knownClient{}, false
}

// serverNameLen is the length of the name the client gives the aggregator.
func (o Options) serverNameLen() int {
	if o.ServerNameLen > 0 {
		return o.ServerNameLen
	}
	return DefaultServerNameLen
}

// room is how long a name served to k may be: its limit less its prefix.
func (o Options) room(k knownClient) int {
	return k.limit - k.prefix(o.serverNameLen())
}

// namingFor is the naming a client gets: the strict form for a client known
// to need it, or for any client with Options.StrictNames; "__" between key
// and name then, and ":" otherwise, unless Options.Separator was given;
// for a known client, names no longer than the room its prefix leaves.
func (o Options) namingFor(clientName string) naming {
	k, known := lookupClient(clientName)
	n := naming{sep: o.Separator, strict: o.StrictNames || k.strict, view: k.chars}
	if n.sep == "" {
		n.sep = ":"
		if n.strict {
			n.sep = strictSep
		}
	}
	if known {
		n.max = o.room(k)
	}
	if n.strict && (n.max == 0 || n.max > strictMaxLen) {
		n.max = strictMaxLen
	}
	return n
}

// listWait is how long the first lists wait for servers still starting,
// from the client's first request: for a client that takes its first
// tools/list as final, until they are up (the start-up timeout), but
// within the client's own timeout; for the others, as long as initialize
// waits (their list is completed by list_changed).
func (o Options) listWait(clientName string) time.Duration {
	k, _ := lookupClient(clientName)
	if !k.ignoresListChanged {
		return o.InitializeWait
	}
	if k.startupTimeout > 0 {
		return min(o.StartupTimeout, k.startupTimeout-listWaitMargin)
	}
	return o.StartupTimeout
}

// listWaitMargin keeps the first tools/list of a client that ignores
// list_changed that far inside the client's own start-up timeout.
const listWaitMargin = 5 * time.Second

// fate says what client k does to a listed name, "" when nothing: for a
// server name of the assumed length, the name is too long (over), or has
// characters the client replaces in key or tool (a separator it replaces
// is not reported: it is replaced in every name, and calls still work).
func (o Options) fate(k knownClient, key, tool, name string) string {
	switch {
	case k.strict && !conforms(name):
		return k.over
	case k.prefix(o.serverNameLen())+len(name) > k.limit:
		return k.over
	case k.chars != keepsAll && (hasReplaced(key, k.chars.keeps) || hasReplaced(tool, k.chars.keeps)):
		return "with characters replaced"
	}
	return ""
}

func hasReplaced(s string, keep func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !keep(s[i]) {
			return true
		}
	}
	return false
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
			if fate := a.opts.fate(k, t.entry.key, t.entry.name, t.name); fate != "" {
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
	a.log.Warnf("%s; --debug lists them (see README.md#tool-names)", a.namesSummary(r, clientName, counts, order))
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
	switch {
	case len(ours) == 0:
	case r.naming.strict:
		parts = append(parts, fmt.Sprintf("tool names made to match %s for %s: %s", strictPattern, clientLabel(clientName), strings.Join(ours, ", ")))
	default:
		parts = append(parts, fmt.Sprintf("tool names made to fit the %d characters %s leaves them (with its prefix, for a server name of up to %d characters: see --registered-as): %s",
			r.naming.limit(), clientLabel(clientName), a.opts.serverNameLen(), strings.Join(ours, ", ")))
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
