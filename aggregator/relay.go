package aggregator

import "sync/atomic"

// relayTables are the tables that tie ids across the client and the
// servers, besides a call's own id: the progress tokens of servers'
// requests handed to the client, the servers' tasks under the ids the
// client knows, and the client's tasks run for servers. Their methods are
// in progress (child_messages.go), tasks.go, tasks_room.go and
// client_tasks.go. The Aggregator and each child share them.
type relayTables struct {
	log         *Logger
	progress    idTable[progressRoute] // progress tokens handed to the client, by token
	tokens      atomic.Int64           // the last progress token number handed out
	tasks       taskTable              // the children's tasks, by the ids the client knows
	clientTasks clientTaskTable        // the client's tasks for children, by the ids they know
}
