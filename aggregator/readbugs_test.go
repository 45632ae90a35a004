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

// The client's notifications/roots/list_changed reaches legacy children
// only: the 2026-07-28 era removed it.
func TestRootsChangedReachesOnlyLegacyChildren(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind, modernKind)
	h.leftInFlight() // the call is never answered
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}}}}`)
	h.startServers()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	if got := puppets[legacyKind].heard(t); !strings.Contains(got, `"notifications/roots/list_changed"`) {
		t.Errorf("the legacy child heard %s", got)
	}
	// What the modern child hears next comes in the order it was sent.
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"modern:x"}}`)
	if got := puppets[modernKind].heard(t); !strings.Contains(got, `"tools/call"`) {
		t.Errorf("the modern child heard %s before the call", got)
	}
}

// Of two fetches of a child's resource list that overlap, the one that
// began last is kept, whichever ends last: a slow older answer does not
// overwrite a newer list.
func TestAnOlderListNeverOverwritesANewerOne(t *testing.T) {
	t.Parallel()
	held := make(chan []byte, 1)   // the id of the fetch the child holds
	release := make(chan struct{}) // then it answers it with the old list
	lists := 0
	child := startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		switch m.Method {
		case "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"r","version":"1"}}`)))
		case "tools/list":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[]}`)))
		case "resources/templates/list":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"resourceTemplates":[]}`)))
		case "resources/list":
			switch lists++; lists {
			case 1: // at start
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"resources":[{"uri":"file:///start","name":"s"}]}`)))
			case 2: // held: answered last, with what was listed then
				held <- m.ID
				go func(id []byte) {
					<-release
					out.Write(jsonrpc.AppendResult(nil, id, []byte(`{"resources":[{"uri":"file:///old","name":"o"}]}`)))
				}(m.ID)
			default:
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"resources":[{"uri":"file:///new","name":"n"}]}`)))
			}
		}
	})
	h := serve(t, ":", func(config.Server) (Process, error) { return child, nil }, "r")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
	<-held
	if line := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"resources/list"}`); !strings.Contains(line, "file:///new") {
		t.Fatalf("the second list: %s", line)
	}
	close(release)
	readUntil(t, h, `"id":2`)
	entries := h.a.children()[0].resourceEntries()
	if len(entries) != 1 || !strings.Contains(string(entries[0]), "file:///new") {
		t.Errorf("the child's list after both fetches: %s", entries)
	}
}

// A child's request the client never answers ends after
// ClientRequestTimeout: the child gets an error, the client a cancel.
func TestAChildsRequestsToTheClientTimeOut(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2*maxClientRequests)
	child := startScripted(answerSession(`{"tools":{}}`, "", func(m *jsonrpc.Message, line []byte, out io.Writer) {
		switch {
		case m.IsResponse():
			got <- string(line)
		case m.Method == "notifications/initialized":
			out.Write([]byte(`{"jsonrpc":"2.0","id":"late","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}` + "\n"))
		}
	}))
	h := serveOptions(t, Options{Separator: ":", ClientRequestTimeout: 50 * time.Millisecond,
		Start: func(config.Server) (Process, error) { return child, nil }}, "s")
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
	h.startServers()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req, err := jsonrpc.Parse([]byte(h.read()))
	if err != nil || req.Method != "sampling/createMessage" {
		t.Fatalf("want the child's request, got %v %v", req, err)
	}
	// Not answered: the child hears of it, and the client is told.
	if line := <-got; !strings.Contains(line, `"id":"late"`) || !strings.Contains(line, "the client did not answer within 50ms") {
		t.Errorf("the child got %s", line)
	}
	want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(req.ID) + `,"reason":"the client did not answer within 50ms"}}`
	if line := h.read(); line != want {
		t.Errorf("the client got %s, want %s", line, want)
	}
	if n := h.a.children()[0].incoming.Len(); n != 0 {
		t.Errorf("%d requests left in the child's table", n)
	}
}

// No more than maxClientRequests requests of one child wait for the
// client at once: the next is refused.
func TestAChildsRequestsToTheClientAreBounded(t *testing.T) {
	t.Parallel()
	got := make(chan string, 10)
	child := startScripted(answerSession(`{"tools":{}}`, "", func(m *jsonrpc.Message, line []byte, out io.Writer) {
		switch {
		case m.IsResponse():
			got <- string(line)
		case m.Method == "notifications/initialized":
			for i := range maxClientRequests + 1 {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%d,"method":"roots/list"}`+"\n", i)
			}
		}
	}))
	h := serve(t, ":", func(config.Server) (Process, error) { return child, nil }, "s")
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}}}}`)
	h.startServers()
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for range maxClientRequests {
		if line := h.read(); !strings.Contains(line, `"roots/list"`) {
			t.Fatalf("the client got %s", line)
		}
	}
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"mcp-simple-aggregator: %d requests of this server already wait for the client's answers"}}`, maxClientRequests, maxClientRequests)
	if line := strings.TrimSpace(<-got); line != want {
		t.Errorf("the child's request past the bound was answered %s, want %s", line, want)
	}
}

// The tasks of a child that died are forgotten after deadTaskGrace: a
// dead child leaves nothing behind for good. The test does not wait the
// grace: it has the timer the child's death set fire now (Timer.Reset), and
// waits until it has run.
func TestTasksOfADeadChildAreForgotten(t *testing.T) {
	t.Parallel()
	h := serveTasks(t, "a", "b")
	ta := startTask(t, h, 2, "a:work")
	tb := startTask(t, h, 3, "b:work")
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"a:die"}}`)
	readUntil(t, h, `"notifications/tasks/status"`) // sent once the timer was set (failTasks)
	rt := h.a.relay
	rt.tasks.forgetMu.Lock()
	timers := rt.tasks.timers
	rt.tasks.forgetMu.Unlock()
	if len(timers) != 1 {
		t.Fatalf("%d timers set to forget the tasks of a dead child, want 1", len(timers))
	}
	if _, ok := rt.tasks.byID.Get(ta); !ok {
		t.Fatalf("the dead child's task %s was forgotten before its grace", ta)
	}
	timers[0].Reset(0) // deadTaskGrace has passed
	rt.tasks.forgetting.Wait()
	if _, ok := rt.tasks.byID.Get(ta); ok {
		t.Errorf("the dead child's task %s is still known after its grace", ta)
	}
	if _, ok := h.a.relay.tasks.byID.Get(tb); !ok {
		t.Errorf("the live child's task %s was forgotten too", tb)
	}
	if n := h.a.children()[0].tasks.Len(); n != 0 {
		t.Errorf("the dead child still holds %d tasks", n)
	}
}
