package aggregator

import (
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the relay's tables (relayTables): what ties ids across the
// client and the servers besides a call's own id (progress tokens, the
// servers' tasks, the client's tasks run for servers), with the one hook
// through which a server's message reaches the task tables (tiesToClient).
// What the task tables hold is tasks_state.go; the paths that use them are
// route_server.go (progress), client_methods.go (the client's progress and task
// statuses), serve.go (shutdown), tasks.go, tasks_list.go, tasks_room.go
// and client_tasks.go.

// relayTables are the tables that tie ids across the client and the
// servers, besides a call's own id: the progress tokens of servers'
// requests handed to the client, the servers' tasks under the ids the
// client knows, and the client's tasks run for servers. Their methods are
// in route_server.go (progress), tasks.go, tasks_list.go, tasks_room.go
// and client_tasks.go. The Aggregator and each child share them.
type relayTables struct {
	log         *Logger
	progress    inflight.Table[progressRoute] // progress tokens handed to the client, by token
	tokens      atomic.Int64                  // the last progress token number handed out
	tasks       taskTable                     // the children's tasks, by the ids the client knows
	clientTasks taskIndex[*clientTask]        // the client's tasks for children, by the ids they know (client_tasks.go)
}

// tiesToClient returns msg, a server's params or result on its way to the
// client, with its related-task tie told as the client may see it
// (relatedToClient, below): the task hook of every message a server
// sends up. A message that carries no tie, nearly every one, passes as it
// is, and no task code runs for it.
func (rt *relayTables) tiesToClient(c *child, msg []byte) []byte {
	if !eras.TiedToTask(msg) {
		return msg
	}
	return rt.relatedToClient(c, msg)
}

// relatedToClient returns msg (params or a result) with the child's task
// id in _meta's related-task replaced by the aggregator's. A related-task
// naming a task that is not one of the child's is taken out: a server
// speaks only for its own tasks ("A's deploy needs your password" from
// server B must not reach the client tied to A's task).
func (rt *relayTables) relatedToClient(c *child, msg []byte) []byte {
	return rewriteRelatedRaw(msg, func(id []byte) ([]byte, bool) {
		key, isString := jsonrpc.String(id)
		if t, ok := c.tasks.Get(key); ok && isString {
			return jsonrpc.AppendString(nil, t.id), true
		}
		rt.log.Debugf("server %q: related-task %s is none of its tasks; its tie taken out", c.key, id)
		return nil, false
	}, true)
}

// rewriteRelatedRaw replaces _meta[relatedTask].taskId in msg with the id
// (raw JSON) that ours maps it to; an id ours does not map is left as it
// is, or, with untie, taken out with its related-task.
func rewriteRelatedRaw(msg []byte, ours func(id []byte) ([]byte, bool), untie bool) []byte {
	return eras.EditMeta(msg, func(meta []byte) []byte {
		rel, ok := jsonrpc.Member(meta, relatedTask)
		if !ok {
			return nil
		}
		id, _ := jsonrpc.Member(rel, "taskId")
		mapped, ok := ours(id)
		if !ok && untie {
			return eras.RemoveMembers(meta, func(k string) bool { return k == relatedTask })
		}
		if !ok {
			return nil
		}
		return setMember(meta, relatedTask, setMember(rel, "taskId", mapped))
	})
}

// setMember returns the object obj with the member key set to value, or obj
// unchanged when it has no such member.
func setMember(obj []byte, key string, value []byte) []byte {
	out, err := jsonrpc.ReplaceMember(obj, key, value)
	if err != nil {
		return obj
	}
	return out
}

// relatedTask is the _meta key that ties a message to a task.
const relatedTask = eras.RelatedTask
