package aggregator

import (
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
