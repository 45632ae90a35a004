package main

import (
	"context"
	"encoding/json"
)

// A tools/call: its params read once into a toolCall, with typed access to
// the arguments, and run by its tool, or as a task with -tasks (tasks.go).

// toolCall is one tools/call being served.
type toolCall struct {
	ctx  context.Context
	id   json.RawMessage            // the client's request id, raw
	name string                     // tool name
	args json.RawMessage            // raw "arguments" bytes ("{}" when absent)
	argm map[string]json.RawMessage // arguments by key
	meta map[string]json.RawMessage // params._meta by key
}

func (c *toolCall) str(key, def string) string {
	var v string
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return def
}

func (c *toolCall) num(key string, def int64) int64 {
	var v float64
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return int64(v)
	}
	return def
}

func (c *toolCall) flag(key string) bool {
	var v bool
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return false
}

func (s *server) callTool(ctx context.Context, id, params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
		Task      json.RawMessage            `json:"task"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{code: -32602, message: "invalid tools/call params: " + err.Error()}
	}
	run := s.lookupTool(p.Name)
	if run == nil {
		return nil, &rpcError{code: -32602, message: "Unknown tool: " + p.Name}
	}
	c := &toolCall{ctx: ctx, id: id, name: p.Name, args: p.Arguments, meta: p.Meta}
	if len(c.args) == 0 || string(c.args) == "null" {
		c.args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(c.args, &c.argm); err != nil {
		return nil, &rpcError{code: -32602, message: "arguments must be an object: " + err.Error()}
	}
	if s.cfg.tasks && len(p.Task) > 0 && string(p.Task) != "null" {
		return s.startTask(c, run, p.Task)
	}
	return run(s, c)
}
