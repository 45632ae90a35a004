// Package capabilities reads the capabilities the peers of the aggregator
// declare and writes the aggregator's own. A client's capabilities say
// which requests of servers may be relayed to it, and servers are
// initialized with them as the client wrote them; a server's say what the
// aggregator routes to it and what it may ask of it; the aggregator's are
// the merge of its servers'. What passes through without being understood
// (extensions, experimental, tasks, keys not invented yet) is kept as raw
// JSON and never decoded and re-encoded. Everything here is a pure
// function of its arguments: no state, no locks, no logging. The
// aggregator decides whose capabilities to merge and when.
package capabilities

import (
	"slices"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Client is what a client declared: whether it takes the requests the
// aggregator relays from servers, and what servers are initialized with.
// The zero Client declared nothing, and its Raw is {}.
type Client struct {
	relayed map[string]bool // of relayedCapabilities, those declared
	raw     []byte          // the capabilities servers are initialized with
}

// Declared reports whether the client declared the capability ("" is
// always declared).
func (c Client) Declared(name string) bool {
	return name == "" || c.relayed[name]
}

// Raw returns the capabilities as the client wrote them ({} before it
// declared any).
func (c Client) Raw() []byte {
	if c.raw == nil {
		return []byte("{}")
	}
	return c.raw
}

// relayedCapabilities are the client capabilities whose requests the
// aggregator relays from servers to the client: those Declared knows.
var relayedCapabilities = []string{"sampling", "elicitation", "roots", "tasks"}

// ParseClient reads the client's capabilities, raw. Servers get them as
// the client wrote them, every member (extensions, experimental, tasks,
// and keys not invented yet); what is not an object gives {}. Of the
// capabilities whose requests are relayed to the client (sampling,
// elicitation, roots, tasks), a member is declared unless it is null.
func ParseClient(raw []byte) Client {
	caps := Client{relayed: make(map[string]bool), raw: []byte("{}")}
	ms, err := jsonrpc.Members(raw)
	if err != nil {
		return caps
	}
	for _, m := range ms {
		if slices.Contains(relayedCapabilities, m.Key) && string(m.Value) != "null" {
			caps.relayed[m.Key] = true
		}
	}
	caps.raw = raw // byte for byte
	return caps
}

// Server is what a server declared: what the aggregator routes by, and,
// unexported, the members Merge passes on without understanding them, raw.
type Server struct {
	Tools, Prompts, Resources, Logging, Completions bool // declared, not null or false
	Subscribe                                       bool // declared resources.subscribe true
	Apps                                            bool // declared the MCP Apps extension (AppsExtension)
	TasksList                                       bool // declared tasks.list

	tasks                    []byte              // the tasks object, raw; nil when not declared
	extensions, experimental []jsonrpc.RawMember // their members, values raw
	others                   []jsonrpc.RawMember // keys Merge does not know
}

// AppsExtension is the MCP Apps extension's key in extensions.
const AppsExtension = "io.modelcontextprotocol/ui"

// knownServerKeys are the members that Merge writes itself.
var knownServerKeys = []string{"tools", "prompts", "resources", "logging", "completions", "extensions", "experimental", "tasks"}

// ParseServer reads the capabilities member of a server's initialize or
// server/discover result. A result without one, or with one that is not
// an object, declares nothing.
func ParseServer(result []byte) Server {
	var caps Server
	raw, _ := jsonrpc.Member(result, "capabilities")
	ms, _ := jsonrpc.Members(raw)
	for _, m := range ms {
		on := string(m.Value) != "null" && string(m.Value) != "false"
		switch m.Key {
		case "tools":
			caps.Tools = on
		case "prompts":
			caps.Prompts = on
		case "resources":
			caps.Resources = on
			sub, _ := jsonrpc.Member(m.Value, "subscribe")
			caps.Subscribe = string(sub) == "true"
		case "logging":
			caps.Logging = on
		case "completions":
			caps.Completions = on
		case "extensions":
			caps.extensions, _ = jsonrpc.Members(m.Value)
			_, caps.Apps = jsonrpc.Member(m.Value, AppsExtension)
		case "experimental":
			caps.experimental, _ = jsonrpc.Members(m.Value)
		case "tasks":
			if on {
				caps.tasks = m.Value
				_, caps.TasksList = jsonrpc.Member(m.Value, "list")
			}
		default:
			if !slices.Contains(knownServerKeys, m.Key) {
				caps.others = append(caps.others, m)
			}
		}
	}
	return caps
}

// pendingTasks is the tasks capability offered for a server not known yet:
// tasks listed and cancelled, tools/call run as a task. A client runs a
// tool as a task only when the tool itself says it may
// (execution.taskSupport), which only a server with tasks does.
const pendingTasks = `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// Pending is what an aggregator declares for a server whose capabilities
// are not known yet (it has not started): everything it can relay for
// any server (every list, subscriptions, logging, completions, tasks), so
// that the client asks for each list, takes its changes, and uses what the
// server turns out to have. A request for what it turns out not to have
// is answered as a server without it would be (an empty list, -32601).
func Pending() Server {
	return Server{Tools: true, Prompts: true, Resources: true, Subscribe: true, Logging: true, Completions: true,
		TasksList: true, tasks: []byte(pendingTasks)}
}
