package aggregator

import "github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"

// This file names Options.Memory: what each server declared when it last
// opened its session, kept for later sessions.

// Memory keeps what each server declared when it last opened its session,
// so that a later session's initialize (or server/discover) answer can say
// it without starting the server: servers start only when a request needs
// them (startup.go), yet the client learns their capabilities (extensions,
// tasks, keys not invented yet) and instructions as from a direct
// connection. A server never seen gets capabilities.Pending. Options.Memory
// may be nil: nothing is remembered.
type Memory = server.Memory
