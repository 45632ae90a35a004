package aggregator

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// listingChild is a scripted child whose tasks/list answers, in one page,
// whatever the test sets; a task-augmented tools/call creates the task
// old-N, working; tasks/get answers any task as completed.
type listingChild struct {
	mu    sync.Mutex
	n     int
	tasks []string // the Task objects tasks/list answers
}

func (lc *listingChild) list(tasks ...string) {
	lc.mu.Lock()
	lc.tasks = tasks
	lc.mu.Unlock()
}

func (lc *listingChild) script(m *jsonrpc.Message, _ []byte, out io.Writer) {
	answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
	taskID, _ := jsonrpc.StringMember(m.Params, "taskId")
	switch m.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"l","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"work","execution":{"taskSupport":"optional"}}]}`)
	case "tools/call":
		lc.mu.Lock()
		lc.n++
		id := fmt.Sprintf("old-%d", lc.n)
		lc.mu.Unlock()
		answer(`{"task":` + taskObject(id, "working", "60000") + `}`)
	case "tasks/get":
		answer(taskObject(taskID, "completed", "60000"))
	case "tasks/list":
		lc.mu.Lock()
		tasks := strings.Join(lc.tasks, ",")
		lc.mu.Unlock()
		answer(`{"tasks":[` + tasks + `]}`)
	}
}

// taskObject is a Task as a server writes it.
func taskObject(id, status, ttl string) string {
	return fmt.Sprintf(`{"taskId":%q,"status":%q,"createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:01Z","ttl":%s}`, id, status, ttl)
}

// serveListing serves an aggregator over one listingChild, "k".
func serveListing(t *testing.T) (*harness, *listingChild) {
	lc := &listingChild{}
	h := serveOptions(t, Options{Start: func(config.Server) (Process, error) { return startScripted(lc.script), nil }}, "k")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h, lc
}

// getTask answers tasks/get of the id the client was given.
func getTask(h *harness, reqID int, id string) string {
	return h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/get","params":{"taskId":%q}}`, reqID, id))
}

// A finished task its server lists is in the client's tasks/list, as
// directly, and usable, even when the aggregator's table of the server's
// tasks is full: full of tasks the server no longer lists, which make
// room for it.
func TestTaskListShowsAFinishedTaskItsServerLists(t *testing.T) {
	// Not parallel: it sets maxTasksPerServer, which every session reads.
	defer func(n int) { maxTasksPerServer = n }(maxTasksPerServer)
	maxTasksPerServer = 2
	h, lc := serveListing(t)
	startTask(t, h, 2, "k:work")
	startTask(t, h, 3, "k:work") // the table is full
	lc.list(taskObject("old-1", "completed", "60000"), taskObject("old-2", "completed", "60000"))
	if listed := listAllTasks(t, h); len(listed) != 2 {
		t.Fatalf("listed %q, want old-1 and old-2", listed)
	}
	// The server has dropped both (their ttl ran out there) and lists a
	// task that ended before the client's session began.
	lc.list(taskObject("done-3", "completed", "60000"))
	listed := listAllTasks(t, h)
	if len(listed) != 1 {
		t.Fatalf("listed %q, want the finished task the server lists", listed)
	}
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":40,"result":{"taskId":%q,"status":"completed",`, listed[0])
	if got := getTask(h, 40, listed[0]); !strings.HasPrefix(got, want) {
		t.Errorf("tasks/get of the listed task:\n got %s\nwant %s...", got, want)
	}
	if again := listAllTasks(t, h); !slices.Equal(again, listed) {
		t.Errorf("listed again %q, want the same id %q", again, listed)
	}
}

// A finished task its server lists stays usable under the id the client
// was given, whatever its ttl says: a ttl of 0, or one run out while the
// server keeps the task (the server may keep it longer, and lists it).
func TestTaskListedPastItsTTLKeepsItsID(t *testing.T) {
	t.Parallel()
	h, lc := serveListing(t)
	lc.list(taskObject("zero", "completed", "0"), taskObject("short", "completed", "1"))
	listed := listAllTasks(t, h)
	if len(listed) != 2 {
		t.Fatalf("listed %q, want both tasks", listed)
	}
	h.a.relay.sweepTasks(time.Now().Add(time.Hour)) // both ttls have run out
	for i, id := range listed {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":"completed",`, 50+i, id)
		if got := getTask(h, 50+i, id); !strings.HasPrefix(got, want) {
			t.Errorf("tasks/get of a listed task past its ttl:\n got %s\nwant %s...", got, want)
		}
	}
	if again := listAllTasks(t, h); !slices.Equal(again, listed) {
		t.Errorf("listed again %q, want the same ids %q", again, listed)
	}
}

// specChild is a scripted child that keeps its tasks as the 2025-11-25
// specification has a receiver do, and as the official TypeScript SDK's
// server does: a task-augmented tools/call of "work" creates task-N,
// working, until the test ends it (end); tasks/cancel of a task in a
// terminal status is refused with -32602, as is any tasks/* of a task it
// does not keep; tasks/result of a task that failed answers the error of
// the underlying request (here the tool's -32602); tasks/list lists every
// task it keeps, ended ones too.
type specChild struct {
	mu     sync.Mutex
	status []string // by task number - 1
}

// end moves task-n to its terminal status.
func (sc *specChild) end(n int, status string) {
	sc.mu.Lock()
	sc.status[n-1] = status
	sc.mu.Unlock()
}

func (sc *specChild) script(m *jsonrpc.Message, _ []byte, out io.Writer) {
	if !m.IsRequest() {
		return
	}
	answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
	refuse := func(msg string) { out.Write(errorLine(m.ID, jsonrpc.CodeInvalidParams, msg)) }
	sc.mu.Lock()
	defer sc.mu.Unlock()
	taskID, _ := jsonrpc.StringMember(m.Params, "taskId")
	var n int
	if _, err := fmt.Sscanf(taskID, "task-%d", &n); strings.HasPrefix(m.Method, "tasks/") && m.Method != "tasks/list" && (err != nil || n < 1 || n > len(sc.status)) {
		refuse("Failed to retrieve task: Task not found")
		return
	}
	switch m.Method {
	case "initialize":
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}`)
	case "tools/list":
		answer(`{"tools":[{"name":"work","execution":{"taskSupport":"required"}}]}`)
	case "tools/call":
		sc.status = append(sc.status, "working")
		answer(`{"task":` + taskObject(fmt.Sprintf("task-%d", len(sc.status)), "working", "60000") + `}`)
	case "tasks/get":
		answer(taskObject(taskID, sc.status[n-1], "60000"))
	case "tasks/cancel":
		if isTerminal(jsonrpc.AppendString(nil, sc.status[n-1])) {
			refuse("Cannot cancel task in terminal status: " + sc.status[n-1])
			return
		}
		sc.status[n-1] = "cancelled"
		answer(taskObject(taskID, "cancelled", "60000"))
	case "tasks/result":
		switch sc.status[n-1] {
		case "completed":
			answer(fmt.Sprintf(`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":%q}}}`, taskID))
		case "failed":
			refuse("Invalid arguments for tool work")
		default: // a cancelled task has no result; a running one is not asked here
			out.Write(errorLine(m.ID, jsonrpc.CodeInternalError, "Task "+taskID+" has no result stored"))
		}
	case "tasks/list":
		var tasks []string
		for i, s := range sc.status {
			tasks = append(tasks, taskObject(fmt.Sprintf("task-%d", i+1), s, "60000"))
		}
		answer(`{"tasks":[` + strings.Join(tasks, ",") + `]}`)
	}
}

// A task that has ended, whatever its end, is listed as directly while
// its server lists it: under the id the client was given, which tasks/get
// still answers. A -32602 of tasks/cancel (the task had ended already: the
// second cancel of a cancelled task, the cancel of a completed one) or of
// tasks/result (the error a failed task's request ended with) reaches the
// client as the server wrote it, and the aggregator keeps the task.
func TestTaskListShowsEndedTasksUnderTheirIDs(t *testing.T) {
	t.Parallel()
	sc := &specChild{}
	h := serveOptions(t, Options{Start: func(config.Server) (Process, error) { return startScripted(sc.script), nil }}, "k")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ids := []string{startTask(t, h, 2, "k:work"), startTask(t, h, 3, "k:work"), startTask(t, h, 4, "k:work")}
	cancelled, completed, failed := ids[0], ids[1], ids[2]

	request := func(reqID int, method, id string) string {
		return h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"taskId":%q}}`, reqID, method, id))
	}
	refused := func(reqID int, msg string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":%q}}`, reqID, msg)
	}
	if got, want := request(10, "tasks/cancel", cancelled), fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"result":{"taskId":%q,"status":"cancelled",`, cancelled); !strings.HasPrefix(got, want) {
		t.Errorf("tasks/cancel:\n got %s\nwant %s...", got, want)
	}
	if got, want := request(11, "tasks/cancel", cancelled), refused(11, "Cannot cancel task in terminal status: cancelled"); got != want {
		t.Errorf("tasks/cancel of the cancelled task:\n got %s\nwant %s (the server's answer)", got, want)
	}
	sc.end(2, "completed")
	if got, want := request(12, "tasks/cancel", completed), refused(12, "Cannot cancel task in terminal status: completed"); got != want {
		t.Errorf("tasks/cancel of a completed task:\n got %s\nwant %s (the server's answer)", got, want)
	}
	sc.end(3, "failed")
	if got, want := request(13, "tasks/result", failed), refused(13, "Invalid arguments for tool work"); got != want {
		t.Errorf("tasks/result of a failed task:\n got %s\nwant %s (the server's answer)", got, want)
	}

	line := h.exchange(`{"jsonrpc":"2.0","id":20,"method":"tasks/list","params":{}}`)
	var r struct {
		Result struct {
			Tasks []struct{ TaskID, Status string }
		}
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("tasks/list answered %s: %v", line, err)
	}
	var listed []string
	for _, tk := range r.Result.Tasks {
		listed = append(listed, tk.TaskID+" "+tk.Status)
	}
	want := []string{cancelled + " cancelled", completed + " completed", failed + " failed"}
	if !slices.Equal(listed, want) {
		t.Errorf("tasks/list listed %q, want %q: every task the server lists, under the ids the client was given", listed, want)
	}
	for i, status := range []string{"cancelled", "completed", "failed"} {
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"taskId":%q,"status":%q,`, 30+i, ids[i], status)
		if got := getTask(h, 30+i, ids[i]); !strings.HasPrefix(got, want) {
			t.Errorf("tasks/get of the %s task:\n got %s\nwant %s...", status, got, want)
		}
	}
}
