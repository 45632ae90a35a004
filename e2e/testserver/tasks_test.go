package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// taskObj is a Task object as the server writes it.
type taskObj struct {
	TaskID        string          `json:"taskId"`
	Status        string          `json:"status"`
	StatusMessage string          `json:"statusMessage"`
	CreatedAt     string          `json:"createdAt"`
	LastUpdatedAt string          `json:"lastUpdatedAt"`
	TTL           json.RawMessage `json:"ttl"`
	PollInterval  *int            `json:"pollInterval"`
}

// decodeTask decodes a Task object and checks the members every Task has.
func decodeTask(t *testing.T, raw []byte) taskObj {
	t.Helper()
	var o taskObj
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("not a Task: %s: %v", raw, err)
	}
	for _, ts := range []string{o.CreatedAt, o.LastUpdatedAt} {
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			t.Errorf("timestamp %q of %s: %v", ts, raw, err)
		}
	}
	if o.TaskID == "" || o.Status == "" || o.TTL == nil || o.PollInterval == nil || *o.PollInterval != 0 {
		t.Errorf("Task lacks members: %s", raw)
	}
	return o
}

// callTask calls tool as a task with raw params.task and returns the Task
// of the CreateTaskResult.
func (p *peer) callTask(id, tool, args, task string) taskObj {
	p.t.Helper()
	line, m := p.request(id, "tools/call", `{"name":"`+tool+`","arguments":`+args+`,"task":`+task+`}`)
	var r struct {
		Task json.RawMessage `json:"task"`
	}
	if len(m.Error) > 0 || json.Unmarshal(m.Result, &r) != nil || r.Task == nil {
		p.t.Fatalf("%s as a task answered %s", tool, line)
	}
	return decodeTask(p.t, r.Task)
}

// taskRequest sends tasks/get, tasks/result or tasks/cancel about taskID.
func (p *peer) taskRequest(id, method, taskID string) ([]byte, *message) {
	p.t.Helper()
	return p.request(id, method, `{"taskId":"`+taskID+`"}`)
}

// status waits for the notifications/tasks/status of taskID.
func (p *peer) status(taskID string) taskObj {
	p.t.Helper()
	_, m := p.until(func(_ []byte, m *message) bool {
		return m.Method == "notifications/tasks/status" && bytes.Contains(m.Params, []byte(`"taskId":"`+taskID+`"`))
	})
	return decodeTask(p.t, m.Params)
}

func TestTasksCapability(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	_, m := p.request("0", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{}}`)
	if want := `"capabilities":{"tools":{"listChanged":true},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`; !bytes.Contains(m.Result, []byte(want)) {
		t.Errorf("initialize with -tasks: %s\nwant it to contain %s", m.Result, want)
	}
	// Without -tasks: no capability, no tasks/*, and params.task is ignored.
	p2 := start(t)
	_, m = p2.request("0", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{}}`)
	if bytes.Contains(m.Result, []byte(`"tasks"`)) {
		t.Errorf("initialize without -tasks: %s", m.Result)
	}
	p2.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list"} {
		if _, m := p2.taskRequest(fmt.Sprint(i+1), method, "task-1"); errorCode(t, m) != -32601 {
			t.Errorf("%s without -tasks: %s", method, m.Error)
		}
	}
	_, m = p2.request("9", "tools/call", `{"name":"echo","arguments":{"a":1},"task":{"ttl":1000}}`)
	if string(m.Result) != `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}` {
		t.Errorf("a task-augmented call without -tasks: %s %s", m.Result, m.Error)
	}
}

// A full round: created working, status completed, tasks/get, tasks/result
// exactly as the plain call plus the related-task _meta, and again: the
// task outlives its result.
func TestTaskRound(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	args := `{"b": 1, "a":"<&> ü"}`
	_, plain := p.callTool("1", "echo", args)

	created := p.callTask("2", "echo", args, `{"ttl":60000}`)
	if created.TaskID != "task-1" || created.Status != "working" || string(created.TTL) != "60000" || created.StatusMessage != "" {
		t.Errorf("created: %+v", created)
	}
	if st := p.status("task-1"); st.Status != "completed" || st.CreatedAt != created.CreatedAt || st.LastUpdatedAt < created.LastUpdatedAt {
		t.Errorf("status notification: %+v (created %+v)", st, created)
	}
	_, m := p.taskRequest("3", "tasks/get", "task-1")
	if got := decodeTask(t, m.Result); got.TaskID != "task-1" || got.Status != "completed" || string(got.TTL) != "60000" {
		t.Errorf("tasks/get: %s", m.Result)
	}
	want := string(plain.Result[:len(plain.Result)-1]) + `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-1"}}}`
	for _, id := range []string{"4", "5"} {
		if line, m := p.taskRequest(id, "tasks/result", "task-1"); string(m.Result) != want {
			t.Errorf("tasks/result %s:\n got %s\nwant result %s", id, line, want)
		}
	}
	// No ttl asked: null, and the next number.
	if second := p.callTask("6", "echo", `{}`, `{}`); second.TaskID != "task-2" || string(second.TTL) != "null" {
		t.Errorf("second task: %+v", second)
	}
	// Not tasks: an unknown tool, bad task params.
	if _, m := p.request("7", "tools/call", `{"name":"nope","task":{}}`); errorCode(t, m) != -32602 {
		t.Errorf("unknown tool as a task: %s", m.Error)
	}
	if _, m := p.request("8", "tools/call", `{"name":"echo","task":{"ttl":-1}}`); errorCode(t, m) != -32602 {
		t.Errorf("negative ttl: %s", m.Error)
	}
	for i, bad := range []string{`{"taskId":"task-99"}`, `{}`, `{"taskId":2}`} {
		for j, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if _, m := p.request(fmt.Sprint(20+3*i+j), method, bad); errorCode(t, m) != -32602 {
				t.Errorf("%s %s: %s %s", method, bad, m.Result, m.Error)
			}
		}
	}
}

// A tool that fails: the task fails, and tasks/result answers the very
// error the plain call does; a result with isError fails it too.
func TestTaskFailed(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	_, plain := p.callTool("1", "fail", `{}`)
	p.callTask("2", "fail", `{}`, `{"ttl":60000}`)
	if st := p.status("task-1"); st.Status != "failed" || st.StatusMessage != "custom failure" {
		t.Errorf("status: %+v", st)
	}
	if line, m := p.taskRequest("3", "tasks/result", "task-1"); string(m.Error) != string(plain.Error) || m.Result != nil {
		t.Errorf("tasks/result: %s\nwant the error %s", line, plain.Error)
	}
	p.callTask("4", "iserror", `{}`, `{}`)
	if st := p.status("task-2"); st.Status != "failed" {
		t.Errorf("isError: %+v", st)
	}
	want := `{"content":[{"type":"text","text":"tool error"}],"isError":true,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-2"}}}`
	if _, m := p.taskRequest("5", "tasks/result", "task-2"); string(m.Result) != want {
		t.Errorf("tasks/result of isError: %s", m.Result)
	}
	if _, m := p.taskRequest("6", "tasks/cancel", "task-2"); errorCode(t, m) != -32602 {
		t.Errorf("tasks/cancel of a failed task: %s", m.Result)
	}
}

// tasks/result blocks until the task ends; the status comes before it.
func TestTaskResultWaits(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	p.callTask("1", "slow", `{"ms":100}`, `{"ttl":60000}`)
	_, m := p.taskRequest("2", "tasks/get", "task-1")
	if got := decodeTask(t, m.Result); got.Status != "working" {
		t.Errorf("tasks/get while it runs: %s", m.Result)
	}
	p.seen = nil
	_, m = p.taskRequest("3", "tasks/result", "task-1")
	if want := `{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"task-1"}}}`; string(m.Result) != want {
		t.Errorf("tasks/result: %s", m.Result)
	}
	if len(p.seen) != 1 || !bytes.Contains(p.seen[0], []byte(`"method":"notifications/tasks/status","params":{"taskId":"task-1","status":"completed"`)) {
		t.Errorf("before the result: %s", bytes.Join(p.seen, []byte("\n")))
	}
}

// tasks/cancel stops the tool and ends a waiting tasks/result; the
// cancelled task stays cancelled.
func TestTaskCancel(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	p.callTask(`"c"`, "slow", `{}`, `{"ttl":60000}`)
	p.send(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"task-1"}}`)
	_, m := p.taskRequest("1", "tasks/cancel", "task-1")
	if got := decodeTask(t, m.Result); got.Status != "cancelled" || got.StatusMessage == "" {
		t.Errorf("tasks/cancel: %s", m.Result)
	}
	if _, m := p.response(`"r"`); errorCode(t, m) != -32603 {
		t.Errorf("tasks/result of a cancelled task: %s", m.Result)
	}
	p.waitStderr(`cancelled "c"`) // the tool saw it
	if _, m := p.taskRequest("2", "tasks/cancel", "task-1"); errorCode(t, m) != -32602 {
		t.Errorf("second tasks/cancel: %s", m.Result)
	}
	if _, m := p.taskRequest("3", "tasks/get", "task-1"); decodeTask(t, m.Result).Status != "cancelled" {
		t.Errorf("tasks/get after the cancel: %s", m.Result)
	}
	for _, l := range p.seen {
		if bytes.Contains(l, []byte("notifications/tasks/status")) {
			t.Errorf("a status after the cancel: %s", l)
		}
	}
}

// tasks/list: every task, in order, 50 a page.
func TestTaskList(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	const n = 120
	for i := 1; i <= n; i++ {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","task":{"ttl":60000}}}`, i))
	}
	for i := 1; i <= n; i++ { // answered in any order
		p.until(func(_ []byte, m *message) bool { return m.Method == "" && m.hasID() })
	}
	var ids []string
	var sizes []int
	cursor := ""
	for page := 0; page < 10; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		_, m := p.request(fmt.Sprint(1000+page), "tasks/list", params)
		var r struct {
			Tasks      []json.RawMessage `json:"tasks"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatalf("tasks/list: %s %s", m.Result, m.Error)
		}
		for _, raw := range r.Tasks {
			ids = append(ids, decodeTask(t, raw).TaskID)
		}
		sizes = append(sizes, len(r.Tasks))
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if fmt.Sprint(sizes) != "[50 50 20]" {
		t.Errorf("page sizes %v", sizes)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("task-%d", i+1) {
			t.Fatalf("listed %v", ids)
		}
	}
	for i, bad := range []string{`"bogus"`, `"after-x"`, `"after--1"`} {
		if _, m := p.request(fmt.Sprint(2000+i), "tasks/list", `{"cursor":`+bad+`}`); errorCode(t, m) != -32602 {
			t.Errorf("cursor %s: %s", bad, m.Result)
		}
	}
}

// A task is dropped once its ttl has run out, result fetched or not; one
// still running then fails.
func TestTaskTTL(t *testing.T) {
	t.Parallel()
	p := start(t, "-tasks")
	p.handshake()
	p.callTask("1", "echo", `{}`, `{"ttl":1}`)
	p.callTask("2", "slow", `{}`, `{"ttl":30}`)
	p.callTask("3", "echo", `{}`, `{}`) // kept for the session
	p.send(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"task-2"}}`)
	deadline := time.Now().Add(waitFor)
	for i := 0; ; i++ {
		_, m := p.request(fmt.Sprint(10+i), "tasks/list", "")
		if string(m.Result) != "" && !bytes.Contains(m.Result, []byte(`"task-1"`)) && !bytes.Contains(m.Result, []byte(`"task-2"`)) {
			if !bytes.Contains(m.Result, []byte(`"task-3"`)) {
				t.Errorf("task-3, without a ttl, was dropped: %s", m.Result)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks of ttl 1 and 30 ms still listed after %v: %s", waitFor, m.Result)
		}
	}
	if _, m := p.response(`"r"`); errorCode(t, m) != -32602 || !strings.Contains(string(m.Error), "expired") {
		t.Errorf("tasks/result of a task that expired while running: %s", m.Error)
	}
	if _, m := p.taskRequest("4", "tasks/get", "task-1"); errorCode(t, m) != -32602 {
		t.Errorf("tasks/get of an expired task: %s", m.Result)
	}
}
