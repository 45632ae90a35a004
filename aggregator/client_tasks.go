package aggregator

import (
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
	t, unknown := c.host.relay.clientTask(c, id)
	if t == nil {
		return nil, nil, errorLine(m.ID, jsonrpc.CodeInvalidParams, unknown)
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
