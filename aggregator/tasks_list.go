package aggregator

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// listTasks serves tasks/list: one page of one child at a time, in config
// order, under a cursor of the aggregator's that names the child and its
// own cursor. Children that did not declare tasks.list are left out.
func (a *Aggregator) listTasks(ctx context.Context, c *call) []byte {
	idx, childCursor, err := parseTaskCursor(c.p.cursor)
	if err != nil {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	for ; idx < len(a.children); idx, childCursor = idx+1, nil {
		ch := a.children[idx]
		if !ch.running() || !ch.capabilities().tasksList {
			continue
		}
		var params []byte
		if childCursor != nil {
			params = append(append([]byte(`{"cursor":`), childCursor...), '}')
		}
		resp, err := ch.call(ctx, "tasks/list", params)
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
		page, next, err := a.childTaskPage(ch, resp)
		if err != nil {
			a.log.Warnf("server %q: tasks/list: %v (its tasks left out)", ch.key, err)
			continue
		}
		if next == nil && len(page) == 0 {
			continue
		}
		return c.result(a.taskListResult(page, idx, next))
	}
	return c.result([]byte(`{"tasks":[]}`))
}

// childTaskPage maps one page of a child's tasks/list to the aggregator's
// ids and returns its entries and the child's next cursor. A task the
// aggregator does not know (one created before a restart of the client's
// session, or forgotten to make room) is registered: the child keeps it,
// so the client can use it.
func (a *Aggregator) childTaskPage(ch *child, resp *jsonrpc.Message) ([][]byte, []byte, error) {
	items, err := ch.listEntries(resp, "tasks/list", "tasks")
	if err != nil {
		return nil, nil, err
	}
	var page [][]byte
	for _, it := range items {
		childID, _ := jsonrpc.Member(it, "taskId")
		key, _ := jsonrpc.String(childID)
		t, known := ch.tasks.get(key)
		if !known {
			t, known = a.registerTask(ch, childID, it)
		}
		if known {
			t.markTerminal(statusOf(it))
			page = append(page, setTaskID(it, t.id))
		}
	}
	next, ok := jsonrpc.Member(resp.Result, "nextCursor")
	if !ok || string(next) == "null" {
		next = nil
	}
	return page, next, nil
}

// taskListResult builds the page, with a cursor to go on from child idx
// (at its cursor next), or with the child after it, if any remains.
func (a *Aggregator) taskListResult(page [][]byte, idx int, next []byte) []byte {
	b := listResult("tasks", page)
	if next == nil {
		idx++
		for idx < len(a.children) && !a.children[idx].capabilities().tasksList {
			idx++
		}
		if idx >= len(a.children) {
			return b
		}
	}
	cursor := base64.RawURLEncoding.EncodeToString(append([]byte(strconv.Itoa(idx)+":"), next...))
	b = jsonrpc.AppendString(append(b[:len(b)-1], `,"nextCursor":`...), cursor)
	return append(b, '}')
}

// parseTaskCursor reads a cursor of taskListResult: the child's index and
// its cursor (nil: its first page). No cursor is the first child's start.
func parseTaskCursor(raw []byte) (int, []byte, error) {
	if raw == nil || string(raw) == "null" {
		return 0, nil, nil
	}
	s, ok := jsonrpc.String(raw)
	dec, err := base64.RawURLEncoding.DecodeString(s)
	idx, rest, found := strings.Cut(string(dec), ":")
	n, convErr := strconv.Atoi(idx)
	if !ok || err != nil || !found || convErr != nil || n < 0 || rest != "" && !jsonrpc.Valid([]byte(rest)) {
		return 0, nil, fmt.Errorf("unknown cursor %s", raw)
	}
	if rest == "" {
		return n, nil, nil
	}
	return n, []byte(rest), nil
}
