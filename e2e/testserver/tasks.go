package main

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// Tasks (MCP 2025-11-25), with -tasks. Initialize declares taskCapability;
// a tools/call whose params carry "task" (any tool: tools/list is left as
// it is, without execution.taskSupport) is answered at once with a
// CreateTaskResult while the tool runs in the background, under a context
// of the task's own that tasks/cancel ends. Task ids are task-1, task-2,
// ... per session, so that two test servers behind one aggregator use the
// same ones.
//
// When the tool ends, the task becomes "completed", or "failed" for a
// JSON-RPC error or a result with isError true (as the specification says
// of tool calls), and notifications/tasks/status says so. tasks/result
// blocks until the task is terminal, then answers exactly what the
// tools/call would have, a result carrying _meta[relatedTask]. A task is
// kept after its result was fetched, until its ttl has run out (from its
// creation); without a ttl, for the session. Requests a tool sends the
// client while it runs as a task (sample, elicit, ...) go out as they do
// without a task: no related-task _meta, no input_required status.

// taskCapability is what initialize declares under capabilities with
// -tasks.
const taskCapability = `,"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`

// relatedTask is the _meta key that ties a message to a task.
const relatedTask = "io.modelcontextprotocol/related-task"

// taskPageSize is the page size of tasks/list.
const taskPageSize = 50

// taskTimeLayout is RFC 3339 with milliseconds, in UTC.
const taskTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// task is one task of the session.
type task struct {
	id      string
	n       int64 // its number: task-n
	created time.Time
	ttl     []byte    // as answered: the requested ttl, or null
	expires time.Time // zero: never
	cancel  context.CancelFunc
	done    chan struct{} // closed by whoever makes it terminal

	// Protected by taskTable.mu.
	status  string
	message string // statusMessage; "" for none
	updated time.Time
	result  []byte    // the tool's result, once completed (or failed with isError)
	rerr    *rpcError // the tool's error, once failed
	expired bool      // dropped from the table: its ttl ran out
}

// taskTable is the session's tasks.
type taskTable struct {
	mu   sync.Mutex
	seq  int64
	byID map[string]*task
	exp  expiryHeap // the tasks with a ttl, soonest expiry first
}

// terminal tells whether a task in this status is done for good.
func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// json is the task's Task object; with the table's lock held.
func (t *task) json() []byte {
	b := make([]byte, 0, 192)
	b = append(b, `{"taskId":`...)
	b = append(b, jsonString(t.id)...)
	b = append(b, `,"status":`...)
	b = append(b, jsonString(t.status)...)
	if t.message != "" {
		b = append(b, `,"statusMessage":`...)
		b = append(b, jsonString(t.message)...)
	}
	b = append(b, `,"createdAt":"`...)
	b = t.created.UTC().AppendFormat(b, taskTimeLayout)
	b = append(b, `","lastUpdatedAt":"`...)
	b = t.updated.UTC().AppendFormat(b, taskTimeLayout)
	b = append(b, `","ttl":`...)
	b = append(b, t.ttl...)
	return append(b, `,"pollInterval":0}`...)
}

// sweep drops the tasks whose ttl has run out; with tt.mu held. One still
// running is stopped, and whoever waits for its result hears it expired.
func (tt *taskTable) sweep(now time.Time) {
	for len(tt.exp) > 0 && !now.Before(tt.exp[0].expires) {
		t := heap.Pop(&tt.exp).(*task)
		delete(tt.byID, t.id)
		t.expired = true
		if !terminal(t.status) {
			t.status, t.message, t.updated = "failed", "Task has expired", now
			close(t.done)
		}
		t.cancel()
	}
}

// expiryHeap orders tasks by their expiry.
type expiryHeap []*task

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(*task)) }
func (h *expiryHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return t
}
