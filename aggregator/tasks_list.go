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
			pass = ch.listing.begin(a.relay.lastTask())
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

// taskIDMember returns the taskId of a Task object, decoded: the key of
// the task in its child's table. ok is false when it has none that is a
// string.
func taskIDMember(obj []byte) (string, bool) {
	raw, _ := jsonrpc.Member(obj, "taskId")
	return jsonrpc.String(raw)
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
