package server

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Memory keeps what each server declared when it last opened its session,
// so that a later session's initialize (or server/discover) answer can say
// it without starting the server: servers start only when a request needs
// them (the session's startup.go), yet the client learns their capabilities (extensions,
// tasks, keys not invented yet) and instructions as from a direct
// connection. A server never seen gets capabilities.Pending. Settings.Memory
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

// remember keeps what the server declared, when there is a memory.
func (s *Server) remember(result []byte) {
	if m := s.set.Memory; m != nil {
		m.Keep(s.cfg, declared(result))
	}
}

// Recalled is what the server declared when it last started, if that is
// remembered.
func (s *Server) Recalled() ([]byte, bool) {
	if m := s.set.Memory; m != nil {
		return m.Recall(s.cfg)
	}
	return nil, false
}
