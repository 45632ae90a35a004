package aggregator

import (
	"io"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The tests of who owns a resource URI and an elicitation: a server's
// catch-all template never takes another's resources, nor a dead
// server's, and a server's notifications about a URI or an elicitation
// reach the client only from their owner.

// ownerServer is a scripted server, key, with resources and the given
// templates and resources (raw entries); reads of it are sent to reads.
// Its one tool, say, writes each element of arguments.send as a line,
// then answers the call, with arguments.error as its error if there is
// one: the test speaks through it.
func ownerServer(key, templates, resources string, reads chan<- string) func(*jsonrpc.Message, []byte, io.Writer) {
	return func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
		switch m.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"` + key + `","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[{"name":"say","inputSchema":{"type":"object"}}]}`)
		case "resources/list":
			answer(`{"resources":[` + resources + `]}`)
		case "resources/templates/list":
			answer(`{"resourceTemplates":[` + templates + `]}`)
		case "resources/read", "resources/subscribe":
			uri, _ := jsonrpc.StringMember(m.Params, "uri")
			reads <- key + " " + m.Method + " " + uri
			answer(`{"contents":[{"uri":` + string(jsonrpc.AppendString(nil, uri)) + `,"text":"from ` + key + `"}]}`)
		case "tools/call":
			args, _ := jsonrpc.Member(m.Params, "arguments")
			send, _ := jsonrpc.Member(args, "send")
			lines, _ := jsonrpc.Elements(send)
			for _, l := range lines {
				out.Write(append(append([]byte(nil), l...), '\n'))
			}
			if e, ok := jsonrpc.Member(args, "error"); ok {
				out.Write(jsonrpc.AppendError(nil, m.ID, e))
				return
			}
			answer(`{"content":[]}`)
		}
	}
}

// serveOwners serves "catchall" (template file:///{+path}) and "docs"
// (template file:///docs/{name}, resource file:///notes/a.txt) in the
// given order, to a client with caps; it returns the harness, the reads
// the servers got, and docs' process.
func serveOwners(t *testing.T, caps string, keys ...string) (*harness, chan string, *fakeProcess) {
	t.Helper()
	reads := make(chan string, 16)
	docs := make(chan *fakeProcess, 1)
	h := serve(t, ":", func(s config.Server) (Process, error) {
		if s.Key == "docs" {
			p := startScripted(ownerServer("docs", `{"uriTemplate":"file:///docs/{name}","name":"doc"}`, `{"uri":"file:///notes/a.txt","name":"a"}`, reads))
			docs <- p
			return p, nil
		}
		return startScripted(ownerServer("catchall", `{"uriTemplate":"file:///{+path}","name":"any file"}`, ``, reads)), nil
	}, keys...)
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.startServers()
	return h, reads, <-docs
}

// readBy reads the URI and returns which server got the read.
func readBy(t *testing.T, h *harness, reads chan string, method, uri string) string {
	t.Helper()
	line := h.exchange(`{"jsonrpc":"2.0","id":"r","method":"` + method + `","params":{"uri":"` + uri + `"}}`)
	if strings.Contains(line, `"error"`) {
		t.Fatalf("%s %s: %s", method, uri, line)
	}
	got := <-reads
	return strings.Fields(got)[0]
}

// The most specific template wins whatever the config order, and a URI a
// server listed beats every template.
func TestTheMostSpecificOwnerWinsWhateverTheOrder(t *testing.T) {
	t.Parallel()
	for _, order := range [][]string{{"catchall", "docs"}, {"docs", "catchall"}} {
		h, reads, _ := serveOwners(t, `{}`, order...)
		for _, tc := range []struct{ method, uri, want string }{
			{"resources/read", "file:///docs/plan", "docs"},
			{"resources/subscribe", "file:///docs/plan", "docs"},
			{"resources/read", "file:///notes/a.txt", "docs"},
			{"resources/read", "file:///etc/hosts", "catchall"},
		} {
			if got := readBy(t, h, reads, tc.method, tc.uri); got != tc.want {
				t.Errorf("order %v: %s %s went to %s, want %s", order, tc.method, tc.uri, got, tc.want)
			}
		}
	}
}

// A URI of a server that died is answered with an error naming it, and
// never reaches the catch-all of another.
func TestADeadServersURIsReachNoOther(t *testing.T) {
	t.Parallel()
	h, reads, docs := serveOwners(t, `{}`, "catchall", "docs")
	docs.Stop()
	readUntil(t, h, `"notifications/resources/list_changed"`)
	for _, uri := range []string{"file:///docs/plan", "file:///notes/a.txt"} {
		for _, method := range []string{"resources/read", "resources/subscribe"} {
			got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":{"uri":"` + uri + `"}}`)
			want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Resource ` + uri + ` is unavailable: server \"docs\" stopped working and was dropped (the aggregator's log says why)"}}`
			if got != want {
				t.Errorf("%s %s:\n got %s\nwant %s", method, uri, got, want)
			}
		}
	}
	select {
	case r := <-reads:
		t.Errorf("a dead server's URI reached another: %s", r)
	default:
	}
}

// say has server key send lines (raw JSON objects, comma-separated) and
// answer the call id with errObj ("" for a result).
func say(h *harness, id, key, lines, errObj string) {
	args := `{"send":[` + lines + `]`
	if errObj != "" {
		args += `,"error":` + errObj
	}
	h.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"` + key + `:say","arguments":` + args + `}}}`)
}

// next returns the client's lines up to the answer of id, that answer
// last.
func next(t *testing.T, h *harness, id string) []string {
	t.Helper()
	var lines []string
	for {
		l := h.read()
		lines = append(lines, l)
		if strings.Contains(l, `"id":"`+id+`"`) {
			return lines
		}
	}
}

// A server's resources/updated for a URI another server owns (by its
// listing or its more specific template) never reaches the client; its
// own does.
func TestResourceUpdatesComeOnlyFromTheOwner(t *testing.T) {
	t.Parallel()
	h, _, _ := serveOwners(t, `{}`, "catchall", "docs")
	updated := func(uri string) string {
		return `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"` + uri + `"}}`
	}
	say(h, "c1", "catchall", updated("file:///docs/plan")+","+updated("file:///notes/a.txt")+","+updated("file:///etc/hosts"), "")
	if got := next(t, h, "c1"); len(got) != 2 || got[0] != updated("file:///etc/hosts") {
		t.Errorf("catchall's updates reached the client as %q", got)
	}
	say(h, "c2", "docs", updated("file:///docs/plan")+","+updated("file:///notes/a.txt")+","+updated("file:///etc/hosts"), "")
	if got := next(t, h, "c2"); len(got) != 3 || got[0] != updated("file:///docs/plan") || got[1] != updated("file:///notes/a.txt") {
		t.Errorf("docs' updates reached the client as %q", got)
	}
}

// A server's elicitation/complete reaches the client only for a URL
// elicitation of its own that went up (its elicitation/create, or a -32042
// error's elicitations), once.
func TestElicitationCompleteComesOnlyFromTheOwner(t *testing.T) {
	t.Parallel()
	h, _, _ := serveOwners(t, `{"elicitation":{"url":{}}}`, "catchall", "docs")
	complete := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"` + id + `"}}`
	}
	say(h, "c1", "docs", `{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}}`, "")
	if got := next(t, h, "c1"); len(got) != 2 || !strings.Contains(got[0], `"elicitationId":"e1"`) {
		t.Fatalf("docs' elicitation reached the client as %q", got)
	}
	say(h, "c2", "docs", ``, `{"code":-32042,"message":"sign in first","data":{"elicitations":[{"mode":"url","message":"sign in","url":"https://example.com/2","elicitationId":"e2"}]}}`)
	if got := next(t, h, "c2"); len(got) != 1 || !strings.Contains(got[0], `"code":-32042`) {
		t.Fatalf("docs' -32042 reached the client as %q", got)
	}
	for _, tc := range []struct {
		key, id string
		passes  bool
	}{
		{"catchall", "e1", false}, {"catchall", "e2", false}, {"docs", "e9", false},
		{"docs", "e1", true}, {"docs", "e2", true},
		{"docs", "e1", false}, // once
	} {
		say(h, "c", tc.key, complete(tc.id), "")
		got := next(t, h, "c")
		if passes := len(got) == 2 && got[0] == complete(tc.id); passes != tc.passes || len(got) > 2 {
			t.Errorf("%s's elicitation/complete of %s: the client got %q", tc.key, tc.id, got)
		}
	}
}
