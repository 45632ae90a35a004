package aggregator

import (
	"bytes"
	"strconv"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Client-side tasks: a child may ask the client to run its sampling or
// elicitation as a task (the client's tasks.requests capability) and then
// poll it with tasks/* requests to the client. The child sees each such
// task under an id of the aggregator's, which only that child can use; the
// client's own ids never reach a child.

// clientTask is a task the client runs for a child.
type clientTask struct {
	id       string // the aggregator's id, shown to the child
	child    *child
	clientID []byte // the client's id, as it wrote it
	expires  time.Time
}

// clientTaskTable holds the tasks the client runs for children: by the id
// the children know, and by the client's id.
type clientTaskTable struct {
	byID       idTable[*clientTask]
	byClientID idTable[*clientTask]
}

// registerClientTask maps the client's task to an id for child c.
func (a *Aggregator) registerClientTask(c *child, clientID, taskObj []byte) *clientTask {
	key, ok := jsonrpc.String(clientID)
	if !ok {
		return nil
	}
	if t, ok := a.clientTasks.byClientID.get(key); ok {
		return t
	}
	t := &clientTask{id: "mcp-simple-aggregator-task-" + strconv.FormatInt(a.tasks.seq.Add(1), 10), child: c, clientID: bytes.Clone(clientID)}
	ttl, _ := jsonrpc.Member(taskObj, "ttl")
	if ms, err := strconv.ParseFloat(string(ttl), 64); err == nil && ms >= 0 {
		t.expires = time.Now().Add(time.Duration(ms * float64(time.Millisecond)))
	}
	if !a.clientTasks.byClientID.add(key, t) {
		t, _ = a.clientTasks.byClientID.get(key)
		return t
	}
	a.clientTasks.byID.add(t.id, t)
	a.maybeSweepTasks()
	return t
}

// forgetClientTask removes the task from both tables.
func (a *Aggregator) forgetClientTask(t *clientTask) {
	a.clientTasks.byID.remove(t.id, t)
	if key, ok := jsonrpc.String(t.clientID); ok {
		a.clientTasks.byClientID.remove(key, t)
	}
}

// sweepClientTasks forgets the client's tasks whose ttl has run out, and
// those of children that are gone.
func (a *Aggregator) sweepClientTasks(now time.Time) {
	for _, t := range a.clientTasks.byID.all() {
		if !t.expires.IsZero() && now.After(t.expires) || t.child.dropped() {
			a.forgetClientTask(t)
		}
	}
}

// childTaskRequest prepares a child's tasks/get, tasks/result or
// tasks/cancel for the client: the task must be one the client runs for
// this child, and goes under the client's id. It returns the params, the
// task, or the error line to answer the child with.
func (c *child) childTaskRequest(m *jsonrpc.Message) ([]byte, *clientTask, []byte) {
	taskID, _ := jsonrpc.Member(m.Params, "taskId")
	id, _ := jsonrpc.String(taskID)
	t, ok := c.a.clientTasks.byID.get(id)
	if !ok || t.child != c {
		return nil, nil, errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: unknown task "+strconv.Quote(id))
	}
	return setMember(m.Params, "taskId", t.clientID), t, nil
}

// clientAnswer rewrites the client's answer to a child's request for the
// child: the client's task ids become the child's. It returns the result
// to send (the client's when there is nothing to rewrite).
func (r *childRequest) clientAnswer(result []byte) []byte {
	a := r.c.a
	switch {
	case r.task != nil && r.method == "tasks/result":
		a.forgetClientTask(r.task)
		return setRelated(result, r.task.clientID, r.task.id)
	case r.task != nil: // tasks/get, tasks/cancel
		return setTaskID(result, r.task.id)
	case r.method == "tasks/list":
		return a.childsClientTasks(r.c, result)
	case r.augmented:
		obj, ok := jsonrpc.Member(result, "task")
		if !ok {
			break // the client ran it as a plain request
		}
		clientID, _ := jsonrpc.Member(obj, "taskId")
		if t := a.registerClientTask(r.c, clientID, obj); t != nil {
			return setMember(result, "task", setTaskID(obj, t.id))
		}
	}
	return a.relatedToChild(r.c, result)
}

// relatedToChild returns msg with the aggregator's id of one of child c's
// tasks in _meta's related-task replaced by c's own (the client's answer
// to a request the child tied to its task).
func (a *Aggregator) relatedToChild(c *child, msg []byte) []byte {
	return rewriteRelatedRaw(msg, func(id []byte) ([]byte, bool) {
		key, _ := jsonrpc.String(id)
		if t, ok := a.tasks.byID.get(key); ok && t.child == c {
			return t.childID, true
		}
		return nil, false
	}, false)
}

// setRelated replaces the related-task id in msg's _meta when it is from.
func setRelated(msg, from []byte, to string) []byte {
	return rewriteRelated(msg, func(id []byte) (string, bool) {
		a, _ := jsonrpc.String(id)
		b, _ := jsonrpc.String(from)
		return to, a == b
	})
}

// childsClientTasks keeps, of the client's tasks/list result, the tasks it
// runs for child c, under c's ids; the client's cursor passes as it is.
func (a *Aggregator) childsClientTasks(c *child, result []byte) []byte {
	list, _ := jsonrpc.Member(result, "tasks")
	items, _ := jsonrpc.Elements(list)
	var kept [][]byte
	for _, it := range items {
		clientID, _ := jsonrpc.Member(it, "taskId")
		key, _ := jsonrpc.String(clientID)
		if t, ok := a.clientTasks.byClientID.get(key); ok && t.child == c {
			kept = append(kept, setTaskID(it, t.id))
		}
	}
	return setMember(result, "tasks", jsonArray(kept))
}

// clientTaskStatus is the client's notifications/tasks/status of a task it
// runs for a child: to that child, under the child's id.
func (a *Aggregator) clientTaskStatus(params []byte) {
	clientID, _ := jsonrpc.Member(params, "taskId")
	key, _ := jsonrpc.String(clientID)
	t, ok := a.clientTasks.byClientID.get(key)
	if !ok {
		a.log.Debugf("client status of unknown task %s dropped", clientID)
		return
	}
	t.child.conn.Notify("notifications/tasks/status", setTaskID(params, t.id))
}
