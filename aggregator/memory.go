package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Memory keeps what each server declared when it last opened its session,
// so that a later session's initialize (or server/discover) answer can say
// it without starting the server: servers start only when a request needs
// them (startup.go), yet the client learns their capabilities (extensions,
// tasks, keys not invented yet) and instructions as from a direct
// connection. A server never seen gets capabilities.Pending. Options.Memory
// may be nil: nothing is remembered.
type Memory interface {
	// Recall returns what s declared when it last started:
	// {"capabilities":...,"instructions":...}, as Keep was given it.
	Recall(s config.Server) ([]byte, bool)
	// Keep records what s declared.
	Keep(s config.Server, declared []byte)
}

// declared is what a server declared in its initialize or server/discover
// result, as Memory keeps it: its capabilities member, raw, and its
// instructions.
func declared(result []byte) []byte {
	caps, ok := jsonrpc.Member(result, "capabilities")
	if !ok {
		caps = []byte("{}")
	}
	b := append([]byte(`{"capabilities":`), caps...)
	if instructions, ok := jsonrpc.StringMember(result, "instructions"); ok && instructions != "" {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), instructions)
	}
	return append(b, '}')
}

// remember keeps what the child declared, when there is a memory.
func (c *child) remember(result []byte) {
	if m := c.host.settings.memory; m != nil {
		m.Keep(c.server, declared(result))
	}
}

// recalled is what the child declared when it last started, if that is
// remembered.
func (c *child) recalled() ([]byte, bool) {
	if m := c.host.settings.memory; m != nil {
		return m.Recall(c.server)
	}
	return nil, false
}
