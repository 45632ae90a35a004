package main

import (
	"context"
)

// Which method answers each request, by the flags and capabilities the
// server runs with.

// handleRequest answers one request; initialized tells whether
// notifications/initialized had arrived when the request was read.
func (s *server) handleRequest(ctx context.Context, m *message, initialized bool) ([]byte, *rpcError) {
	switch m.Method {
	case "initialize":
		return s.initialize(ctx, m.Params)
	case "ping":
		return []byte("{}"), nil
	case "tools/list":
		if s.cfg.noise { // a non-JSON line mid-session, right before the first tools/list answer
			defer s.listNoise.Do(func() { s.out.writeLine([]byte(noiseLine)) })
		}
		if !initialized {
			s.logf("tools/list before notifications/initialized")
			return nil, &rpcError{code: -32002, message: "not initialized"}
		}
		return s.listTools(m.Params)
	case "tools/call":
		return s.callTool(ctx, m.ID, m.Params)
	}
	if run := taskMethods[m.Method]; run != nil && s.cfg.tasks {
		return run(s, ctx, m.Params)
	}
	if s.cfg.caps["resources"] {
		switch m.Method {
		case "resources/list":
			return s.listResources(m.Params)
		case "resources/templates/list":
			return s.listResourceTemplates(m.Params)
		case "resources/read":
			return s.readResource(m.Params)
		case "resources/subscribe":
			return s.subscribe(m.Params, true)
		case "resources/unsubscribe":
			return s.subscribe(m.Params, false)
		}
	}
	if s.cfg.caps["prompts"] {
		switch m.Method {
		case "prompts/list":
			return s.listPrompts(m.Params)
		case "prompts/get":
			return s.getPrompt(m.Params)
		}
	}
	if s.cfg.caps["completions"] && m.Method == "completion/complete" {
		return s.complete(m.Params)
	}
	if s.cfg.caps["logging"] && m.Method == "logging/setLevel" {
		return s.setLevel(m.Params)
	}
	return nil, &rpcError{code: -32601, message: "Method not found: " + m.Method}
}
