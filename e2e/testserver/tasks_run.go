package main

import (
	"container/heap"
	"context"
	"encoding/json"
	"strconv"
	"time"
)

// A tools/call run as a task: the task created and answered at once, the
// tool run in the background, and the task made terminal with its outcome.

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
