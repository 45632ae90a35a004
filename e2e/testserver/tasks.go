package main

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
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

func terminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// taskMethods are the tasks/* requests served with -tasks.
var taskMethods = map[string]func(*server, context.Context, json.RawMessage) ([]byte, *rpcError){
	"tasks/get":    (*server).getTask,
	"tasks/result": (*server).taskResult,
	"tasks/cancel": (*server).cancelTask,
	"tasks/list":   (*server).listTasks,
}

// startTask runs the tool call c as a task: it answers the tools/call
// itself, with the CreateTaskResult, before the tool starts, so that the
// task's status notification cannot overtake its creation, and returns
// errNoReply. taskParams is params.task.
func (s *server) startTask(c *toolCall, run toolFunc, taskParams json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		TTL *json.Number `json:"ttl"`
	}
	if err := json.Unmarshal(taskParams, &p); err != nil {
		return nil, &rpcError{code: -32602, message: "invalid params.task: " + err.Error()}
	}
	ttl, expires := []byte("null"), time.Time{}
	now := time.Now()
	if p.TTL != nil {
		ms, err := p.TTL.Float64()
		if err != nil || ms < 0 {
			return nil, &rpcError{code: -32602, message: "invalid params.task.ttl: " + p.TTL.String()}
		}
		ttl = []byte(p.TTL.String())
		expires = now.Add(time.Duration(ms * float64(time.Millisecond)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.ctx = ctx
	t := &task{created: now, updated: now, ttl: ttl, expires: expires, cancel: cancel, done: make(chan struct{}), status: "working"}

	tt := &s.tasks
	tt.mu.Lock()
	tt.sweep(now)
	tt.seq++
	t.n = tt.seq
	t.id = "task-" + strconv.FormatInt(t.n, 10)
	if tt.byID == nil {
		tt.byID = map[string]*task{}
	}
	tt.byID[t.id] = t
	if !expires.IsZero() {
		heap.Push(&tt.exp, t)
	}
	created := append(append([]byte(`{"task":`), t.json()...), '}')
	tt.mu.Unlock()

	s.out.writeLine(resultLine(c.id, created))
	go s.runTask(t, c, run)
	return nil, errNoReply
}

// runTask runs the tool and makes the task terminal with its outcome,
// unless it was cancelled (or dropped) meanwhile.
func (s *server) runTask(t *task, c *toolCall, run toolFunc) {
	result, rerr := run(s, c)
	defer t.cancel()
	s.tasks.mu.Lock()
	if terminal(t.status) {
		s.tasks.mu.Unlock()
		return
	}
	switch {
	case rerr == errNoReply:
		t.status, t.rerr = "failed", &rpcError{code: -32603, message: "the tool gave no answer"}
	case rerr != nil:
		t.status, t.rerr = "failed", rerr
	default:
		t.status, t.result = "completed", result
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(result, &r) == nil && r.IsError {
			t.status = "failed"
		}
	}
	if t.rerr != nil {
		t.message = t.rerr.message
	}
	t.updated = time.Now()
	status := t.json()
	s.tasks.mu.Unlock()
	// The status first: whoever waits for the result hears it before.
	s.out.writeLine(notificationLine("notifications/tasks/status", status))
	close(t.done)
}

// lookup returns the task params.taskId names, with tt.mu held; or the
// error to answer, with it released.
func (s *server) lookup(params json.RawMessage) (*task, *rpcError) {
	var p struct {
		TaskID *string `json:"taskId"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.TaskID == nil {
		return nil, &rpcError{code: -32602, message: "invalid params: taskId (a string) is required"}
	}
	s.tasks.mu.Lock()
	s.tasks.sweep(time.Now())
	t, ok := s.tasks.byID[*p.TaskID]
	if !ok {
		s.tasks.mu.Unlock()
		return nil, &rpcError{code: -32602, message: "Failed to retrieve task: Task not found"}
	}
	return t, nil
}

func (s *server) getTask(_ context.Context, params json.RawMessage) ([]byte, *rpcError) {
	t, rerr := s.lookup(params)
	if rerr != nil {
		return nil, rerr
	}
	defer s.tasks.mu.Unlock()
	return t.json(), nil
}

// taskResult waits until the task is terminal (or the request is
// cancelled) and answers what the tools/call would have.
func (s *server) taskResult(ctx context.Context, params json.RawMessage) ([]byte, *rpcError) {
	t, rerr := s.lookup(params)
	if rerr != nil {
		return nil, rerr
	}
	s.tasks.mu.Unlock()
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, errNoReply
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	switch {
	case t.expired:
		return nil, &rpcError{code: -32602, message: "Failed to retrieve task: Task has expired"}
	case t.rerr != nil:
		return nil, t.rerr
	case t.result == nil: // cancelled
		return nil, &rpcError{code: -32603, message: "Task " + t.id + " was cancelled"}
	}
	return withRelatedTask(t.result, t.id), nil
}

func (s *server) cancelTask(_ context.Context, params json.RawMessage) ([]byte, *rpcError) {
	t, rerr := s.lookup(params)
	if rerr != nil {
		return nil, rerr
	}
	if terminal(t.status) {
		status := t.status
		s.tasks.mu.Unlock()
		return nil, &rpcError{code: -32602, message: "Cannot cancel task: already in terminal status '" + status + "'"}
	}
	t.status, t.message, t.updated = "cancelled", "The task was cancelled by request.", time.Now()
	state := t.json()
	close(t.done)
	s.tasks.mu.Unlock()
	t.cancel()
	return state, nil
}

// listTasks lists the tasks in the order of their creation, taskPageSize
// a page; a cursor names the last task of the page before.
func (s *server) listTasks(_ context.Context, params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{code: -32602, message: "invalid params: " + err.Error()}
		}
	}
	after := int64(0)
	if p.Cursor != nil {
		n, err := strconv.ParseInt(string(bytes.TrimPrefix([]byte(*p.Cursor), []byte("after-"))), 10, 64)
		if err != nil || n < 0 || "after-"+strconv.FormatInt(n, 10) != *p.Cursor {
			return nil, &rpcError{code: -32602, message: "invalid cursor"}
		}
		after = n
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	s.tasks.sweep(time.Now())
	var rest []*task
	for _, t := range s.tasks.byID {
		if t.n > after {
			rest = append(rest, t)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].n < rest[j].n })
	next := ""
	if len(rest) > taskPageSize {
		rest = rest[:taskPageSize]
		next = fmt.Sprintf("after-%d", rest[len(rest)-1].n)
	}
	items := make([][]byte, len(rest))
	for i, t := range rest {
		items[i] = t.json()
	}
	return listResult("tasks", items, next), nil
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

// withRelatedTask returns the result object with
// _meta[relatedTask] = {"taskId": id}: appended as the last member, or
// set in the tool's own _meta (the object then re-encoded, keys sorted).
func withRelatedTask(result []byte, id string) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil || top == nil {
		return result
	}
	rel := append(append([]byte(`{"taskId":`), jsonString(id)...), '}')
	if meta, ok := top["_meta"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(meta, &m) != nil || m == nil {
			return result
		}
		m[relatedTask] = rel
		top["_meta"] = encode(m)
		return encode(top)
	}
	b := bytes.TrimRight(result, " \t\r\n")
	b = append([]byte(nil), b[:len(b)-1]...) // without its '}'
	if len(top) > 0 {
		b = append(b, ',')
	}
	b = append(b, `"_meta":{"`+relatedTask+`":`...)
	b = append(b, rel...)
	return append(b, "}}"...)
}

// encode marshals v without escaping <, > and &.
func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
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
