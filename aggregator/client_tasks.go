package aggregator

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Client-side tasks: a child may ask the client to run its sampling or
// elicitation as a task (the client's tasks.requests capability) and then
// poll it with tasks/* requests to the client. The client's task ids are
// unique already (one client, one namespace), so they pass through
// unchanged, as on a direct connection; isolation is by ownership: a
// child's tasks/get, tasks/result, tasks/cancel and tasks/list reach only
// the client tasks created for that child's own requests, and the client's
// statuses of a task go only to its owner.

// The tasks the client runs for children are held in a taskIndex
// (relayTables.clientTasks), by the client's id: at most
// maxTasksPerServer for one child (makeClientRoom).

// registerClientTask records that the client's task clientID runs for
// child c. A task id the client gave another child already stays that
// child's.
func (rt *relayTables) registerClientTask(c *child, clientID, taskObj []byte) *clientTask {
	key, ok := jsonrpc.String(clientID)
	if !ok {
		return nil
	}
	ttl, _ := jsonrpc.Member(taskObj, "ttl")
	t := &clientTask{taskEntry{id: key, child: c, seq: rt.tasks.seq.Add(1), expires: ttlExpiry(ttl)}}
	if !rt.clientTasks.byID.Add(key, t) {
		t, _ = rt.clientTasks.byID.Get(key)
		return t
	}
	if c.clientTasks.Add(1) > int64(maxTasksPerServer) {
		rt.makeClientRoom(c)
	}
	rt.maybeSweepTasks()
	return t
}

// makeClientRoom forgets the oldest eighth of the tasks the client runs
// for child c, and remembers their ids for the error a later use gets.
func (rt *relayTables) makeClientRoom(c *child) {
	var ts []*clientTask
	for _, t := range rt.clientTasks.byID.All() {
		if t.child == c {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(x, y *clientTask) int { return cmp.Compare(x.seq, y.seq) })
	for _, t := range ts[:max(len(ts)/8, 1)] {
		rt.forgetClientTask(t)
		rt.clientTasks.evicted.add(t.id, c.key)
	}
}

// forgetClientTask removes the task from the table.
func (rt *relayTables) forgetClientTask(t *clientTask) {
	if rt.clientTasks.byID.Remove(t.id, t) {
		t.child.clientTasks.Add(-1)
	}
}

// sweepClientTasks forgets the client's tasks whose ttl has run out, and
// those of children that are gone.
func (rt *relayTables) sweepClientTasks(now time.Time) {
	for _, t := range rt.clientTasks.byID.All() {
		if t.expired(now) || t.child.dropped() {
			rt.forgetClientTask(t)
		}
	}
}

// childTaskRequest checks a child's tasks/get, tasks/result or
// tasks/cancel for the client: the task must be one the client runs for
// this child. It returns the params (unchanged), the task, or the error
// line to answer the child with.
func (c *child) childTaskRequest(m *jsonrpc.Message) ([]byte, *clientTask, []byte) {
	taskID, _ := jsonrpc.Member(m.Params, "taskId")
	id, isString := jsonrpc.String(taskID)
	if !isString {
		return nil, nil, errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+m.Method+" needs params.taskId (a string)")
	}
	t, ok := c.host.relay.clientTasks.byID.Get(id)
	if !ok || t.child != c {
		msg := "Invalid params: unknown task " + strconv.Quote(id)
		if key, evicted := c.host.relay.clientTasks.evicted.server(id); evicted && key == c.key {
			msg += fmt.Sprintf(": mcp-simple-aggregator keeps at most %d of this server's client tasks and forgot its oldest to make room", maxTasksPerServer)
		}
		return nil, nil, errorLine(m.ID, jsonrpc.CodeInvalidParams, msg)
	}
	return m.Params, t, nil
}

// clientAnswer is the client's answer to a child's request, for the child:
// a task the client created for it is recorded as the child's, a tasks/list
// keeps only the child's own tasks, and a related-task of the child's own
// tasks gets the child's id. It returns the result to send (the client's
// when there is nothing to rewrite).
func (r *childRequest) clientAnswer(result []byte) []byte {
	rt := r.c.host.relay
	switch {
	case r.method == "tasks/list":
		return rt.childsClientTasks(r.c, result)
	case r.augmented:
		if obj, ok := jsonrpc.Member(result, "task"); ok { // else run as a plain request
			clientID, _ := jsonrpc.Member(obj, "taskId")
			rt.registerClientTask(r.c, clientID, obj)
		}
	}
	return rt.relatedToChild(r.c, result)
}

// relatedToChild returns msg with the aggregator's id of one of child c's
// tasks in _meta's related-task replaced by c's own (the client's answer
// to a request the child tied to its task).
func (rt *relayTables) relatedToChild(c *child, msg []byte) []byte {
	return rewriteRelatedRaw(msg, func(id []byte) ([]byte, bool) {
		key, isString := jsonrpc.String(id)
		if t, ok := rt.tasks.byID.Get(key); ok && isString && t.child == c {
			return t.childID, true
		}
		return nil, false
	}, false)
}

// childsClientTasks keeps, of the client's tasks/list result, the tasks it
// runs for child c, as the client wrote them; the client's cursor passes
// as it is.
func (rt *relayTables) childsClientTasks(c *child, result []byte) []byte {
	list, _ := jsonrpc.Member(result, "tasks")
	items, _ := jsonrpc.Elements(list)
	var kept [][]byte
	for _, it := range items {
		clientID, _ := jsonrpc.Member(it, "taskId")
		key, isString := jsonrpc.String(clientID)
		if t, ok := rt.clientTasks.byID.Get(key); ok && isString && t.child == c {
			kept = append(kept, it)
		}
	}
	return setMember(result, "tasks", jsonArray(kept))
}

// clientTaskStatus is the client's notifications/tasks/status of a task it
// runs for a child: to that child only, as it is.
func (rt *relayTables) clientTaskStatus(params []byte) {
	clientID, _ := jsonrpc.Member(params, "taskId")
	key, isString := jsonrpc.String(clientID)
	t, ok := rt.clientTasks.byID.Get(key)
	if !ok || !isString {
		rt.log.Debugf("client status of unknown task %s dropped", clientID)
		return
	}
	t.child.Conn().Notify("notifications/tasks/status", params)
}
