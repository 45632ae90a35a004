package aggregator

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is what the session makes of what each server declared and
// listed when it last ran (Options.Memory), and of a server it knows
// nothing of.
//
// A server is, to the session's start, one of three:
//
//   - remembered: what it declared and listed when it last ran stands in
//     for it until it is up (standIn): initialize and server/discover say
//     what it declared, the lists hold its entries, a call of one of them
//     waits for it as any call does. Nothing waits for it.
//   - unknown: nothing is remembered of it (a new install, a changed
//     entry, an empty cache, --no-memory). A legacy client's initialize
//     starts it and waits for it, within the client's first-list budget
//     (awaitDeclarations), so that the answer is exact; one still unknown
//     when the budget ends is offered as any server may be
//     (capabilities.Pending), and the log says so.
//   - failed last time, with nothing before remembered: offered as
//     nothing, started with the first list, which waits for it as for an
//     unknown one.
//
// When a remembered server comes up, what it lists now replaces what was
// remembered; what changed is told to the client (list_changed) and in
// one log line (changedSince).

// Memory keeps what each server declared and listed when it last ran,
// for the next session (internal/server's memory.go says what is kept).
// Options.Memory may be nil: nothing is remembered, and every start is a
// fresh one.
type Memory = server.Memory

// recalled is what the child declared and listed when it last ran, for a
// client that declared what this one did (clientSession.memoryScope); nothing
// before the session began.
func (c *child) recalled() (*server.Remembered, bool) {
	return c.Recalled(c.host.client.memoryScope())
}

// standIn is what the child declared and listed when it last ran, while
// that stands in for it: it is not up yet (st is its status), and a run of
// it is remembered.
func (c *child) standIn(st server.Status) (*server.Remembered, bool) {
	if st.State != server.Starting {
		return nil, false
	}
	r, ok := c.recalled()
	if !ok || r.Failed {
		return nil, false
	}
	return r, true
}

// unknown reports whether nothing is known of the child: it has not
// declared anything in this session, is not dropped, and nothing is
// remembered of it, not even a failure.
func (c *child) unknown() bool {
	st := c.Status()
	if st.Version != "" || st.Dropped() {
		return false
	}
	_, recalled := c.recalled()
	return !recalled
}

// changedSince compares what the child lists now that it is up with what
// it listed when it last ran, and returns the list_changed notifications
// of the lists that differ; what differs is logged in one line, naming
// each tool added, removed, or whose description or input schema changed
// (a tool that changes its description after a user trusted it is how a
// server turns hostile).
func (c *child) changedSince(r *server.Remembered) []string {
	now := c.Status()
	var changed, said []string
	if !sameEntries(r.Lists.Tools, now.Lists.Tools) {
		changed = append(changed, server.Kinds[server.KindTools].Changed)
		said = append(said, toolChanges(r.Lists.Tools, now.Lists.Tools)...)
	}
	if !sameEntries(r.Lists.Prompts, now.Lists.Prompts) {
		changed = append(changed, server.Kinds[server.KindPrompts].Changed)
		what := namesChanged(r.Lists.Prompts, now.Lists.Prompts)
		if what == "" {
			what = "changed"
		}
		said = append(said, "prompts "+what)
	}
	if !sameRaw(r.Lists.ResourceList, now.Lists.ResourceList) || !sameTemplates(r.Lists.Templates, now.Lists.Templates) {
		changed = append(changed, server.Kinds[server.KindResources].Changed)
		said = append(said, "resources or resource templates")
	}
	if len(said) > 0 {
		c.host.log.Warnf("server %q changed since it was last seen: %s; the client is told its lists changed", c.key, strings.Join(said, "; "))
	}
	return changed
}

// toolChanges says which tools were added, removed, or changed their
// description or input schema (or anything else), by name.
func toolChanges(was, now []server.Entry) []string {
	var said []string
	if names := namesChanged(was, now); names != "" {
		said = append(said, "tools "+names)
	}
	var described, schema, other []string
	for _, n := range now {
		i := slices.IndexFunc(was, func(w server.Entry) bool { return w.Name == n.Name })
		if i < 0 || bytes.Equal(was[i].Raw, n.Raw) {
			continue
		}
		d := !sameMember(was[i].Raw, n.Raw, "description")
		s := !sameMember(was[i].Raw, n.Raw, "inputSchema")
		if d {
			described = append(described, n.Name)
		}
		if s {
			schema = append(schema, n.Name)
		}
		if !d && !s {
			other = append(other, n.Name)
		}
	}
	for _, part := range []struct {
		what  string
		names []string
	}{{"description changed", described}, {"input schema changed", schema}, {"changed otherwise", other}} {
		if len(part.names) > 0 {
			said = append(said, fmt.Sprintf("tools whose %s: %s", part.what, quoted(part.names)))
		}
	}
	if len(said) == 0 {
		said = append(said, "tools listed in another order")
	}
	return said
}

// namesChanged says which names were added and removed; "" when none
// were.
func namesChanged(was, now []server.Entry) string {
	has := func(es []server.Entry, name string) bool {
		return slices.ContainsFunc(es, func(e server.Entry) bool { return e.Name == name })
	}
	var added, removed []string
	for _, n := range now {
		if !has(was, n.Name) {
			added = append(added, n.Name)
		}
	}
	for _, w := range was {
		if !has(now, w.Name) {
			removed = append(removed, w.Name)
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added: "+quoted(added))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed: "+quoted(removed))
	}
	return strings.Join(parts, ", ")
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func sameEntries(a, b []server.Entry) bool {
	return slices.EqualFunc(a, b, func(x, y server.Entry) bool { return bytes.Equal(x.Raw, y.Raw) })
}

func sameRaw(a, b [][]byte) bool { return slices.EqualFunc(a, b, bytes.Equal) }

func sameTemplates(a, b []server.Template) bool {
	return slices.EqualFunc(a, b, func(x, y server.Template) bool { return bytes.Equal(x.Raw, y.Raw) })
}

// sameMember reports whether two entries have the same member key, byte
// for byte (or both none).
func sameMember(a, b []byte, key string) bool {
	x, okA := jsonrpc.Member(a, key)
	y, okB := jsonrpc.Member(b, key)
	return okA == okB && bytes.Equal(x, y)
}
