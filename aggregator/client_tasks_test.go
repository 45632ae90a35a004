package aggregator

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// puppet is a child the test speaks for: it answers initialize and
// tools/list itself, hands every other message it gets to the test, and
// writes what the test tells it to.
type puppet struct {
	p       *fakeProcess
	got     chan string
	listens chan string // era puppets: the subscriptions/listen requests it got and acknowledged
}

func (pp *puppet) say(line string) { io.WriteString(pp.p.stdoutW, line+"\n") }

// heard returns the next message the child got.
func (pp *puppet) heard(t *testing.T) string {
	t.Helper()
	select {
	case l := <-pp.got:
		return l
	case <-time.After(waitLimit):
		t.Fatal("the child heard nothing within 10 s")
	}
	return ""
}

func servePuppets(t *testing.T, keys ...string) (*harness, map[string]*puppet) {
	puppets := map[string]*puppet{}
	for _, k := range keys {
		puppets[k] = &puppet{got: make(chan string, 16)}
	}
	h := serveOptions(t, Options{Start: func(s config.Server) (Process, error) {
		pp := puppets[s.Key]
		pp.p = startScripted(func(m *jsonrpc.Message, line []byte, out io.Writer) {
			switch m.Method {
			case "initialize":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"1"}}`)))
			case "tools/list":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"x"}]}`)))
			case "notifications/initialized":
			default:
				pp.got <- strings.TrimSpace(string(line))
			}
		})
		return pp.p, nil
	}}, keys...)
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"tasks":{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}}}}}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`) // every child ready
	return h, puppets
}

// idOf returns the id the aggregator gave the request line.
func idOf(t *testing.T, line string) string {
	t.Helper()
	m, err := jsonrpc.Parse([]byte(line))
	if err != nil || m.ID == nil {
		t.Fatalf("not a request: %s", line)
	}
	return string(m.ID)
}

// A child asks the client to sample as a task, then polls it: the child
// and the client see the client's own id, every byte as on a direct
// connection; another child can reach that task in no way.
func TestClientSideTask(t *testing.T) {
	t.Parallel()
	h, pp := servePuppets(t, "a", "b")
	a, b := pp["a"], pp["b"]
	a.say(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"task":{"ttl":60000}}}`)
	req := h.read()
	created := `{"task":{"taskId":"client-7","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":60000}}`
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":` + created + `}`)
	if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"s1","result":`+created+`}`; got != want {
		t.Fatalf("the child got\n %s\nwant the client's answer as it is\n %s", got, want)
	}

	// Each tasks/* of the owner reaches the client as the child wrote it,
	// and the answer comes back as the client wrote it.
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		a.say(`{"jsonrpc":"2.0","id":"q","method":"` + method + `","params":{"taskId":"client-7"}}`)
		req = h.read()
		if !strings.Contains(req, `"method":"`+method+`","params":{"taskId":"client-7"}}`) {
			t.Errorf("the client got %s", req)
		}
		answer := `{"taskId":"client-7","status":"completed","createdAt":"x","lastUpdatedAt":"y","ttl":60000}`
		if method == "tasks/result" {
			answer = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"client-7"}}}`
		}
		h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":` + answer + `}`)
		if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"q","result":`+answer+`}`; got != want {
			t.Errorf("%s answered the child:\n got %s\nwant %s", method, got, want)
		}
	}

	// The client's status goes to the child that owns the task only.
	status := `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"client-7","status":"completed"}}`
	h.send(status)
	if got := a.heard(t); got != status {
		t.Errorf("status:\n got %s\nwant %s", got, status)
	}

	// Another child cannot use a's task, by any of the methods.
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		b.say(`{"jsonrpc":"2.0","id":"x","method":"` + method + `","params":{"taskId":"client-7"}}`)
		if got := b.heard(t); !strings.Contains(got, `"error":{"code":-32602,"message":"Invalid params: unknown task \"client-7\""`) {
			t.Errorf("b's %s of a's task answered %s", method, got)
		}
	}
	select {
	case l := <-b.got:
		t.Errorf("b heard %s", l)
	default:
	}

	// Fetched, the task is kept (the client keeps it) until the client no
	// longer knows it.
	a.say(`{"jsonrpc":"2.0","id":"g2","method":"tasks/get","params":{"taskId":"client-7"}}`)
	req = h.read()
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"error":{"code":-32602,"message":"no such task"}}`)
	a.heard(t)
	if n := len(h.a.relay.clientTasks.byID.All()); n != 0 {
		t.Errorf("%d client tasks still known after the client said it knows none", n)
	}
}

// A child's tasks/list gets only the tasks the client runs for it, as
// the client listed them.
func TestClientTaskListIsTheChilds(t *testing.T) {
	t.Parallel()
	h, pp := servePuppets(t, "a", "b")
	for i, k := range []string{"a", "b"} {
		pp[k].say(`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"task":{}}}`)
		req := h.read()
		h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"task":{"taskId":"c` + string(rune('0'+i)) + `","status":"working"}}}`)
		pp[k].heard(t)
	}
	pp["b"].say(`{"jsonrpc":"2.0","id":"l","method":"tasks/list"}`)
	req := h.read()
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"tasks":[{"taskId":"c0","status":"working"},{"taskId":"c1","status":"working"},{"taskId":"other","status":"working"}],"nextCursor":"n"}}`)
	if got, want := pp["b"].heard(t), `{"jsonrpc":"2.0","id":"l","result":{"tasks":[{"taskId":"c1","status":"working"}],"nextCursor":"n"}}`; got != want {
		t.Errorf("b's tasks/list answered\n %s\nwant\n %s", got, want)
	}
}

// The client's answer to a child's request tied to the child's task
// carries the aggregator's id of the task: the child gets its own.
func TestRelatedTaskOfTheClientsAnswer(t *testing.T) {
	t.Parallel()
	h, pp := servePuppets(t, "a")
	a := pp["a"]
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"a:x","task":{}}}`)
	call := a.heard(t)
	a.say(`{"jsonrpc":"2.0","id":` + idOf(t, call) + `,"result":{"task":{"taskId":"mine","status":"working"}}}`)
	created := h.read()
	m, _ := jsonrpc.Parse([]byte(created))
	obj, _ := jsonrpc.Member(m.Result, "task")
	ours, _ := jsonrpc.Member(obj, "taskId")
	a.say(`{"jsonrpc":"2.0","id":"e","method":"elicitation/create","params":{"message":"?","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mine"}}}}`)
	req := h.read()
	if !strings.Contains(req, `"io.modelcontextprotocol/related-task":{"taskId":`+string(ours)+`}`) {
		t.Fatalf("the client got %s, want the task under %s", req, ours)
	}
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"action":"accept","content":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":` + string(ours) + `}}}}`)
	if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"e","result":{"action":"accept","content":{},"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"mine"}}}}`; got != want {
		t.Errorf("the child got:\n %s\nwant\n %s", got, want)
	}
}

// The tasks the client runs for one server are bounded as the server's
// own are: past maxTasksPerServer the oldest are forgotten, and the
// server's later request for one of them is told why.
func TestClientTasksOfAServerAreBounded(t *testing.T) {
	// Not parallel: it sets maxTasksPerServer, which every session reads.
	defer func(n int) { maxTasksPerServer = n }(maxTasksPerServer)
	maxTasksPerServer = 16
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}, {Key: "other", Command: "fake"}}})
	k, other := a.children()[0], a.children()[1]
	a.relay.registerClientTask(other, []byte(`"o"`), []byte(`{}`))
	for i := range maxTasksPerServer + 1 {
		a.relay.registerClientTask(k, jsonrpc.AppendString(nil, fmt.Sprintf("c%d", i)), []byte(`{}`))
	}
	if got := k.clientTasks.Load(); got != int64(maxTasksPerServer-1) {
		t.Errorf("k holds %d client tasks, want %d", got, maxTasksPerServer-1)
	}
	for _, id := range []string{"c0", "c1"} {
		if _, known := a.relay.clientTasks.byID.Get(id); known {
			t.Errorf("the oldest client task %s is still known", id)
		}
	}
	if _, known := a.relay.clientTasks.byID.Get("o"); !known {
		t.Error("another server's client task was forgotten")
	}
	m := &jsonrpc.Message{ID: []byte(`1`), Method: "tasks/get", Params: []byte(`{"taskId":"c0"}`)}
	if _, _, bad := k.childTaskRequest(m); !strings.Contains(string(bad), "keeps at most 16 of this server's client tasks") {
		t.Errorf("k's tasks/get of a forgotten client task answered %s", bad)
	}
}

// The client's -32602 to a child's tasks/cancel of a task that has ended
// (the spec's answer to cancelling a task in a terminal status) or to its
// tasks/result (the error its request ended with) does not make the
// aggregator forget the task: the child's tasks/list still gets it, as the
// client lists it, and its tasks/get still reaches the client. Only a
// -32602 to tasks/get says the client no longer knows the task.
func TestClientTaskEndedStaysTheChilds(t *testing.T) {
	t.Parallel()
	h, pp := servePuppets(t, "a")
	a := pp["a"]
	a.say(`{"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"task":{"ttl":60000}}}`)
	req := h.read()
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"task":{"taskId":"client-7","status":"working","ttl":60000}}}`)
	a.heard(t)
	for i, tt := range []struct{ method, refusal string }{
		{"tasks/cancel", "Cannot cancel task in terminal status: completed"},
		{"tasks/result", "Invalid params: the sampling request was invalid"},
	} {
		a.say(`{"jsonrpc":"2.0","id":"q","method":"` + tt.method + `","params":{"taskId":"client-7"}}`)
		req = h.read()
		h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"error":{"code":-32602,"message":"` + tt.refusal + `"}}`)
		if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"q","error":{"code":-32602,"message":"`+tt.refusal+`"}}`; got != want {
			t.Errorf("%s answered the child:\n got %s\nwant %s", tt.method, got, want)
		}
		a.say(fmt.Sprintf(`{"jsonrpc":"2.0","id":"l%d","method":"tasks/list"}`, i))
		req = h.read()
		listed := `{"tasks":[{"taskId":"client-7","status":"completed","ttl":60000}]}`
		h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":` + listed + `}`)
		if got, want := a.heard(t), fmt.Sprintf(`{"jsonrpc":"2.0","id":"l%d","result":%s}`, i, listed); got != want {
			t.Fatalf("after the client's -32602 to %s, the child's tasks/list answered\n %s\nwant the client's list\n %s", tt.method, got, want)
		}
	}
	a.say(`{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"taskId":"client-7"}}`)
	if req = h.read(); !strings.Contains(req, `"method":"tasks/get","params":{"taskId":"client-7"}}`) {
		t.Errorf("the child's tasks/get of its ended task: the client got %s", req)
	}
}
