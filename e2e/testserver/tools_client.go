package main

import (
	"time"
)

// The builtin tools that send requests to the client (sampling,
// elicitation, roots, ping, and a sampling request cancelled) and answer
// with what it said (client.go sends and awaits them).

// askClient sends a request to the client and turns its answer into a tool
// result: the raw result as text, or the raw error as text with isError.
func askClient(s *server, c *toolCall, method string, params []byte) ([]byte, *rpcError) {
	id, ch := s.sendRequest(method, params)
	m := s.await(c.ctx, id, ch)
	if m == nil {
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		return textResult(string(m.Error), true), nil
	}
	return textResult(string(m.Result), false), nil
}

func samplingParams(s *server, progress bool) []byte {
	p := []byte(`{"messages":[{"role":"user","content":{"type":"text","text":`)
	p = append(p, jsonString("hello from "+s.cfg.name)...)
	p = append(p, `}}],"maxTokens":100`...)
	if progress {
		p = append(p, `,"_meta":{"progressToken":"sample-tok"}`...)
	}
	return append(p, '}')
}

func toolSample(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "sampling/createMessage", samplingParams(s, c.flag("progress")))
}

func toolElicit(s *server, c *toolCall) ([]byte, *rpcError) {
	p := []byte(`{"message":"please fill the form","requestedSchema":{"type":"object",` +
		`"properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}}`)
	return askClient(s, c, "elicitation/create", p)
}

func toolRoots(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "roots/list", nil)
}

func toolPingClient(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "ping", nil)
}

func toolCancelClient(s *server, c *toolCall) ([]byte, *rpcError) {
	id, _ := s.sendRequest("sampling/createMessage", samplingParams(s, false))
	t := time.NewTimer(time.Duration(c.num("ms", 50)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
	s.forget(id)
	s.sendCancelled(id, "changed my mind")
	if c.ctx.Err() != nil {
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
	return textResult("cancelled sampling", false), nil
}
