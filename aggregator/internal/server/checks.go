package server

import (
	"strconv"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/shape"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// What the aggregator checks of a server's answers and list entries before
// they pass on byte for byte (package shape says what is checked).
//
// A server's message with a member twice in one object is read
// differently by different JSON parsers: JavaScript's, Python's and Go's
// keep the last copy, the aggregator's helpers read the first, and some
// parsers (Rust's serde into a struct) refuse the object. A server could
// so show the client a tool or a task under another server's name. The
// server's connection finds such members (jsonrpc.Options.CheckDuplicates)
// and the aggregator never passes them on:
//
//   - a request of the server is refused (-32600), a notification dropped,
//     each with a warning (invalid, process.go);
//   - an answer to a client's request fails that request with an error
//     naming the server and the member (DuplicateAnswer);
//   - in a list the aggregator fetches (tools, prompts, resources,
//     templates, tasks), only the entries that have one are left out,
//     with a warning; a duplicate elsewhere in the answer refuses it
//     (ListEntries).

// MalformedAnswer is the error that replaces a server's answer a client
// could not read (problem: shape.Answer's).
func (s *Server) MalformedAnswer(problem string) error {
	return s.Errorf("sent a malformed answer (%s): it is not passed on", problem)
}

// DuplicateAnswer is the error that replaces a server's answer with a
// member twice in one object.
func (s *Server) DuplicateAnswer(key string) error {
	return s.Errorf("sent an answer in which the member %q appears twice in one object: clients disagree on which copy counts, so it is not passed on", key)
}

// ListEntries returns the entries of the array field of a server's answer
// to method, the entries with a member twice in one object left out.
func (s *Server) ListEntries(resp *jsonrpc.Message, method, field string) ([][]byte, error) {
	list, ok := jsonrpc.Member(resp.Result, field)
	if !ok {
		return nil, s.Errorf("answered %s without %q", method, field)
	}
	items, err := jsonrpc.Elements(list)
	if err != nil {
		return nil, s.Errorf("answered %s: %q is not an array", method, field)
	}
	if resp.Duplicate == "" {
		return items, nil
	}
	// The rare case: find where the duplicate is.
	rest, _ := jsonrpc.ReplaceMember(resp.Result, field, []byte("[]"))
	if key, dup := jsonrpc.DuplicateMember(rest); dup {
		return nil, s.DuplicateAnswer(key)
	}
	kept := make([][]byte, 0, len(items))
	for i, it := range items {
		if key, dup := jsonrpc.DuplicateMember(it); dup {
			s.set.Log.Warnf("server %q: %s: entry %d left out: its member %q appears twice in one object, and clients disagree on which copy counts", s.key, method, i, key)
			continue
		}
		kept = append(kept, it)
	}
	return kept, nil
}

// appendWellFormed appends to all the entries of items (entries first,
// first+1, ... of the server's list of method) that the MCP schema
// accepts, repaired where what is missing is certain (shape.Repaired);
// each one it refuses is left out. Each entry left out or repaired is
// reported (reportEntry).
func (s *Server) appendWellFormed(all [][]byte, method string, items [][]byte, first int) [][]byte {
	for i, it := range items {
		fixed, repair := shape.Repaired(method, it)
		if repair != "" {
			s.reportEntry(method, it, first+i, repair+" added")
		}
		problem := shape.Entry(method, fixed)
		if problem == "" {
			all = append(all, fixed)
			continue
		}
		s.reportEntry(method, it, first+i, "left out: "+problem+", which clients refuse")
	}
	return all
}

// reportEntry warns, once for as long as the server runs, that the entry
// at index of its list of method was left out or repaired: what says
// which and why.
func (s *Server) reportEntry(method string, entry []byte, index int, what string) {
	which := "entry " + strconv.Itoa(index)
	if name, ok := jsonrpc.StringMember(entry, "name"); ok {
		which = shape.Kind(method) + " " + strconv.Quote(name)
	}
	key := method + "\x00" + which + "\x00" + what
	s.mu.Lock()
	seen := s.reported[key]
	if !seen {
		if s.reported == nil {
			s.reported = make(map[string]bool)
		}
		s.reported[key] = true
	}
	s.mu.Unlock()
	if !seen {
		s.set.Log.Warnf("server %q: %s: %s: %s", s.key, method, which, what)
	}
}
