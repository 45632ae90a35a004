package aggregator

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Tasks (2025-11-25): a request whose params carry "task" makes its
// receiver start a task and answer at once with {"task":{"taskId",...}};
// the requestor then polls with tasks/get, tasks/result, tasks/list and
// tasks/cancel, and may hear notifications/tasks/status. Task ids are the
// receiver's, so two children may both say "task-1": the client sees
// every child's task under an id the aggregator owns, mapped back on the
// way down, wherever a task id travels.
//
// A mapping lasts as long as the child keeps the task: until the task's
// ttl has run out (unless the child listed it in its latest tasks/list:
// it keeps it still), the child answers a tasks/get of it with -32602 (it
// no longer knows it: taskGone), or the child is gone (deadTaskGrace
// later). A child's table holds at most maxTasksPerServer tasks: past it,
// the tasks the child no longer keeps (missing from a whole tasks/list of
// it) are forgotten first; else the oldest finished tasks (then, if need
// be, the oldest running ones), a few at a time, and a later use of one of
// their ids gets an error naming the server and the bound. A tasks/list
// shows every task the child lists, ended ones too, but for this: past the
// bound, it leaves out unknown finished tasks instead of churning ids
// (listedTask).
//
// The task tables are relayTables, whose methods (relay.go) register,
// sweep and forget tasks; this file is the routes and hooks that use them.

// markTerminal records a status the child reported for the task.
func (t *task) markTerminal(status []byte) {
	if isTerminal(status) {
		t.markEnded()
	}
}

// markEnded records that the task has ended, in one of the terminal
// statuses.
func (t *task) markEnded() {
	t.mu.Lock()
	t.terminal = true
	t.mu.Unlock()
}

// isTerminal reports whether a raw status is completed, failed or
// cancelled.
func isTerminal(status []byte) bool {
	switch s, _ := jsonrpc.String(status); s {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

func (t *task) isTerminal() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.terminal
}

// taskCreated is the hook (method.taskCreated) of requests a client may augment
// with a task: a CreateTaskResult gets the aggregator's id in place of the
// child's. It returns nil, leaving the answer as it is, for any other.
func taskCreated(c *call, resp *jsonrpc.Message) []byte {
	if !c.p.augmented || resp.Error != nil {
		return nil
	}
	obj, ok := jsonrpc.Member(resp.Result, "task")
	if !ok {
		return nil // the child ran it as a plain request
	}
	childID, _ := jsonrpc.Member(obj, "taskId")
	t, ok := c.a.relay.registerTask(c.child, childID, obj)
	if !ok {
		return nil
	}
	t.markTerminal(statusOf(obj))
	c.task = t // Answered releases its held statuses after this answer
	return jsonrpc.AppendResult(nil, c.id, setMember(resp.Result, "task", setTaskID(obj, t.id)))
}

// statusOf is a Task object's status.
func statusOf(obj []byte) []byte {
	s, _ := jsonrpc.Member(obj, "status")
	return s
}

// setTaskID returns the object obj with its taskId set to id.
func setTaskID(obj []byte, id string) []byte {
	return setMember(obj, "taskId", jsonrpc.AppendString(nil, id))
}

// routeTask routes tasks/get, tasks/result and tasks/cancel to the child
// running the task, with the child's own id in params.taskId.
func (a *Aggregator) routeTask(_ context.Context, c *call) (target, []byte) {
	taskID, _ := jsonrpc.Member(c.params, "taskId")
	id, ok := jsonrpc.String(taskID)
	if !ok {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+c.method+" needs params.taskId (a string)")
	}
	t, unknown := a.relay.task(id)
	if t == nil {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, unknown)
	}
	params, err := jsonrpc.ReplaceMember(c.params, "taskId", t.childID)
	if err != nil {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	c.task = t
	return to(t.child, params), nil
}

// taskState is the modifyResponse hook of tasks/get and tasks/cancel,
// whose result is a Task: the aggregator's id in place of the child's.
func taskState(c *call, resp *jsonrpc.Message) []byte {
	if resp.Error != nil {
		c.taskRefused(resp.Error)
		return nil
	}
	c.task.markTerminal(statusOf(resp.Result))
	return jsonrpc.AppendResult(nil, c.id, setTaskID(resp.Result, c.task.id))
}

// taskResult is the modifyResponse hook of tasks/result: the task's
// outcome, whose related-task _meta gets the aggregator's id. The task is
// kept: the client may still ask for it, as its server keeps it.
func taskResult(c *call, resp *jsonrpc.Message) []byte {
	if resp.Error != nil {
		c.taskRefused(resp.Error)
		return nil
	}
	c.task.markTerminal([]byte(`"completed"`))          // its result is final: it has ended
	return jsonrpc.AppendResult(nil, c.id, resp.Result) // its related-task mapped in deliver
}

// taskRefused takes in the child's error answer errObj to the call's
// tasks/get, tasks/result or tasks/cancel, which goes to the client as it
// is: the task is forgotten when the answer shows that the child no longer
// keeps it (taskGone). Else a -32602 of tasks/cancel is the answer of a
// child that keeps the task only once it has ended (or of one that does
// not keep it): the task is marked ended, as the first to go when room is
// made, and not to be reported failed if the child dies.
func (c *call) taskRefused(errObj []byte) {
	code, _ := jsonrpc.Member(errObj, "code")
	switch {
	case taskGone(c.method, errObj):
		c.a.relay.forgetTask(c.task)
	case c.method == "tasks/cancel" && string(code) == "-32602":
		c.task.markEnded()
	}
}

// taskGone reports whether errObj, a receiver's error answer to the
// tasks/* request method, shows that the receiver no longer keeps the
// task, so that the relay forgets it (both ways: a child's task, and a
// task the client runs for a child). Only a -32602 of tasks/get does. The
// specification (2025-11-25, Tasks) has -32602 answer a taskId that is
// invalid or not there, but also a tasks/cancel of a task in a terminal
// status (completed, failed or cancelled: the second cancel of a
// cancelled task, a cancel that crossed the task's end), and has
// tasks/result of an ended task answer exactly what its request would
// have, a -32602 of the request included (a failed tools/call). Such a
// task is still kept by its receiver, which lists it in tasks/list and
// answers tasks/get of it, to a requestor talking to it directly as much
// as to the aggregator: forgotten at that answer, it would be listed under
// a new id, and the id the client knows would be unknown. A task the
// receiver has dropped indeed is forgotten all the same after such an
// answer, a little later: at the first tasks/get of it, when its ttl has
// run out (the receiver may drop a task then, ended or not), or, past the
// bound, with the oldest (and, of a child's tasks, first when a whole
// tasks/list lacks it: forgetGone). tasks/cancel deletes nothing either:
// a receiver may delete a cancelled task at any time, and then the task is
// gone as any other.
func taskGone(method string, errObj []byte) bool {
	code, _ := jsonrpc.Member(errObj, "code")
	return method == "tasks/get" && string(code) == "-32602"
}

// taskStatus is a child's notifications/tasks/status: up to the client
// under the aggregator's id. A status of a task the aggregator does not
// know yet is held until the answer that creates the task has gone to the
// client (a child may send it first); past the bound of what is held, and
// for a task that is never created, it is dropped.
func (c *child) taskStatus(params []byte) {
	childID, _ := jsonrpc.Member(params, "taskId")
	key, ok := jsonrpc.String(childID)
	if !ok { // no task's: task ids are strings, and 0 is not ""
		c.host.log.Debugf("server %q: status of task %s, which is not a string, dropped", c.key, childID)
		return
	}
	t, ok := c.tasks.Get(key)
	if !ok {
		if !c.heldStatuses.hold(key, params) {
			c.host.log.Debugf("server %q: status of unknown task %s dropped", c.key, childID)
		}
		return
	}
	c.sendStatus(t, params)
}

func (c *child) sendStatus(t *task, params []byte) {
	t.markTerminal(statusOf(params))
	c.up.Notify("notifications/tasks/status", c.host.relay.relatedToClient(c, setTaskID(params, t.id)))
}

// releaseStatuses sends the statuses held for the task, once the answer
// that created it has gone to the client.
func (c *child) releaseStatuses(t *task) {
	key, _ := jsonrpc.String(t.childID)
	for _, params := range c.heldStatuses.take(key) {
		c.sendStatus(t, params)
	}
}

// failTasks tells the client that every task of a child that died and had
// not ended has failed. The tasks stay known until their ttl, and
// deadTaskGrace at most, so that a later tasks/* on them is answered with
// the child's failure.
func (c *child) failTasks(cause error) {
	up := c.host.client.conn
	if up == nil {
		return
	}
	c.host.relay.forgetLater(c)
	for _, t := range c.tasks.All() {
		if t.isTerminal() {
			continue
		}
		t.markTerminal([]byte(`"failed"`))
		b := jsonrpc.AppendString([]byte(`{"taskId":`), t.id)
		b = append(b, `,"status":"failed","statusMessage":`...)
		b = jsonrpc.AppendString(b, cause.Error())
		if t.createdAt != nil {
			b = append(append(b, `,"createdAt":`...), t.createdAt...)
		}
		b = jsonrpc.AppendString(append(b, `,"lastUpdatedAt":`...), time.Now().UTC().Format(time.RFC3339))
		ttl := t.ttl
		if ttl == nil {
			ttl = []byte("null")
		}
		b = append(append(append(b, `,"ttl":`...), ttl...), '}')
		c.up.Notify("notifications/tasks/status", b)
	}
}

// tasks/list across the servers: one page of each server's tasks at a
// time, under the ids the client knows, and the cursor that walks them.

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
