package aggregator

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// TestChildDroppedWhileItsRequestIsRelayed: a child dropped while its
// reader relays a request with a progress token leaves no progress route
// behind, whichever comes first (and under -race, no race on the token).
func TestChildDroppedWhileItsRequestIsRelayed(t *testing.T) {
	t.Parallel()
	m, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"_meta":{"progressToken":7}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 500; i++ {
		a := New(Options{Name: "agg", Separator: ":", Servers: []config.Server{{Key: "k", Command: "fake"}}})
		a.client.conn = jsonrpc.NewConn(nil, io.Discard, jsonrpc.Options{})
		a.client.begin(clientInit{era: eraLegacy, version: eras.LatestLegacy, caps: capabilities.ParseClient([]byte(`{"sampling":{}}`))})
		c := a.children()[0]
		c.up = a.client.conn.NewLane()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); c.relayToClient(m) }()
		go func() { defer wg.Done(); c.Drop(errors.New("gone")) }()
		wg.Wait()
		a.life.Wait()
		if n := len(a.relay.progress.TakeAll()); n > 0 {
			t.Fatalf("run %d: %d progress routes left behind by a dropped child", i, n)
		}
	}
}

// samplingChild is a child with one tool, ask, that asks the client for
// sampling when called; the answers it gets go to got.
func samplingChild(got chan<- string) *fakeProcess {
	return startScripted(func(m *jsonrpc.Message, line []byte, out io.Writer) {
		switch {
		case m.IsResponse():
			got <- string(line)
		case m.Method == "tools/call":
			out.Write([]byte(`{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}` + "\n"))
		case m.Method == "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`)))
		case m.Method == "tools/list":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"ask","inputSchema":{"type":"object"}}]}`)))
		}
	})
}

// TestBrokenAnswerToAChildRequestEndsIt: the client's broken answer to a
// child's request ends that request (the child gets an error) on a line
// of its own and inside a batch alike, and gets no answer itself.
func TestBrokenAnswerToAChildRequestEndsIt(t *testing.T) {
	t.Parallel()
	for _, inBatch := range []bool{false, true} {
		got := make(chan string, 10)
		h := serveOptions(t, Options{Separator: ":", Start: func(config.Server) (Process, error) {
			return samplingChild(got), nil
		}}, "s")
		h.leftInFlight() // the call is never answered
		send, read := h.send, h.read
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
		read()
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s:ask"}}`)
		m, err := jsonrpc.Parse([]byte(read())) // the sampling request, under our id
		if err != nil || m.Method != "sampling/createMessage" {
			t.Fatalf("expected the child's sampling request, got %v %v", m, err)
		}
		broken := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{},"error":{"code":1,"message":"x"}}`
		if inBatch {
			broken = "[" + broken + "]"
		}
		send(broken)
		send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		if line := read(); !strings.Contains(line, `"id":"after"`) {
			t.Errorf("batch %v: the broken answer was answered: %s", inBatch, line)
		}
		select {
		case answer := <-got:
			if !strings.Contains(answer, `"id":"s1"`) || !strings.Contains(answer, `"code":-32603`) {
				t.Errorf("batch %v: the child got %s", inBatch, answer)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("batch %v: the child's request was never ended", inBatch)
		}
	}
}

// TestCallToAChildWhoseOutputEndedDoesNotStallTheReader: a tools/call to a
// child whose stdout has ended, before the child is dropped, fails without
// holding up the client's reader while the aggregator learns how the
// child ended: a ping read after it is answered first.
func TestCallToAChildWhoseOutputEndedDoesNotStallTheReader(t *testing.T) {
	t.Parallel()
	var fake *fakeProcess
	h := serve(t, ":", func(config.Server) (Process, error) {
		fake = startFake(transcriptChild("alpha"))
		return fake, nil
	}, "alpha")
	send, read := h.send, h.read
	send(initLine)
	read()
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	read()
	fake.stdoutW.Close() // its output ends; the process lives on
	<-h.a.children()[0].Conn().Done()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha:echo","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if line := read(); line != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Fatalf("first answer %s, want the ping's", line)
	}
	if line := read(); !strings.Contains(line, `"id":3,"error"`) || !strings.Contains(line, `server \"alpha\" closed its stdout`) {
		t.Fatalf("the call: %s", line)
	}
}

// TestShutdownAnswersARequestServedHere: a request served here when the
// client closes its input (a resources/read refreshing the lists for a URI
// nobody listed) gets the shutdown error, not a wrong "not found".
func TestShutdownAnswersARequestServedHere(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	lists := 0
	child := func(method string, params []byte) string {
		switch method {
		case "initialize":
			return `{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"r","version":"1"}}`
		case "resources/list":
			mu.Lock()
			defer mu.Unlock()
			if lists++; lists > 1 {
				return "" // the refresh never ends
			}
			return `{"resources":[]}`
		case "resources/templates/list":
			return `{"resourceTemplates":[]}`
		}
		return `{"tools":[]}`
	}
	// Nothing but the shutdown answers the read: the test does not wait out
	// answerGrace, it hurries the end as a signal would.
	h := serveOptions(t, Options{Separator: ":", Start: func(config.Server) (Process, error) { return startFake(child), nil }}, "r")
	send, read, closeInput := h.send, h.read, h.closeInput
	send(initLine)
	read()
	send(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"x://nobody"}}`)
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	read() // the ping: the read is being served
	closeInput()
	h.hurry()
	if line := read(); line != `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"mcp-simple-aggregator is shutting down"}}` {
		t.Fatalf("at shutdown: %s", line)
	}
}

// floodChild is a child with a tool, flood, that sends n
// notifications/tools/list_changed before it answers; the tools/list
// requests after that wait for release, and are counted in lists.
func floodChild(n int, release <-chan struct{}, lists *atomic.Int64) *fakeProcess {
	flooded := false // the script runs on one goroutine
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"f","version":"1"}}`
		case "tools/list":
			if flooded {
				<-release
				lists.Add(1)
			}
			result = `{"tools":[{"name":"flood","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
			for i := 0; i < n; i++ {
				out.Write(note)
			}
			flooded = true
		}
		if m.IsRequest() {
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result)))
		}
	})
}

// TestListChangedFloodIsCoalesced: a thousand list_changed notifications
// while a refresh waits cost one more refresh, not a thousand, and the
// client hears of each refresh once.
func TestListChangedFloodIsCoalesced(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var lists atomic.Int64
	h := serve(t, ":", func(config.Server) (Process, error) { return floodChild(1000, release, &lists), nil }, "f")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"f:flood"}}`); !strings.Contains(got, `"id":2,"result"`) {
		t.Fatalf("the flood call: %s", got)
	}
	close(release)
	// The first refresh, then the one that the rest asked for.
	for i := 0; i < 2; i++ {
		if got := h.read(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
			t.Fatalf("line %d after the flood: %s", i+1, got)
		}
	}
	h.closeInput()
	if rest := h.rest(); len(rest) > 0 {
		t.Errorf("more after the two refreshes: %d lines, the first %s", len(rest), rest[0])
	}
	if n := lists.Load(); n != 2 {
		t.Errorf("the child was asked for its tools %d times after the flood, want 2", n)
	}
}

// progressChild is a child with a tool, work, that sends progress for the
// call's own token and for a token of no call of its, then answers.
func progressChild() *fakeProcess {
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		result := `{}`
		switch m.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"1"}}`
		case "tools/list":
			result = `{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			meta, _ := jsonrpc.Member(m.Params, "_meta")
			token, _ := jsonrpc.Member(meta, "progressToken")
			for _, tok := range []string{`"not-yours"`, string(token), `"caf\u00e9"`} {
				out.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1}}` + "\n"))
			}
		}
		if m.IsRequest() {
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result)))
		}
	})
}

// TestProgressOnlyForTheChildsOwnCalls: a child's progress reaches the
// client only under the token of a call in flight to that child (however
// the child escapes it); progress under any other token is dropped, and
// so is progress after the call's answer.
func TestProgressOnlyForTheChildsOwnCalls(t *testing.T) {
	t.Parallel()
	h := serve(t, ":", func(config.Server) (Process, error) { return progressChild(), nil }, "p")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"p:work","_meta":{"progressToken":"café"}}}`)
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"café","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"caf\u00e9","progress":1}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
	} {
		if got := h.read(); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
	// Once the call is answered its token is no longer the child's.
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"p:work","_meta":{"progressToken":7}}}`)
	for _, want := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
	} {
		if got := h.read(); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	}
}

// TestHeldMessagesAreBounded: what a child sends before the client is
// initialized waits at the gate up to heldLimit bytes; past it, its
// notifications are dropped (and counted in one warning) and its requests
// are refused at once.
func TestHeldMessagesAreBounded(t *testing.T) {
	t.Parallel()
	const notifications = 5000
	data := strings.Repeat("x", 1000)
	refused := make(chan string, 1)
	child := startScripted(func(m *jsonrpc.Message, line []byte, out io.Writer) {
		switch {
		case m.Method == "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"n","version":"1"}}`)))
		case m.Method == "tools/list":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[]}`)))
		case m.Method == "notifications/initialized":
			for i := 0; i < notifications; i++ {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}`+"\n", data)
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"r1","method":"roots/list","params":{"_meta":{"pad":"%s"}}}`+"\n", data)
		case m.IsResponse() && string(m.ID) == `"r1"`:
			refused <- string(line)
		}
	})
	h := serve(t, ":", func(config.Server) (Process, error) { return child, nil }, "n")
	h.exchange(initLine)
	h.startServers()
	select {
	case line := <-refused:
		if !strings.Contains(line, `"code":-32603`) || !strings.Contains(line, "not initialized yet") {
			t.Errorf("the child's request past the bound was answered %s", line)
		}
	case <-time.After(waitLimit):
		t.Fatal("the child's request past the bound was not refused")
	}
	go func() { // the held notifications go up while these are sent
		io.WriteString(h.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(h.in, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	}()
	// The ping's answer takes its turn with the held notifications (the
	// client's queue serves its sources in turn): read until both are in.
	relayed, pinged, want := 0, false, notifications
	for !pinged || relayed < want {
		line := h.read()
		if line == `{"jsonrpc":"2.0","id":2,"result":{}}` {
			pinged = true
			want -= droppedCount(t, h.logged()) // logged as the gate opened, before the ping was read
			continue
		}
		if !strings.Contains(line, `"method":"notifications/message"`) {
			t.Fatalf("unexpected line %.100s", line)
		}
		relayed++
	}
	if relayed == 0 || relayed*len(data) > heldLimit {
		t.Errorf("%d notifications of %d bytes relayed, want some and at most %d bytes", relayed, len(data), heldLimit)
	}
}

// droppedCount reads how many held notifications the log says were
// dropped.
func droppedCount(t *testing.T, log string) int {
	t.Helper()
	var n int
	i := strings.Index(log, `server "n": `)
	if i < 0 {
		t.Fatalf("the log says nothing of dropped notifications:\n%s", log)
	}
	if _, err := fmt.Sscanf(log[i:], `server "n": %d notifications it sent before the client was initialized were dropped`, &n); err != nil {
		t.Fatalf("the log does not say how many notifications were dropped (%v):\n%s", err, log)
	}
	return n
}

// TestMaxMessageSize: a client line over the limit gets -32600 under its
// id and is discarded, the next one is served; a child that sends a line
// over it is dropped as broken, its call failing with an error that says
// why, and the other child goes on.
func TestMaxMessageSize(t *testing.T) {
	t.Parallel()
	const limit = 4096
	huge := strings.Repeat("x", 2*limit)
	start := func(s config.Server) (Process, error) {
		list := toolServer(`{"name":"echo"}`)
		return startFake(func(method string, params []byte) string {
			switch {
			case method != "tools/call":
				return list(method, params)
			case s.Key == "big":
				return `{"content":[{"type":"text","text":"` + huge + `"}]}`
			default:
				return `{"content":[]}`
			}
		}), nil
	}
	h := serveOptions(t, Options{Separator: ":", Start: start, MaxMessageSize: limit}, "ok", "big")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	got := h.exchange(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"ok:echo","arguments":{"text":"` + huge + `"}}}`)
	if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"long","error":{"code":-32600,`) || !strings.Contains(got, "--max-message-size") {
		t.Errorf("a client line over the limit answered %s", got)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok:echo"}}`); got != `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}` {
		t.Errorf("the call after it answered %s", got)
	}

	got = h.exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"big:echo"}}`)
	if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,`) || !strings.Contains(got, `server \"big\" sent a message of`) {
		t.Errorf("a child's answer over the limit: %s", got)
	}
	if got := h.read(); got != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` {
		t.Errorf("after the child was dropped: %s, want tools/list_changed", got)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ok:echo"}}`); got != `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}` {
		t.Errorf("the other child after the drop answered %s", got)
	}
}

// TestInvalidUTF8FromAChildIsReplaced: nothing but valid UTF-8 reaches the
// client: each invalid byte of a child's answer becomes U+FFFD, as
// encoding/json decodes it; valid text, escapes included, passes as it is.
func TestInvalidUTF8FromAChildIsReplaced(t *testing.T) {
	t.Parallel()
	h := serve(t, ":", func(config.Server) (Process, error) {
		list := toolServer(`{"name":"t"}`)
		return startFake(func(method string, params []byte) string {
			if method == "tools/call" {
				return "{\"content\":[{\"type\":\"text\",\"text\":\"caf\xe9 \xff\xfe ok \\u00e9 é\"}]}"
			}
			return list(method, params)
		}), nil
	}, "u")
	h.exchange(initLine)
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"u:t"}}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"caf` + "\uFFFD \uFFFD\uFFFD" + ` ok \u00e9 é"}]}}`
	if got != want || !utf8.ValidString(got) {
		t.Errorf("answer with invalid UTF-8:\n got %q\nwant %q", got, want)
	}
}

// deafChild is a child with a tool, t, that stops reading its stdin in
// its first call until deaf closes; it records in seen the marker argument
// of every call it reads, and "cancelled" for every cancel.
func deafChild(deaf <-chan struct{}, mu *sync.Mutex, seen *[]string) *fakeProcess {
	list := toolServer(`{"name":"t"}`)
	first := true
	note := func(s string) {
		mu.Lock()
		*seen = append(*seen, s)
		mu.Unlock()
	}
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		switch {
		case m.Method == "notifications/cancelled":
			note("cancelled")
		case !m.IsRequest():
		case m.Method != "tools/call":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(list(m.Method, m.Params))))
		default:
			args, _ := jsonrpc.Member(m.Params, "arguments")
			marker, _ := jsonrpc.StringMember(args, "marker")
			note(marker)
			if first { // stop reading until the test says
				first = false
				<-deaf
			}
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[]}`)))
		}
	})
}

// TestAChildThatDoesNotReadIsBounded: what waits to be written to a child
// that stops reading its stdin is bounded: past MaxQueue, new requests to
// it fail at once, naming it and why; a cancel of a request still waiting
// takes it out of the queue (the child never sees it, nor a cancel); once
// the child reads again, requests go through again.
func TestAChildThatDoesNotReadIsBounded(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	deaf := make(chan struct{})
	var mu sync.Mutex
	var seen []string // the markers of the calls the child read
	start := func(config.Server) (Process, error) { return deafChild(deaf, &mu, &seen), nil }
	h := serveOptions(t, Options{Separator: ":", Start: start, MaxQueue: limit}, "d")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// Once the child is ready, calls are served in the order they are
	// read (before, they wait for it on goroutines of their own).
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)

	pad := strings.Repeat("p", 8<<10)
	callLine := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"d:t","arguments":{"marker":"m%d","pad":"%s"}}}`, id, id, pad)
	}
	// Until the queue is full, calls wait; then they fail at once (before
	// the ping behind them is answered).
	id, refused := 10, ""
	for ; refused == "" && id < 10+4*limit/len(pad); id++ {
		h.send(callLine(id))
		h.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
		if line := h.read(); line != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
			refused = line
			h.read() // the ping's
		}
	}
	if !strings.Contains(refused, fmt.Sprintf(`"id":%d,"error":{"code":-32603`, id-1)) || !strings.Contains(refused, `server \"d\" is not reading its input`) {
		t.Fatalf("no call refused while the child does not read; last answer %q", refused)
	}
	if queued := (id - 11) * len(callLine(id)); queued < limit/2 || queued > 2*limit {
		t.Errorf("refused after %d bytes of calls, with a limit of %d", queued, limit)
	}
	// A cancel of a call still waiting: the child will never see it.
	withdrawn := id - 2
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, withdrawn))
	// The cancel is read before the child reads again (else the queue may
	// drain first, and the cancel rightly go to the child).
	if line := h.exchange(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`); line != `{"jsonrpc":"2.0","id":"ping","result":{}}` {
		t.Fatalf("ping after the cancel: %s", line)
	}
	close(deaf)
	// The child reads again: every call still waiting is answered, and
	// new ones go through.
	for i := 10; i < id-1; i++ {
		if i == withdrawn {
			continue
		}
		if got := h.read(); !strings.Contains(got, `"result":{"content":[]}`) {
			t.Fatalf("after the child read again: %s", got)
		}
	}
	if got := h.exchange(callLine(1000)); got != `{"jsonrpc":"2.0","id":1000,"result":{"content":[]}}` {
		t.Errorf("a call after the queue drained: %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, m := range seen {
		if m == fmt.Sprintf("m%d", withdrawn) || m == "cancelled" {
			t.Errorf("the child saw %s of the withdrawn call m%d (saw %v)", m, withdrawn, seen)
		}
	}
}

// TestLargeResultsPassByteForByte: a result of largeResult bytes and more
// is written from where it lies (not copied into a line): the client gets
// it byte for byte, on its own line and inside a batch.
func TestLargeResultsPassByteForByte(t *testing.T) {
	t.Parallel()
	result := `{"content":[{"type":"text","text":"` + strings.Repeat("é<\u2028>", largeResult/4) + `"}],"isError":false}`
	h := serve(t, ":", func(config.Server) (Process, error) {
		list := toolServer(`{"name":"big"}`)
		return startFake(func(method string, params []byte) string {
			if method == "tools/call" {
				return result
			}
			return list(method, params)
		}), nil
	}, "l")
	h.exchange(initLine)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":"one","method":"tools/call","params":{"name":"l:big"}}`),
		`{"jsonrpc":"2.0","id":"one","result":`+result+`}`; got != want {
		t.Errorf("large result on its own line: %d bytes, want %d", len(got), len(want))
	}
	if got, want := h.exchange(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"l:big"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`),
		`[{"jsonrpc":"2.0","id":1,"result":`+result+`},{"jsonrpc":"2.0","id":2,"result":{}}]`; got != want {
		t.Errorf("large result in a batch: %d bytes, want %d", len(got), len(want))
	}
}
