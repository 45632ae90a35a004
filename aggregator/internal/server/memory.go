package server

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Memory keeps, from one session to the next, what each server declared
// and listed when it last ran (or that its last start failed), so that a
// later session answers initialize (or server/discover) and its first
// lists at once, exactly, before the server is up: servers start only when
// a request needs them, and a client that lists once never waits on a
// budget for what is known. Settings.Memory may be nil: nothing is
// remembered, and every session starts as a fresh one.
//
// What a server declares and lists may depend on what the client
// declared (the reference "everything" server lists get-roots-list only
// to a client with roots), so it is kept per scope (Plan.Scope): what a
// client that declared otherwise was told is not recalled for this one.
type Memory interface {
	// Recall returns the record Keep was last given for s in scope.
	Recall(s config.Server, scope []byte) ([]byte, bool)
	// Keep records what s declared and listed in scope (a record of this
	// package's: {"capabilities":...,"instructions":...,"tools":[...],
	// "prompts":[...],"resources":[...],"resourceTemplates":[...]}, the
	// entries raw as the server listed them), or {"failed":true}.
	Keep(s config.Server, scope, record []byte)
}

// Remembered is what Memory kept of a server: what it declared and listed
// when it last ran, or, when nothing of an earlier run is kept, that its
// last start failed.
type Remembered struct {
	Failed       bool // its last start failed; nothing else is known
	Caps         capabilities.Server
	Instructions string
	Lists        Lists
	declared     []byte // its capabilities, raw
}

// failedRecord is the record of a server whose start failed.
var failedRecord = []byte(`{"failed":true}`)

// readRecord reads a record Keep was given; false when it is not one (a
// file of an older version, which kept declarations alone, is not one:
// the server is not known).
func readRecord(b []byte) (*Remembered, bool) {
	if failed, _ := jsonrpc.Member(b, "failed"); string(failed) == "true" {
		return &Remembered{Failed: true}, true
	}
	declared, ok := jsonrpc.Member(b, "capabilities")
	if !ok || declared[0] != '{' {
		return nil, false
	}
	r := &Remembered{declared: declared, Caps: capabilities.ParseServer(b)}
	r.Instructions, _ = jsonrpc.StringMember(b, "instructions")
	lists := make(map[string][][]byte, 4)
	for _, field := range []string{"tools", "prompts", "resources", "resourceTemplates"} {
		raw, ok := jsonrpc.Member(b, field)
		if !ok {
			return nil, false
		}
		items, err := jsonrpc.Elements(raw)
		if err != nil {
			return nil, false
		}
		lists[field] = items
	}
	r.Lists.Tools = namedEntries(lists["tools"], func(int) {})
	r.Lists.Prompts = namedEntries(lists["prompts"], func(int) {})
	r.Lists.Resources, r.Lists.ResourceList = resourceIndex(lists["resources"]), lists["resources"]
	r.Lists.Templates = templates(lists["resourceTemplates"])
	return r, true
}

// record is what Keep is given of a server that runs: what it declared
// and its lists, the entries raw.
func record(declared []byte, instructions string, l Lists) []byte {
	b := append([]byte(`{"capabilities":`), declared...)
	if instructions != "" {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), instructions)
	}
	b = appendArray(append(b, `,"tools":`...), len(l.Tools), func(i int) []byte { return l.Tools[i].Raw })
	b = appendArray(append(b, `,"prompts":`...), len(l.Prompts), func(i int) []byte { return l.Prompts[i].Raw })
	b = appendArray(append(b, `,"resources":`...), len(l.ResourceList), func(i int) []byte { return l.ResourceList[i] })
	b = appendArray(append(b, `,"resourceTemplates":`...), len(l.Templates), func(i int) []byte { return l.Templates[i].Raw })
	return append(b, '}')
}

func appendArray(b []byte, n int, item func(int) []byte) []byte {
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, item(i)...)
	}
	return append(b, ']')
}

// Recalled is what Memory kept of the server in scope (the session's,
// Plan.Scope) when the session began, if anything: read once, for the
// session (what the server keeps while it runs is for the next one).
// Before the session began (scope nil) nothing is recalled.
func (s *Server) Recalled(scope []byte) (*Remembered, bool) {
	if scope == nil {
		return nil, false
	}
	s.once.recall.Do(func() {
		if m := s.set.Memory; m != nil {
			if b, ok := m.Recall(s.cfg, scope); ok {
				s.recalled, _ = readRecord(b)
			}
		}
	})
	return s.recalled, s.recalled != nil
}

// remember keeps what the server declared and lists now, once it runs,
// when that differs from what it kept last. One keeps at a time, so that
// an older snapshot never overwrites a newer one.
func (s *Server) remember() {
	m := s.set.Memory
	if m == nil || s.scope == nil {
		return
	}
	s.Recalled(s.scope) // what the session began with is read before it is overwritten
	s.keeping.Lock()
	defer s.keeping.Unlock()
	s.mu.Lock()
	if s.state != Running {
		s.mu.Unlock()
		return
	}
	b := record(s.declared, s.instructions, s.lists)
	s.mu.Unlock()
	if string(b) == string(s.kept) {
		return
	}
	s.kept = b
	m.Keep(s.cfg, s.scope, b)
}

// rememberFailure keeps that the server's start failed, unless what it
// declared and listed in an earlier run is kept: that stays, to be offered
// again (a failure may pass).
func (s *Server) rememberFailure() {
	m := s.set.Memory
	if m == nil || s.scope == nil {
		return
	}
	if r, ok := s.Recalled(s.scope); ok && !r.Failed {
		return
	}
	s.keeping.Lock()
	defer s.keeping.Unlock()
	m.Keep(s.cfg, s.scope, failedRecord)
}
