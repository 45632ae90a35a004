package aggregator

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is tasks/list across the servers: one page of each server's
// tasks at a time, under the ids the client knows, and the cursor that
// walks them.

// listTasks serves tasks/list: one page of one child at a time, in config
// order, under a cursor of the aggregator's that names the child (by its
// key: a reload may add and remove others meanwhile) and its own cursor.
// Children that did not declare tasks.list are left out.
func (a *Aggregator) listTasks(ctx context.Context, c *call) []byte {
	children := a.children()
	key, childCursor, err := parseTaskCursor(c.p.cursor)
	idx := 0
	if err == nil && key != "" {
		idx = slices.IndexFunc(children, func(ch *child) bool { return ch.key == key })
		if idx < 0 {
			err = fmt.Errorf("cursor %s is of server %q, which is no longer configured", c.p.cursor, key)
		}
	}
	if err != nil {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	for ; idx < len(children); idx, childCursor = idx+1, nil {
		ch := children[idx]
		if !ch.running() || !ch.capabilities().TasksList {
			continue
		}
		var params []byte
		pass := ch.listing.at()
		if childCursor != nil {
			params = append(append([]byte(`{"cursor":`), childCursor...), '}')
		} else {
			pass = ch.listing.begin(a.relay.tasks.seq.Load())
		}
		resp, err := ch.Call(ctx, "tasks/list", params)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil && resp.Error != nil {
			err = rawError(resp.Error)
		}
		if err != nil {
			a.log.Warnf("server %q: tasks/list: %v (its tasks left out)", ch.key, err)
			continue
		}
		page, next, err := a.relay.childTaskPage(ch, resp, pass)
		if err != nil {
			a.log.Warnf("server %q: tasks/list: %v (its tasks left out)", ch.key, err)
			continue
		}
		if next == nil && len(page) == 0 {
			continue
		}
		return c.result(taskListResult(children, page, idx, next))
	}
	return c.result([]byte(`{"tasks":[]}`))
}

// childTaskPage maps one page of a child's tasks/list, of its listing pass
// pass, to the aggregator's ids and returns its entries and the child's
// next cursor. The client sees every task the child lists, as directly:
// one the aggregator maps under its id; one it does not (created before
// the client's session, forgotten to make room, or past its ttl) under a
// new id, registered (listedTask). The tasks of the page the aggregator
// maps are marked listed first, so that none of them is taken for one the
// child no longer keeps when room is made for another; an entry whose task
// was forgotten all the same before the page was done (a running task
// makes room) is left out: its id would be unknown already.
func (rt *relayTables) childTaskPage(ch *child, resp *jsonrpc.Message, pass int64) ([][]byte, []byte, error) {
	items, err := ch.ListEntries(resp, "tasks/list", "tasks")
	if err != nil {
		return nil, nil, err
	}
	ts := make([]*task, len(items))
	for i, it := range items {
		if key, ok := taskIDMember(it); ok {
			if t, known := ch.tasks.Get(key); known {
				t.listed.Store(pass)
				ts[i] = t
			}
		}
	}
	next, ok := jsonrpc.Member(resp.Result, "nextCursor")
	if !ok || string(next) == "null" {
		next = nil
		ch.listing.finish(pass) // its last page: the child lists no other task
	}
	for i, it := range items {
		if ts[i] == nil {
			ts[i] = rt.listedTask(ch, it, pass)
		}
		if ts[i] != nil {
			ts[i].markTerminal(statusOf(it))
		}
	}
	var page [][]byte
	for i, t := range ts {
		if t != nil && rt.mapped(t) {
			page = append(page, setTaskID(items[i], t.id))
		}
	}
	return page, next, nil
}

// listedTask registers a task a child lists that the aggregator does not
// map, and returns it; nil when the task is left out. When the child's
// table is full, room is made first from the tasks the child no longer
// keeps (forgetGone); only when there are none, every task in the table is one
// the child still lists, or one created since, and:
//   - a running task still comes in, and the oldest finished task goes
//     (makeRoom), as for a task the client creates;
//   - a finished task is left out. Only here does the bound
//     (maxTasksPerServer) keep a task the child lists from the client: it
//     lists more than the bound, and taking room from the tasks it listed
//     would push them out one listing after another, each coming back
//     under a new id (the client's ids would churn instead of staying).
func (rt *relayTables) listedTask(ch *child, it []byte, pass int64) *task {
	full := ch.tasks.Len() >= maxTasksPerServer
	if full && rt.forgetGone(ch) == 0 && isTerminal(statusOf(it)) {
		return nil
	}
	childID, _ := jsonrpc.Member(it, "taskId")
	t, ok := rt.registerTask(ch, childID, it)
	if !ok {
		return nil
	}
	t.listed.Store(pass)
	return t
}

// taskIDMember returns the taskId of a Task object, decoded: the key of
// the task in its child's table. ok is false when it has none that is a
// string.
func taskIDMember(obj []byte) (string, bool) {
	raw, _ := jsonrpc.Member(obj, "taskId")
	return jsonrpc.String(raw)
}

// mapped reports whether the task is still known under its id.
func (rt *relayTables) mapped(t *task) bool {
	cur, ok := rt.tasks.byID.Get(t.id)
	return ok && cur == t
}

// taskListResult builds the page, with a cursor to go on from child idx of
// children (at its cursor next), or with the child after it, if any
// remains.
func taskListResult(children []*child, page [][]byte, idx int, next []byte) []byte {
	b := listResult("tasks", page)
	if next == nil {
		idx++
		for idx < len(children) && !children[idx].capabilities().TasksList {
			idx++
		}
		if idx >= len(children) {
			return b
		}
	}
	cursor := base64.RawURLEncoding.EncodeToString(append([]byte(strconv.Quote(children[idx].key)+":"), next...))
	b = jsonrpc.AppendString(append(b[:len(b)-1], `,"nextCursor":`...), cursor)
	return append(b, '}')
}

// parseTaskCursor reads a cursor of taskListResult: the child's key and
// its cursor (nil: its first page). No cursor is the first child's start
// (key "").
func parseTaskCursor(raw []byte) (string, []byte, error) {
	if raw == nil || string(raw) == "null" {
		return "", nil, nil
	}
	s, ok := jsonrpc.String(raw)
	dec, err := base64.RawURLEncoding.DecodeString(s)
	quoted, qerr := strconv.QuotedPrefix(string(dec))
	key, _ := strconv.Unquote(quoted)
	rest, found := strings.CutPrefix(string(dec)[len(quoted):], ":")
	if !ok || err != nil || qerr != nil || !found || key == "" || rest != "" && !jsonrpc.Valid([]byte(rest)) {
		return "", nil, fmt.Errorf("unknown cursor %s", raw)
	}
	if rest == "" {
		return key, nil, nil
	}
	return key, []byte(rest), nil
}
