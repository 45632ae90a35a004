package naming

import (
	"slices"
	"strings"
	"time"
)

// Client is what a client, known by its clientInfo.name, does with the
// tool names it is given, how long it waits for a server to start, and
// what it does with a list that changes (measured with each client where
// it can run here, else read in its code; Source says which). This table
// is the one place these facts are kept: naming reads the names, the
// aggregator the start-up facts (Startup), README's tables say the same.
type Client struct {
	names []string // clientInfo.name; a name ending in * is a prefix
	Label string   // as people call it: "Claude Code"
	// Strict: it refuses every tool of a server when one name does not
	// match StrictPattern, so it is served the strict form.
	Strict bool
	// prefix is how many characters the client puts before a listed name
	// when it shows it to its model, for a server name (the aggregator's,
	// in the client's config) of n characters.
	prefix func(n int) int
	// Limit is the longest name, prefix included, that works; Over is
	// what happens to a longer one.
	Limit int
	Over  string
	// Chars are the characters the client keeps in names; it replaces
	// the others with _.
	Chars View
	// Refetches: the client fetches a list again on its list_changed
	// notification. One that does not (or is not known to) takes its
	// first list as final.
	Refetches bool
	// Budget is how long the client waits for a server to start (its
	// initialize and first lists) before it gives up on it; 0: it does
	// not give up.
	Budget time.Duration
	// Source is where the start-up facts come from.
	Source string
}

// UnknownBudget is the budget assumed for a client not in the table: the
// shortest seen in practice (the OpenAI Agents SDK's 5 s). Such a client
// is assumed to list once.
const UnknownBudget = 5 * time.Second

// Startup is what the aggregator assumes of a client at start-up: whether
// it fetches a list again on list_changed, and its budget (0: none). A
// client not in the table lists once and gives up after UnknownBudget.
func Startup(clientName string) (refetches bool, budget time.Duration) {
	k, known := LookupClient(clientName)
	if !known {
		return false, UnknownBudget
	}
	return k.Refetches, k.Budget
}

// DefaultServerNameLen is the length assumed for the name the client gives
// the aggregator in its config (which no client sends) when the user did
// not say: names are made to fit each known client's limit with its prefix
// for a server name of up to this many characters.
const DefaultServerNameLen = 16

// knownClients: Claude Desktop checks names itself; Claude Code prefixes
// mcp__SERVER__ and the Anthropic API refuses a request with a name over
// 64 characters; Codex puts tools in a namespace mcp__SERVER, which
// gateways with the same 64-character rule flatten to mcp__SERVER__name;
// Gemini CLI prefixes mcp_SERVER_ and truncates a name over 63; Cursor
// drops a tool whose server and tool name exceed 60 characters; VS Code
// prefixes mcp_ and at most 13 characters of the server's name and cuts
// at 64. The clients after VS Code are known for their start-up only.
// It is never changed: Clients hands out a copy.
var knownClients = []Client{
	{names: []string{"claude-ai"}, Label: "Claude Desktop", Strict: true,
		prefix: func(int) int { return 0 }, Limit: strictMaxLen, Over: "refused, with every other tool of the server",
		Budget: 60 * time.Second, Source: "its logs quoted in public issues: 60 s, fixed; discards refreshed lists"},
	{names: []string{"claude-code"}, Label: "Claude Code",
		prefix: func(n int) int { return len("mcp__") + n + len("__") }, Limit: 64, Over: "refused by the model API (every request fails)",
		Chars: KeepsStrict, Refetches: true, Budget: 30 * time.Second, Source: "measured, 2.1.197 over stdio (MCP_TIMEOUT: 30 s)"},
	{names: []string{"codex-mcp-client"}, Label: "Codex",
		prefix: func(n int) int { return len("mcp__") + n + len("__") }, Limit: 64, Over: "refused by 64-character model APIs (every request fails)",
		Chars: KeepsStrict, Budget: 30 * time.Second, Source: "measured, 0.169 (startup_timeout_sec; its docs say 10 s)"},
	{names: []string{"gemini-cli-mcp-client"}, Label: "Gemini CLI",
		prefix: func(n int) int { return len("mcp_") + n + len("_") }, Limit: 63, Over: "truncated",
		Chars: KeepsGemini, Refetches: true, Budget: 10 * time.Minute, Source: "measured, 0.61; mcp-client.ts"},
	{names: []string{"cursor*"}, Label: "Cursor",
		prefix: func(n int) int { return n }, Limit: 60, Over: "dropped",
		Budget: UnknownBudget, Source: "not known: taken as a client that lists once (reports of a manual refresh needed)"},
	{names: []string{"Visual Studio Code*", "Code - OSS*"}, Label: "VS Code",
		prefix: func(n int) int { return len("mcp_") + min(n, 13) + len("_") }, Limit: 64, Over: "truncated",
		Refetches: true, Source: "its docs: no start-up timeout, lists fetched again"},
	{names: []string{"Cline"}, Label: "Cline", Refetches: true, Budget: 60 * time.Second, Source: "McpHub.ts: 60 s by default; fetches again since 2026-08"},
	{names: []string{"Zed"}, Label: "Zed", Refetches: true, Budget: UnknownBudget, Source: "its docs: a timeout per server; fetches again"},
	{names: []string{"continue-client"}, Label: "Continue", Budget: 20 * time.Second, Source: "MCPConnection.ts: 20 s; never fetches again"},
	{names: []string{"mcp"}, Label: "Python SDK clients",
		Budget: UnknownBudget, Source: "agents/mcp/server.py: 5 s; langchain_mcp_adapters keeps a snapshot, a new session per call"},
}

// Clients are the known clients, in a fixed order.
func Clients() []Client { return slices.Clone(knownClients) }

// LookupClient finds a known client by its clientInfo.name.
func LookupClient(name string) (Client, bool) {
	for _, k := range knownClients {
		for _, n := range k.names {
			if n == name || strings.HasSuffix(n, "*") && strings.HasPrefix(name, strings.TrimSuffix(n, "*")) {
				return k, true
			}
		}
	}
	return Client{}, false
}

// Name is a clientInfo.name k is known by (for a prefix, the prefix).
func (k Client) Name() string { return strings.TrimSuffix(k.names[0], "*") }

// Prefix is how many characters k puts before a listed name when it shows
// it to its model, for a server name of serverNameLen characters (0 for
// a client that is not known).
func (k Client) Prefix(serverNameLen int) int {
	if k.prefix == nil {
		return 0
	}
	return k.prefix(serverNameLen)
}

// Room is how long a name served to k may be: its limit less its prefix.
func (k Client) Room(serverNameLen int) int {
	return k.Limit - k.Prefix(serverNameLen)
}

// Fate says what k does to a listed name, "" when nothing: for a server
// name of serverNameLen characters, the name is too long (Over), or has
// characters the client replaces in key or tool (a separator it replaces
// is not reported: it is replaced in every name, and calls still work).
func (k Client) Fate(serverNameLen int, key, tool, name string) string {
	switch {
	case k.Strict && !Conforms(name):
		return k.Over
	case k.Limit > 0 && k.Prefix(serverNameLen)+len(name) > k.Limit:
		return k.Over
	case k.Chars != KeepsAll && (hasReplaced(key, k.Chars.Keeps) || hasReplaced(tool, k.Chars.Keeps)):
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

// Settings are the user's choices that names depend on.
type Settings struct {
	Sep    string // between key and name; "": "__" for strict names, else ":"
	Strict bool   // strict names for every client, not only those known to need them
	// ServerNameLen is the length of the name the client gives the
	// aggregator in its config, that names are made to fit with (the
	// caller puts DefaultServerNameLen when the user did not say).
	ServerNameLen int
}

// For is the scheme a client gets: the strict form for a client known to
// need it, or for any client with Settings.Strict; StrictSep between key
// and name then, and ":" otherwise, unless Settings.Sep was given; for a
// known client, names no longer than the room its prefix leaves.
func (s Settings) For(clientName string) Scheme {
	k, known := LookupClient(clientName)
	n := Scheme{Sep: s.Sep, Strict: s.Strict || k.Strict, View: k.Chars}
	if n.Sep == "" {
		n.Sep = ":"
		if n.Strict {
			n.Sep = StrictSep
		}
	}
	if known {
		n.Max = k.Room(s.ServerNameLen)
	}
	if n.Strict && (n.Max == 0 || n.Max > strictMaxLen) {
		n.Max = strictMaxLen
	}
	return n
}
