package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"
)

// The tasks/* requests (get, result, cancel, list), and the _meta that
// ties a task's result to its task.

// taskMethods are the tasks/* requests served with -tasks.
var taskMethods = map[string]func(*server, context.Context, json.RawMessage) ([]byte, *rpcError){
	"tasks/get":    (*server).getTask,
	"tasks/result": (*server).taskResult,
	"tasks/cancel": (*server).cancelTask,
	"tasks/list":   (*server).listTasks,
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
