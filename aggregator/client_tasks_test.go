package aggregator

import (
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
// sees an id of the aggregator's, the client its own.
func TestClientSideTask(t *testing.T) {
	h, pp := servePuppets(t, "a", "b")
	a := pp["a"]
	a.say(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"task":{"ttl":60000}}}`)
	req := h.read()
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"task":{"taskId":"client-7","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":60000}}}`)
	created := a.heard(t)
	m, _ := jsonrpc.Parse([]byte(created))
	obj, _ := jsonrpc.Member(m.Result, "task")
	ours, _ := jsonrpc.StringMember(obj, "taskId")
	if string(m.ID) != `"s1"` || ours == "" || ours == "client-7" {
		t.Fatalf("the child got %s: want its id s1 and a task id of the aggregator's", created)
	}
	q := jsonrpc.AppendString(nil, ours)

	// tasks/get: the client sees its id, the child gets the answer under ours.
	a.say(`{"jsonrpc":"2.0","id":"g1","method":"tasks/get","params":{"taskId":` + string(q) + `}}`)
	req = h.read()
	if !strings.Contains(req, `"method":"tasks/get","params":{"taskId":"client-7"}`) {
		t.Errorf("the client got %s", req)
	}
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"taskId":"client-7","status":"completed","createdAt":"x","lastUpdatedAt":"y","ttl":60000}}`)
	if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"g1","result":{"taskId":`+string(q)+`,"status":"completed","createdAt":"x","lastUpdatedAt":"y","ttl":60000}}`; got != want {
		t.Errorf("tasks/get answered the child:\n got %s\nwant %s", got, want)
	}

	// The client's status goes to the child that owns the task.
	h.send(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"client-7","status":"completed"}}`)
	if got, want := a.heard(t), `{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":`+string(q)+`,"status":"completed"}}`; got != want {
		t.Errorf("status:\n got %s\nwant %s", got, want)
	}

	// Another child cannot use a's task.
	b := pp["b"]
	b.say(`{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"taskId":` + string(q) + `}}`)
	if got := b.heard(t); !strings.Contains(got, `"error":{"code":-32602,"message":"Invalid params: unknown task`) {
		t.Errorf("b's tasks/get of a's task answered %s", got)
	}

	// tasks/result: the related-task id is mapped, and the task forgotten.
	a.say(`{"jsonrpc":"2.0","id":"r1","method":"tasks/result","params":{"taskId":` + string(q) + `}}`)
	req = h.read()
	h.send(`{"jsonrpc":"2.0","id":` + idOf(t, req) + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"client-7"}}}}`)
	if got, want := a.heard(t), `{"jsonrpc":"2.0","id":"r1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":`+string(q)+`}}}}`; got != want {
		t.Errorf("tasks/result:\n got %s\nwant %s", got, want)
	}
	if n := len(h.a.clientTasks.byID.all()); n != 0 {
		t.Errorf("%d client tasks still known after the result", n)
	}
}

// A child's tasks/list gets only the tasks the client runs for it.
func TestClientTaskListIsTheChilds(t *testing.T) {
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
	got := pp["b"].heard(t)
	if strings.Count(got, `"taskId"`) != 1 || strings.Contains(got, `"c1"`) || !strings.Contains(got, `"nextCursor":"n"`) {
		t.Errorf("b's tasks/list answered %s", got)
	}
}

// The client's answer to a child's request tied to the child's task
// carries the aggregator's id of the task: the child gets its own.
func TestRelatedTaskOfTheClientsAnswer(t *testing.T) {
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
