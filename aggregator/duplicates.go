package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A server's message with a member twice in one object is read
// differently by different JSON parsers: JavaScript's, Python's and Go's
// keep the last copy, the aggregator's helpers read the first, and some
// parsers (Rust's serde into a struct) refuse the object. A server could
// so show the client a tool or a task under another server's name. The
// server's connection finds such members (jsonrpc.Options.CheckDuplicates)
// and the aggregator never passes them on:
//
//   - a request of the server is refused (-32600), a notification dropped,
//     each with a warning (child.invalid);
//   - an answer to a client's request fails that request with an error
//     naming the server and the member (duplicateAnswer);
//   - in a list the aggregator fetches (tools, prompts, resources,
//     templates, tasks), only the entries that have one are left out,
//     with a warning; a duplicate elsewhere in the answer refuses it
//     (listEntries).

// duplicateAnswer is the error that replaces a child's answer with a
// member twice in one object.
func (c *child) duplicateAnswer(key string) error {
	return c.errorf("sent an answer in which the member %q appears twice in one object: clients disagree on which copy counts, so it is not passed on", key)
}

// listEntries returns the entries of the array field of a child's answer
// to method, the entries with a member twice in one object left out.
func (c *child) listEntries(resp *jsonrpc.Message, method, field string) ([][]byte, error) {
	list, ok := jsonrpc.Member(resp.Result, field)
	if !ok {
		return nil, c.errorf("answered %s without %q", method, field)
	}
	items, err := jsonrpc.Elements(list)
	if err != nil {
		return nil, c.errorf("answered %s: %q is not an array", method, field)
	}
	if resp.Duplicate == "" {
		return items, nil
	}
	// The rare case: find where the duplicate is.
	rest, _ := jsonrpc.ReplaceMember(resp.Result, field, []byte("[]"))
	if key, dup := jsonrpc.DuplicateMember(rest); dup {
		return nil, c.duplicateAnswer(key)
	}
	kept := make([][]byte, 0, len(items))
	for i, it := range items {
		if key, dup := jsonrpc.DuplicateMember(it); dup {
			c.host.log.Warnf("server %q: %s: entry %d left out: its member %q appears twice in one object, and clients disagree on which copy counts", c.key, method, i, key)
			continue
		}
		kept = append(kept, it)
	}
	return kept, nil
}
