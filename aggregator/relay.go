package aggregator

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
)

// tiesToClient returns msg, a server's params or result on its way to the
// client, with its related-task tie told as the client may see it
// (relatedToClient, tasks.go): the task hook of every message a server
// sends up. A message that carries no tie, nearly every one, passes as it
// is, and no task code runs for it.
func (rt *relayTables) tiesToClient(c *child, msg []byte) []byte {
	if !eras.TiedToTask(msg) {
		return msg
	}
	return rt.relatedToClient(c, msg)
}

// relayTables are the tables that tie ids across the client and the
// servers, besides a call's own id: the progress tokens of servers'
// requests handed to the client, the servers' tasks under the ids the
// client knows, and the client's tasks run for servers. Their methods are
// in progress (route_server.go), tasks.go, tasks_room.go and
// client_tasks.go. The Aggregator and each child share them.
type relayTables struct {
	log         *Logger
	progress    idTable[progressRoute] // progress tokens handed to the client, by token
	tokens      atomic.Int64           // the last progress token number handed out
	tasks       taskTable              // the children's tasks, by the ids the client knows
	clientTasks taskIndex[*clientTask] // the client's tasks for children, by the ids they know (client_tasks.go)
}

// taskIndex is the shape of both task tables, the servers' tasks (taskTable)
// and the client's (client_tasks.go): the tasks by the id the client knows,
// and the ids forgotten to make room.
type taskIndex[T comparable] struct {
	byID    idTable[T]
	evicted evictedTasks // the ids forgotten to make room, with their server
}

// taskEntry is what both task tables hold of each task.
type taskEntry struct {
	id      string    // the id the client knows
	child   *child    // the server it belongs to
	seq     int64     // the order of registration, for forgetting the oldest
	expires time.Time // when its ttl runs out; zero: it has none
}

// expired reports whether the task's ttl had run out at now.
func (e *taskEntry) expired(now time.Time) bool {
	return !e.expires.IsZero() && now.After(e.expires)
}

// ttlExpiry is when the ttl of a Task object (raw, in milliseconds) runs
// out, from now; zero when it gives none that is a number of 0 or more.
func ttlExpiry(ttl []byte) time.Time {
	ms, err := strconv.ParseFloat(string(ttl), 64)
	if err != nil || ms < 0 {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(ms * float64(time.Millisecond)))
}
