package aggregator

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Ids and tokens are compared as JSON values wherever the aggregator looks
// one up, and each peer gets back the bytes it wrote: a client that writes
// "/" as "\/" (PHP's default) or "\u002f" loses nothing.

// idChild is a child with three tools: "ask" sends the client a
// sampling/createMessage under the id askID with the progress token token
// (raw JSON, as the child writes them), "wait" never answers, and "work"
// sends progress for the call's token written as progressAs (raw JSON),
// then answers. Every line the child reads goes to heard.
func idChild(askID, token, progressAs string, heard chan<- string) *fakeProcess {
	return startScripted(answerSession(`{"tools":{}}`, `{"name":"ask"},{"name":"wait"},{"name":"work"}`,
		func(m *jsonrpc.Message, line []byte, out io.Writer) {
			heard <- strings.TrimSuffix(string(line), "\n")
			if m.Method != "tools/call" {
				return
			}
			switch name, _ := jsonrpc.StringMember(m.Params, "name"); name {
			case "ask":
				out.Write([]byte(`{"jsonrpc":"2.0","id":` + askID + `,"method":"sampling/createMessage","params":{"_meta":{"progressToken":` + token + `},"messages":[],"maxTokens":1}}` + "\n"))
			case "work":
				out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + progressAs + `,"progress":1}}` + "\n"))
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{}`)))
			}
		}))
}

// serveIDChild serves an aggregator over one idChild, "k", to a client
// that declared sampling, and returns what the child hears. Its calls to
// "ask" and "wait" are never answered: leftInFlight.
func serveIDChild(t *testing.T, askID, token, progressAs string) (*harness, <-chan string) {
	heard := make(chan string, 100)
	h := serveOptions(t, Options{Separator: ":", Start: func(config.Server) (Process, error) {
		return idChild(askID, token, progressAs, heard), nil
	}}, "k")
	h.leftInFlight()
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h, heard
}

// hear returns the first line the child hears that contains want.
func hear(t *testing.T, heard <-chan string, want string) string {
	t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case line := <-heard:
			if strings.Contains(line, want) {
				return line
			}
		case <-timeout:
			t.Fatalf("the child heard nothing with %s within %v", want, waitLimit)
			return ""
		}
	}
}

// The client's progress on a server's request reaches the server under the
// server's own token, byte for byte, however the client writes the token
// the aggregator gave it: "/" as "\/" or as "\u002f".
func TestClientProgressOnAServersRequestIsFoundByValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, token string // the server's token, as it writes it
		slash       string // how the client writes "/" in the aggregator's token
	}{
		{"server writes / and client writes \\/", `"tok/1"`, `\/`},
		{"server writes \\/ and client writes \\u002f", `"tok\/1"`, `\u002f`},
		{"server writes / and client writes \\u002F", `"tok/1"`, `\u002F`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, heard := serveIDChild(t, `"s/1"`, tt.token, `0`)
			h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:ask"}}`)
			req, err := jsonrpc.Parse([]byte(h.read()))
			if err != nil || req.Method != "sampling/createMessage" {
				t.Fatalf("want the server's sampling request, got %+v (%v)", req, err)
			}
			meta, _ := jsonrpc.Member(req.Params, "_meta")
			ours, _ := jsonrpc.Member(meta, "progressToken")
			if !strings.Contains(string(ours), "/") || string(ours) == tt.token {
				t.Fatalf("the client got the token %s: want one of the aggregator's, with a /", ours)
			}
			escaped := strings.ReplaceAll(string(ours), "/", tt.slash)
			h.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + escaped + `,"progress":1,"total":2}}`)
			want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tt.token + `,"progress":1,"total":2}}`
			if got := hear(t, heard, "notifications/progress"); got != want {
				t.Errorf("the client's progress under %s reached the server as\n got %s\nwant %s", escaped, got, want)
			}
			h.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
			if got := hear(t, heard, `"result"`); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"s/1","result":`) {
				t.Errorf("the server got the answer %s, want it under its id \"s/1\"", got)
			}
		})
	}
}

// A server's progress on a client's call reaches the client however the
// server escapes the client's token (its bytes, as on a direct
// connection).
func TestServerProgressOnAClientsCallIsFoundByValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ client, server string }{
		{`"tok/1"`, `"tok\/1"`},
		{`"tok\/1"`, `"tok/1"`},
		{`7`, `7.0`},
	} {
		h, _ := serveIDChild(t, `"s/1"`, `0`, tt.server)
		h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:work","_meta":{"progressToken":` + tt.client + `}}}`)
		want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tt.server + `,"progress":1}}`
		if got := h.read(); got != want {
			t.Errorf("the client's token %s, the server's progress under %s:\n got %s\nwant %s", tt.client, tt.server, got, want)
		}
		if got := h.read(); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
			t.Errorf("the call answered %s", got)
		}
	}
}

// The client's cancel reaches the server whichever way it writes the
// request's id, and a server's cancel of its request reaches the client
// likewise; each peer is told under the id it knows.
func TestCancelsAreFoundByValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ id, cancel string }{
		{`"req/1"`, `"req\/1"`},
		{`"req\/1"`, `"req/1"`},
		{`"req/1"`, `"\u0072eq\u002f1"`},
		{`5`, `5.0`},
	} {
		h, heard := serveIDChild(t, `"s/1"`, `0`, `0`)
		h.send(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"tools/call","params":{"name":"k:wait"}}`)
		call, err := jsonrpc.Parse([]byte(hear(t, heard, `"name":"wait"`)))
		if err != nil {
			t.Fatal(err)
		}
		h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tt.cancel + `,"reason":"no"}}`)
		want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(call.ID) + `,"reason":"no"}}`
		if got := hear(t, heard, "notifications/cancelled"); got != want {
			t.Errorf("call %s cancelled as %s: the server heard\n got %s\nwant %s", tt.id, tt.cancel, got, want)
		}
		h.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if got := h.read(); got != `{"jsonrpc":"2.0","id":"after","result":{}}` {
			t.Errorf("call %s cancelled as %s was answered: %s", tt.id, tt.cancel, got)
		}
	}
}

// A server's cancel of its request to the client, under its id written
// another way, reaches the client under the aggregator's id.
func TestServerCancelIsFoundByValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ id, cancel string }{{`"s/1"`, `"s\/1"`}, {`"s\/1"`, `"s/1"`}, {`8`, `8e0`}} {
		seen := make(chan struct{}) // the client has the request: it cannot be withdrawn unseen
		h := serveOptions(t, Options{Separator: ":", Start: func(config.Server) (Process, error) {
			return startScripted(answerSession(`{"tools":{}}`, `{"name":"ask"}`, func(m *jsonrpc.Message, _ []byte, out io.Writer) {
				if m.Method == "tools/call" {
					out.Write([]byte(`{"jsonrpc":"2.0","id":` + tt.id + `,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}` + "\n"))
					go func() {
						<-seen
						out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tt.cancel + `}}` + "\n"))
					}()
				}
			})), nil
		}}, "k")
		h.leftInFlight() // the call to "ask" is never answered
		h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:ask"}}`)
		req, err := jsonrpc.Parse([]byte(h.read()))
		if err != nil || req.Method != "sampling/createMessage" {
			t.Fatalf("want the server's sampling request, got %+v (%v)", req, err)
		}
		close(seen)
		want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(req.ID) + `}}`
		if got := h.read(); got != want {
			t.Errorf("the server's cancel of %s written %s reached the client as\n got %s\nwant %s", tt.id, tt.cancel, got, want)
		}
	}
}

// The client's answer to a server's request, under the aggregator's id
// written as another spelling of the same number, reaches the server.
func TestClientAnswerIsFoundByValue(t *testing.T) {
	t.Parallel()
	h, heard := serveIDChild(t, `"s/1"`, `"t"`, `0`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:ask"}}`)
	req, err := jsonrpc.Parse([]byte(h.read()))
	if err != nil || req.Method != "sampling/createMessage" {
		t.Fatalf("want the server's sampling request, got %+v (%v)", req, err)
	}
	h.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `.0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
	want := `{"jsonrpc":"2.0","id":"s/1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
	if got := hear(t, heard, `"result"`); got != want {
		t.Errorf("the client's answer under %s.0 reached the server as\n got %s\nwant %s", req.ID, got, want)
	}
}

// Task ids are strings, looked up by their text: a status or a related
// task under a task id that is not a string (0) is no task's, not even
// that of the task "" (which a non-string id decodes to nothing like).
func TestATaskIDThatIsNotAStringIsNoTasks(t *testing.T) {
	t.Parallel()
	h := serve(t, ":", func(config.Server) (Process, error) {
		return startScripted(answerSession(`{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}}`, `{"name":"work","execution":{"taskSupport":"optional"}}`,
			func(m *jsonrpc.Message, _ []byte, out io.Writer) {
				if m.Method != "tools/call" {
					return
				}
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"task":{"taskId":"","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":null}}`)))
				out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":0,"status":"failed","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:01Z","ttl":null}}` + "\n" +
					`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x","_meta":{"io.modelcontextprotocol/related-task":{"taskId":0}}}}` + "\n"))
			})), nil
	}, "k")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:work","task":{}}}`); !strings.Contains(got, `"taskId":"mcp-simple-aggregator-task-`) {
		t.Fatalf("the task-augmented call answered %s", got)
	}
	if got, want := h.read(), `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x","_meta":{}}}`; got != want {
		t.Errorf("after a status and a message tied to the task id 0, the client got\n got %s\nwant %s (no status; the message untied)", got, want)
	}
}

// Likewise for the tasks the client runs for a server: a server's tasks/*
// or the client's tasks/list entry under the task id 0 is not the
// client's task "".
func TestAClientTaskIDThatIsNotAStringIsNoTasks(t *testing.T) {
	t.Parallel()
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}}})
	c := a.children()[0]
	if a.relay.registerClientTask(c, []byte(`""`), []byte(`{}`)) == nil {
		t.Fatal("the client's task \"\" was not registered")
	}
	_, task, bad := c.childTaskRequest(&jsonrpc.Message{ID: []byte(`1`), Method: "tasks/get", Params: []byte(`{"taskId":0}`)})
	if task != nil || !strings.Contains(string(bad), `"code":-32602`) {
		t.Errorf("tasks/get of the task id 0: task %v, answer %s; want -32602", task, bad)
	}
	if got := a.relay.childsClientTasks(c, []byte(`{"tasks":[{"taskId":0},{"taskId":""}]}`)); string(got) != `{"tasks":[{"taskId":""}]}` {
		t.Errorf("the client's tasks/list for the server: %s, want only the task \"\"", got)
	}
}
