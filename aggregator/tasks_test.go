package aggregator

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// taskChild is a scripted child running tasks as a 2025-11-25 server does.
// Its ids are task-1, task-2, ...: every taskChild uses the same ones. Its
// tools: "work" (a task when asked), "early" (a task whose first status
// comes before the answer that creates it), "status" (sends a status of
// task-1), "ask" (a task that asks the client to elicit, tied to it),
// "die", "forget" (it forgets task-1: its tasks/* on it answer -32602).
// Its tasks/list says completed of a task whose result was fetched.
type taskChild struct {
	key    string
	proc   *fakeProcess // set once started: "die" ends it
	mu     sync.Mutex
	n      int
	done   map[string]bool // tasks whose result was fetched
	forgot bool            // task-1 is forgotten
}

// startTaskChild starts a taskChild.
func startTaskChild(key string) *fakeProcess {
	tc := &taskChild{key: key}
	tc.proc = startScripted(tc.script)
	return tc.proc
}

func (tc *taskChild) taskObj(id, status string) string {
	return fmt.Sprintf(`{"taskId":%q,"status":%q,"statusMessage":"%s's %s","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:01Z","ttl":60000,"pollInterval":100}`, id, status, tc.key, id)
}

func (tc *taskChild) script(m *jsonrpc.Message, _ []byte, out io.Writer) {
	if !m.IsRequest() {
		return
	}
	answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
	taskID, _ := jsonrpc.StringMember(m.Params, "taskId")
	tc.mu.Lock()
	forgot := tc.forgot && taskID == "task-1"
	tc.mu.Unlock()
	if forgot {
		out.Write(errorLine(m.ID, jsonrpc.CodeInvalidParams, "unknown task task-1"))
		return
	}
	switch m.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"t","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"work","execution":{"taskSupport":"optional"}},{"name":"early"},{"name":"status"},{"name":"ask"},{"name":"die"},{"name":"forget"}]}`)
	case "tools/call":
		tc.call(m, out, answer)
	case "tasks/get":
		answer(tc.taskObj(taskID, "completed"))
	case "tasks/cancel":
		answer(tc.taskObj(taskID, "cancelled"))
	case "tasks/result":
		tc.mu.Lock()
		if tc.done == nil {
			tc.done = map[string]bool{}
		}
		tc.done[taskID] = true
		tc.mu.Unlock()
		answer(fmt.Sprintf(`{"content":[{"type":"text","text":"%s's result of %s"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}`, tc.key, taskID, taskID))
	case "tasks/list":
		tc.list(m.Params, answer)
	}
}

func (tc *taskChild) call(m *jsonrpc.Message, out io.Writer, answer func(string)) {
	name, _ := jsonrpc.StringMember(m.Params, "name")
	switch name {
	case "status":
		out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + tc.taskObj("task-1", "working") + "}\n"))
		answer(`{"content":[]}`)
	case "die":
		answer(`{"content":[]}`)
		tc.proc.Stop()
	case "forget":
		tc.mu.Lock()
		tc.forgot = true
		tc.mu.Unlock()
		answer(`{"content":[]}`)
	default:
		if _, ok := jsonrpc.Member(m.Params, "task"); !ok {
			answer(`{"content":[{"type":"text","text":"no task"}]}`)
			return
		}
		tc.mu.Lock()
		tc.n++
		id := fmt.Sprintf("task-%d", tc.n)
		tc.mu.Unlock()
		if name == "early" {
			out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + tc.taskObj(id, "working") + "}\n"))
		}
		answer(`{"task":` + tc.taskObj(id, "working") + `}`)
		if name == "ask" {
			out.Write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"e-%s","method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object","properties":{}},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}}`+"\n", id, id)))
		}
	}
}

// list answers tasks/list one task per page.
func (tc *taskChild) list(params []byte, answer func(string)) {
	tc.mu.Lock()
	n := tc.n
	done := maps.Clone(tc.done)
	tc.mu.Unlock()
	i := 1
	if c, ok := jsonrpc.StringMember(params, "cursor"); ok {
		fmt.Sscanf(c, "after-%d", &i)
		i++
	}
	if i > n {
		answer(`{"tasks":[]}`)
		return
	}
	next := ""
	if i < n {
		next = fmt.Sprintf(`,"nextCursor":"after-%d"`, i)
	}
	id, status := fmt.Sprintf("task-%d", i), "working"
	if done[id] {
		status = "completed"
	}
	answer(`{"tasks":[` + tc.taskObj(id, status) + `]` + next + `}`)
}

// serveTasks serves an aggregator over a taskChild per key.
func serveTasks(t *testing.T, keys ...string) *harness {
	h := serveOptions(t, Options{Start: func(s config.Server) (Process, error) {
		return startTaskChild(s.Key), nil
	}}, keys...)
	init := h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}`)
	if !strings.Contains(init, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("initialize answer without the children's tasks capability: %s", init)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// startTask calls tool as a task and returns the task id the client got.
func startTask(t *testing.T, h *harness, id int, tool string) string {
	t.Helper()
	line := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{},"task":{"ttl":60000}}}`, id, tool))
	var r struct {
		Result struct {
			Task struct{ TaskID, Status, StatusMessage string }
		}
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.Result.Task.TaskID == "" {
		t.Fatalf("%s as a task answered %s", tool, line)
	}
	if r.Result.Task.Status != "working" {
		t.Errorf("status %q", r.Result.Task.Status)
	}
	return r.Result.Task.TaskID
}

// Two children that both number their tasks task-1: the client sees two
// ids of the aggregator's, and each poll reaches its own child under the
// child's id, with the aggregator's id in every answer.
func TestTasksOfTwoChildren(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	ta, tb := startTask(t, h, 2, "a:work"), startTask(t, h, 3, "b:work")
	if ta == tb || ta == "task-1" || tb == "task-1" {
		t.Fatalf("task ids a %q, b %q: want two ids of the aggregator's", ta, tb)
	}
	for i, tt := range []struct{ id, key string }{{ta, "a"}, {tb, "b"}} {
		got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, 10+i, tt.id))
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":"completed","statusMessage":"%s's task-1",`, 10+i, tt.id, tt.key)
		if !strings.HasPrefix(got, want) {
			t.Errorf("tasks/get %s:\n got %s\nwant %s...", tt.id, got, want)
		}
		got = h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, 20+i, tt.id))
		want = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s's result of task-1"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}}`, 20+i, tt.key, tt.id)
		if got != want {
			t.Errorf("tasks/result %s:\n got %s\nwant %s", tt.id, got, want)
		}
	}
	// Its result fetched, a task is still known, as its child knows it.
	got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":30,"method":"tasks/get","params":{"taskId":%q}}`, ta))
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":30,"result":{"taskId":%q,"status":"completed",`, ta); !strings.HasPrefix(got, want) {
		t.Errorf("tasks/get after its result:\n got %s\nwant %s...", got, want)
	}
	// Once the child no longer knows it, neither does the aggregator.
	h.exchange(`{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"a:forget","arguments":{}}}`)
	want := `{"jsonrpc":"2.0","id":32,"error":{"code":-32602,"message":"unknown task task-1"}}`
	if got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":32,"method":"tasks/get","params":{"taskId":%q}}`, ta)); got != want {
		t.Errorf("tasks/get of a task its child forgot:\n got %s\nwant %s (the child's answer)", got, want)
	}
	got = h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":33,"method":"tasks/get","params":{"taskId":%q}}`, ta))
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":33,"error":{"code":-32602,"message":"Invalid params: unknown task \"%s\" (a task is forgotten once its ttl has run out, its server no longer knows it or its server is gone)"}}`, ta); got != want {
		t.Errorf("tasks/get after the child forgot it:\n got %s\nwant %s", got, want)
	}
	var ids []string
	for _, t := range h.a.relay.tasks.byID.All() {
		ids = append(ids, t.id)
	}
	if len(ids) != 1 || ids[0] != tb {
		t.Errorf("tasks in the table: %q, want only b's %q", ids, tb)
	}
}

func TestTaskCancelAndStatus(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	startTask(t, h, 2, "a:work")
	tb := startTask(t, h, 3, "b:work")
	// b's status of its task-1 reaches the client under the aggregator's id.
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"b:status"}}`)
	status, answer := h.read(), h.read()
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":%q,"status":"working","statusMessage":"b's task-1"`, tb); !strings.HasPrefix(status, want) {
		t.Errorf("status:\n got %s\nwant %s...", status, want)
	}
	if answer != `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}` {
		t.Errorf("b:status answered %s", answer)
	}
	got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/cancel","params":{"taskId":%q}}`, tb))
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"result":{"taskId":%q,"status":"cancelled","statusMessage":"b's task-1"`, tb); !strings.HasPrefix(got, want) {
		t.Errorf("tasks/cancel:\n got %s\nwant %s...", got, want)
	}
	for i, bad := range []string{`{"taskId":"task-1"}`, `{}`, `{"taskId":7}`} {
		got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":%s}`, 40+i, bad))
		if !strings.Contains(got, `"error":{"code":-32602`) {
			t.Errorf("tasks/get %s answered %s", bad, got)
		}
	}
}

// tasks/list goes child by child, page by page, under cursors of the
// aggregator's.
func TestTaskListPagesThroughEveryChild(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	ids := map[string]bool{startTask(t, h, 2, "a:work"): true, startTask(t, h, 3, "a:work"): true, startTask(t, h, 4, "b:work"): true}
	listed := listAllTasks(t, h)
	if len(listed) != 3 {
		t.Fatalf("listed %q, want the 3 tasks", listed)
	}
	for _, id := range listed {
		if !ids[id] {
			t.Errorf("listed %q, which the client was not given (given %v)", id, ids)
		}
	}
	got := h.exchange(`{"jsonrpc":"2.0","id":30,"method":"tasks/list","params":{"cursor":"nonsense"}}`)
	if !strings.Contains(got, `"error":{"code":-32602,"message":"Invalid params: unknown cursor \"nonsense\""}`) {
		t.Errorf("a bad cursor answered %s", got)
	}
}

// A child's request tied to its task carries the aggregator's id.
func TestRelatedTaskOfAChildsRequest(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	startTask(t, h, 2, "a:work")
	tb := startTask(t, h, 3, "b:ask")
	req := h.read()
	if want := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}`, tb); !strings.Contains(req, `"method":"elicitation/create"`) || !strings.Contains(req, want) {
		t.Errorf("elicitation/create:\n got %s\nwant it to contain %s", req, want)
	}
}

// A child that dies: its tasks are reported failed, and a poll names it.
func TestTasksOfADeadChildFail(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	ta := startTask(t, h, 2, "a:work")
	startTask(t, h, 3, "b:work")
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a:die"}}`)
	var status string
	for status == "" {
		if l := h.read(); strings.Contains(l, "notifications/tasks/status") {
			status = l
		}
	}
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":%q,"status":"failed","statusMessage":"server \"a\"`, ta); !strings.HasPrefix(status, want) {
		t.Errorf("status:\n got %s\nwant %s...", status, want)
	}
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/get","params":{"taskId":%q}}`, ta))
	got := h.read()
	for !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":5,`) {
		got = h.read()
	}
	if !strings.Contains(got, `"error":{"code":-32603,"message":"server \"a\"`) {
		t.Errorf("tasks/get of a dead child's task answered %s", got)
	}
}

// Tasks are forgotten when their ttl has run out.
func TestTaskTTLSweep(t *testing.T) {
	t.Parallel()
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}}})
	c := a.children()[0]
	for i := range 3 {
		a.relay.registerTask(c, jsonrpc.AppendString(nil, fmt.Sprintf("t%d", i)), []byte(`{"ttl":1000}`))
	}
	a.relay.registerTask(c, []byte(`"forever"`), []byte(`{"ttl":null}`))
	a.relay.sweepTasks(time.Now().Add(2 * time.Second))
	if left := a.relay.tasks.byID.All(); len(left) != 1 || string(left[0].childID) != `"forever"` {
		t.Errorf("after the sweep: %d tasks", len(left))
	}
	if left := c.tasks.All(); len(left) != 1 {
		t.Errorf("the child's table holds %d tasks", len(left))
	}
}

// A status the child sends before the answer that creates its task
// reaches the client right after that answer, under the client's id.
func TestTaskStatusBeforeItsCreation(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a")
	id := startTask(t, h, 2, "a:early")
	status := h.read()
	if want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":%q,"status":"working"`, id); !strings.HasPrefix(status, want) {
		t.Errorf("status:\n got %s\nwant %s...", status, want)
	}
}

// A task whose result the client fetched is listed still, under its id,
// as its child lists it.
func TestTaskListKeepsFetchedTasks(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a")
	first, second := startTask(t, h, 2, "a:work"), startTask(t, h, 3, "a:work")
	h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":%q}}`, first))
	if listed := listAllTasks(t, h); !slices.Equal(listed, []string{first, second}) {
		t.Errorf("listed %q, want %q", listed, []string{first, second})
	}
}

// Past maxTasksPerServer tasks of one server, the oldest finished ones are
// forgotten first, and a later use of their ids gets an error naming the
// server and the bound; other servers' tasks are untouched.
func TestTaskTableOfAServerIsBounded(t *testing.T) {
	// Not parallel: it sets maxTasksPerServer, which every session reads.
	defer func(n int) { maxTasksPerServer = n }(maxTasksPerServer)
	maxTasksPerServer = 16
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}, {Key: "other", Command: "fake"}}})
	k, other := a.children()[0], a.children()[1]
	keep, _ := a.relay.registerTask(other, []byte(`"o"`), []byte(`{}`))
	var ts []*task
	for i := range maxTasksPerServer {
		tk, _ := a.relay.registerTask(k, jsonrpc.AppendString(nil, fmt.Sprintf("t%d", i)), []byte(`{}`))
		ts = append(ts, tk)
	}
	ts[5].markTerminal([]byte(`"completed"`))
	ts[9].markTerminal([]byte(`"failed"`))
	a.relay.registerTask(k, []byte(`"one more"`), []byte(`{}`)) // 17: an eighth (2) must go
	for i, tk := range ts {
		_, known := a.relay.tasks.byID.Get(tk.id)
		if gone := i == 5 || i == 9; known == gone {
			t.Errorf("task t%d (terminal %v) known: %v", i, tk.isTerminal(), known)
		}
	}
	if _, ok := a.relay.tasks.byID.Get(keep.id); !ok || k.tasks.Len() != maxTasksPerServer-1 {
		t.Errorf("other's task known %v; k holds %d tasks, want %d", ok, k.tasks.Len(), maxTasksPerServer-1)
	}
	want := fmt.Sprintf(`Invalid params: unknown task %q: server "k" had more than 16 tasks, and mcp-simple-aggregator forgot its oldest to make room`, ts[5].id)
	if _, got := a.relay.task(ts[5].id); got != want {
		t.Errorf("the error for a task forgotten to make room:\n got %s\nwant %s", got, want)
	}
	// With no finished task, the oldest running ones go.
	a.relay.registerTask(k, []byte(`"and another"`), []byte(`{}`))
	a.relay.registerTask(k, []byte(`"and a third"`), []byte(`{}`))
	if _, known := a.relay.tasks.byID.Get(ts[0].id); known || k.tasks.Len() != maxTasksPerServer-1 {
		t.Errorf("the oldest running task known: %v; k holds %d tasks", known, k.tasks.Len())
	}
}

// listAllTasks pages through tasks/list and returns the ids listed.
func listAllTasks(t *testing.T, h *harness) []string {
	t.Helper()
	var listed []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := "{}"
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		var r struct {
			Result struct {
				Tasks      []struct{ TaskID string }
				NextCursor string
			}
		}
		line := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/list","params":%s}`, 100+page, params))
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("tasks/list answered %s: %v", line, err)
		}
		for _, tk := range r.Result.Tasks {
			listed = append(listed, tk.TaskID)
		}
		if cursor = r.Result.NextCursor; cursor == "" {
			return listed
		}
	}
	t.Fatalf("tasks/list still had a next page after 10 pages: %q", listed)
	return nil
}

// A server's tasks/list of more finished tasks than the bound does not
// push out the tasks listed before: finished tasks the aggregator does not
// know are left out while the table is full of tasks the server still
// lists; running ones still come in, and a task pushed out for one is not
// listed under an id already unknown.
func TestTaskListAtTheBoundKeepsTheTasksItHas(t *testing.T) {
	// Not parallel: it sets maxTasksPerServer, which every session reads.
	defer func(n int) { maxTasksPerServer = n }(maxTasksPerServer)
	maxTasksPerServer = 4
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}}})
	k := a.children()[0]
	var items []string
	for i := range 6 {
		items = append(items, fmt.Sprintf(`{"taskId":"t%d","status":"completed"}`, i))
	}
	items = append(items, `{"taskId":"running","status":"working"}`)
	resp := &jsonrpc.Message{Result: []byte(`{"tasks":[` + strings.Join(items, ",") + `]}`)}
	list := func() []string {
		page, _, err := a.relay.childTaskPage(k, resp, k.listing.begin(a.relay.tasks.seq.Load()))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, entry := range page {
			id, _ := jsonrpc.StringMember(entry, "taskId")
			if _, ok := a.relay.tasks.byID.Get(id); !ok {
				t.Errorf("listed %s under %s, an id the aggregator no longer knows", entry, id)
			}
			ids = append(ids, id)
		}
		return ids
	}
	first := list()
	if len(first) != 4 || k.tasks.Len() != 4 {
		t.Errorf("listed %q, the table holds %d; want t1-t3 and running listed, 4 held", first, k.tasks.Len())
	}
	if _, ok := k.tasks.Get("running"); !ok {
		t.Error("a running task was left out")
	}
	if again := list(); !slices.Equal(again, first) { // listed again: the same ids
		t.Errorf("listed again %q, want the same ids %q", again, first)
	}
}

func mustString(t *testing.T, raw []byte) string {
	t.Helper()
	s, ok := jsonrpc.String(raw)
	if !ok {
		t.Fatalf("%s is not a string", raw)
	}
	return s
}
