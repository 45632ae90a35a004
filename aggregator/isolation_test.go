package aggregator

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/output"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The isolation tests: while one server ("bad") misbehaves with a call in
// flight, the aggregator itself (ping) and another server ("good") keep
// answering. Each waits on events only; the hook watchdog (TestMain)
// fails any of them in which a reader waited.

// hostile is a scriptable misbehaving child with one tool, work, whose
// calls it reports on calls and leaves unanswered; the test then makes it
// misbehave through its process.
type hostile struct {
	*fakeProcess
	calls chan *jsonrpc.Message // each tools/call it read
	got   chan string           // each answer it read (to its own requests)
	hold  chan struct{}         // while open, it reads nothing more after a call
}

func startHostile(holdAfterCall bool) *hostile {
	h := &hostile{calls: make(chan *jsonrpc.Message, 100), got: make(chan string, 1000), hold: make(chan struct{})}
	if !holdAfterCall {
		close(h.hold)
	}
	h.fakeProcess = startScripted(func(m *jsonrpc.Message, line []byte, out io.Writer) {
		switch {
		case m.IsResponse():
			h.got <- string(line)
		case m.Method == "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bad","version":"1"}}`)))
		case m.Method == "tools/list":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"work","inputSchema":{"type":"object"}}]}`)))
		case m.Method == "tools/call":
			h.calls <- m
			<-h.hold // it stops reading its stdin
		}
	})
	return h
}

// call returns the next tools/call bad reads, failing t when none comes
// within waitLimit.
func (h *hostile) call(t *testing.T) *jsonrpc.Message {
	t.Helper()
	select {
	case m := <-h.calls:
		return m
	case <-time.After(waitLimit):
		t.Fatalf("bad read no call within %v", waitLimit)
	}
	return nil
}

// goodServer answers initialize, a tools/list of echo, and every call.
func goodServer() *fakeProcess {
	return startFake(toolServer(`{"name":"echo","inputSchema":{"type":"object"}}`))
}

// isolationSession serves bad and good, initializes the client (with
// sampling) and sends the call bad:work under id 10 with params extra
// (members after the name), returning once bad has read it, with the call
// as bad read it.
func isolationSession(t *testing.T, bad *hostile, extra string) (*harness, *jsonrpc.Message) {
	t.Helper()
	h := serveOptions(t, Options{Separator: ":", Start: func(s config.Server) (Process, error) {
		if s.Key == "bad" {
			return bad, nil
		}
		return goodServer(), nil
	}}, "bad", "good")
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
	h.startServers() // good is up before bad misbehaves
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"bad:work"` + extra + `}}`)
	return h, bad.call(t)
}

// othersAnswer sends a ping (id 20) and a call to good (id 21) and reads
// until both are answered, passing every other line to other; it returns
// how many other lines came between.
func othersAnswer(t *testing.T, h *harness, other func(line string)) int {
	t.Helper()
	h.send(`{"jsonrpc":"2.0","id":20,"method":"ping"}`)
	h.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"good:echo","arguments":{}}}`)
	pinged, echoed, between := false, false, 0
	for !pinged || !echoed {
		switch line := h.read(); line {
		case `{"jsonrpc":"2.0","id":20,"result":{}}`:
			pinged = true
		case `{"jsonrpc":"2.0","id":21,"result":{}}`:
			echoed = true
		default:
			between++
			if other != nil {
				other(line)
			}
		}
	}
	return between
}

// readUntil reads lines until one contains want, and returns it.
func readUntil(t *testing.T, h *harness, want string) string {
	t.Helper()
	for {
		if line := h.read(); strings.Contains(line, want) {
			return line
		}
	}
}

// othersAnswerThenCall10 is othersAnswer, then the end of the call in
// flight to bad (id 10), which may come before, between or after.
func othersAnswerThenCall10(t *testing.T, h *harness) string {
	t.Helper()
	var ended string
	othersAnswer(t, h, func(line string) {
		if strings.Contains(line, `"id":10`) {
			ended = line
		}
	})
	if ended == "" {
		ended = readUntil(t, h, `"id":10`)
	}
	return ended
}

// A server that closes its stdout and lives on: the others answer while
// the aggregator waits to learn how it ended, and its call in flight
// fails, naming it, once it has exited. (The wait running out, which names
// the closed stdout, is tested by
// TestCallToAChildWhoseOutputEndedDoesNotStallTheReader.)
func TestIsolationServerClosesItsStdoutWithACallInFlight(t *testing.T) {
	t.Parallel()
	bad := startHostile(false)
	h, _ := isolationSession(t, bad, "")
	bad.stdoutW.Close() // and it lives on, until the others have answered
	var failed string
	othersAnswer(t, h, func(line string) {
		if strings.Contains(line, `"id":10`) {
			failed = line // the wait ran out first, on a slow machine
		}
	})
	bad.Stop()
	if failed == "" {
		failed = readUntil(t, h, `"id":10`)
	}
	if !strings.Contains(failed, `server \"bad\" exited`) && !strings.Contains(failed, `server \"bad\" closed its stdout`) {
		t.Errorf("the call in flight to bad ended with %s", failed)
	}
}

func TestIsolationServerExitsWithACallInFlight(t *testing.T) {
	t.Parallel()
	bad := startHostile(false)
	h, _ := isolationSession(t, bad, "")
	bad.Stop()
	failed := othersAnswerThenCall10(t, h)
	if !strings.Contains(failed, `server \"bad\" exited`) {
		t.Errorf("the call in flight to bad ended with %s", failed)
	}
}

// A stopped server reads and writes nothing: calls to it wait in its queue,
// and reach it when it runs again; its answer reaches the client.
func TestIsolationServerStoppedWithCallsInFlight(t *testing.T) {
	t.Parallel()
	bad := startHostile(true)
	h, _ := isolationSession(t, bad, "")
	h.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"bad:work","arguments":{"n":11}}}`)
	othersAnswer(t, h, nil)
	close(bad.hold) // it runs again: its calls reach it
	call := bad.call(t)
	if !strings.Contains(string(call.Params), `"n":11`) {
		t.Fatalf("bad then read %s, want call 11", call.Params)
	}
	go io.WriteString(bad.stdoutW, string(jsonrpc.AppendResult(nil, call.ID, []byte(`{"content":[{"type":"text","text":"eleven"}]}`))))
	if got, want := readUntil(t, h, `"id":11`), `{"jsonrpc":"2.0","id":11,"result":{"content":[{"type":"text","text":"eleven"}]}}`; got != want {
		t.Errorf("call 11 was answered %s, want %s", got, want)
	}
	bad.Stop()
}

// A server that reads its stdin slowly holds a huge request in its queue.
func TestIsolationServerReadsSlowlyWithAHugeRequestQueued(t *testing.T) {
	t.Parallel()
	bad := startHostile(true)
	h, _ := isolationSession(t, bad, "")
	huge := strings.Repeat("x", 8<<20)
	h.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"bad:work","arguments":{"text":"` + huge + `"}}}`)
	othersAnswer(t, h, nil)
	close(bad.hold)
	if m := bad.call(t); !strings.Contains(string(m.Params), huge) {
		t.Error("the huge request reached bad cut")
	}
	bad.Stop()
}

// A server that writes one huge line slowly: the others are answered
// while the line is half written, and it arrives whole.
func TestIsolationServerWritesAHugeLineSlowly(t *testing.T) {
	t.Parallel()
	bad := startHostile(false)
	h, call := isolationSession(t, bad, "")
	text := strings.Repeat("y", 8<<20)
	answer := `{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	half := len(answer) / 2
	wrote := make(chan error, 1)
	go func() {
		_, err := io.WriteString(bad.stdoutW, answer[:half])
		wrote <- err
	}()
	othersAnswer(t, h, nil)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	go io.WriteString(bad.stdoutW, answer[half:]+"\n")
	want := `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
	if got := h.read(); got != want {
		t.Errorf("bad's huge answer arrived as %.100s... (%d bytes, want %d)", got, len(got), len(want))
	}
	bad.Stop()
}

// floodLine is a log notification of about 100 bytes.
const floodLine = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood flood flood"}}` + "\n"

// A server that floods notifications and progress: the answers of the
// others take their turn with the flood (at most a line of it each time),
// never wait behind the flood's backlog (up to output.LaneRoom: some 10,000
// lines), and the flood is slowed to the pace at which the client reads.
func TestIsolationServerFloodsNotificationsAndProgress(t *testing.T) {
	t.Parallel()
	bad := startHostile(false)
	h, _ := isolationSession(t, bad, `,"_meta":{"progressToken":"p"}`)
	stop := make(chan struct{})
	flooded := make(chan struct{})
	backlogged := make(chan struct{}) // closed once most of a lane's room is written
	go func() {
		defer close(flooded)
		written := 0
		for i := 0; ; i++ {
			line := floodLine
			if i%2 == 1 {
				line = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":%d}}`+"\n", i)
			}
			select {
			case <-stop:
				return
			default:
			}
			if _, err := io.WriteString(bad.stdoutW, line); err != nil {
				return
			}
			if written += len(line); written >= output.LaneRoom*3/4 && written-len(line) < output.LaneRoom*3/4 {
				close(backlogged)
			}
		}
	}()
	// Read nothing until the flood has a backlog in the client's queue:
	// of what it wrote, at most the harness's 100 lines and the readers'
	// buffers (64 KiB) are out of it.
	<-backlogged
	// Lines read ahead of the answers: the harness's buffer (100 lines),
	// its reader's and the pipe's, and a flood line or two per turn.
	const most = 300
	if n := othersAnswer(t, h, nil); n > most {
		t.Errorf("%d flood lines came before the others' answers, want at most %d", n, most)
	}
	close(stop)
	go func() {
		for range h.lines { // let the flood's last write through
		}
	}()
	<-flooded
	bad.Stop()
}

// A server that sends the client hundreds of requests, which the client
// answers slowly: each reaches the client, the others are answered
// meanwhile, and every answer reaches the server under its own id.
func TestIsolationServerSendsHundredsOfSamplingRequests(t *testing.T) {
	t.Parallel()
	const n = 300
	bad := startHostile(false)
	h, _ := isolationSession(t, bad, "")
	go func() {
		for i := range n {
			fmt.Fprintf(bad.stdoutW, `{"jsonrpc":"2.0","id":"s%d","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`+"\n", i)
		}
	}()
	var ids []string
	collect := func(line string) {
		if m, err := jsonrpc.Parse([]byte(line)); err == nil && m.Method == "sampling/createMessage" {
			ids = append(ids, string(m.ID))
		}
	}
	othersAnswer(t, h, collect)
	for len(ids) < n {
		collect(h.read())
	}
	for _, id := range ids {
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}`)
	}
	seen := map[string]bool{}
	for range n {
		m, err := jsonrpc.Parse([]byte(<-bad.got))
		if err != nil || m.Result == nil {
			t.Fatalf("bad got %v, %v", m, err)
		}
		seen[string(m.ID)] = true
	}
	if len(seen) != n {
		t.Errorf("bad got answers to %d distinct requests, want %d", len(seen), n)
	}
	bad.Stop()
}

// A call to a server that is up is served while another is still
// starting; tools/list waits for it, so that a client that ignores
// list_changed sees every tool.
func TestACallDoesNotWaitForAServerStillStarting(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var once sync.Once
	slow := startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		switch m.Method {
		case "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}`)))
		case "tools/list":
			<-release
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"late","inputSchema":{"type":"object"}}]}`)))
		}
	})
	defer once.Do(func() { close(release) })
	// good ran before; slow failed to start: initialize waits for neither,
	// the first list for slow.
	memory := warmMemory(t, Options{Start: func(s config.Server) (Process, error) {
		if s.Key == "slow" {
			return nil, errors.New("not this time")
		}
		return goodServer(), nil
	}}, "slow", "good")
	h := serveOptions(t, Options{Separator: ":", Memory: memory, Start: func(s config.Server) (Process, error) {
		if s.Key == "slow" {
			return slow, nil
		}
		return goodServer(), nil
	}}, "slow", "good")
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// good lists its tools a moment after initialize: until then a call
	// to it waits like any other. Try until one is served at once, before
	// the ping behind it.
	deadline := time.Now().Add(waitLimit)
	for try := 100; ; try++ {
		if time.Now().After(deadline) {
			t.Fatal("no call to good was served while slow was starting")
		}
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"good:echo","arguments":{}}}`, try))
		h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		first := h.read()
		for isEarlierTry(first, try) { // a call cancelled too late to stop it
			first = h.read()
		}
		if first == fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, try) {
			h.read() // the ping's answer
			break    // served while slow still starts
		}
		if first != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("unexpected line %s", first)
		}
		// The call waits for the start: cancel it and try again.
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, try))
	}
	h.send(`{"jsonrpc":"2.0","id":23,"method":"tools/list"}`)
	h.send(`{"jsonrpc":"2.0","id":24,"method":"ping"}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":24,"result":{}}` {
		t.Fatalf("tools/list did not wait for slow: %s", line)
	}
	once.Do(func() { close(release) })
	if list := readUntil(t, h, `"id":23`); !strings.Contains(list, `"slow:late"`) || !strings.Contains(list, `"good:echo"`) {
		t.Errorf("tools/list after slow started: %s", list)
	}
}

// slowServer lists its tools once release is closed.
func slowServer(release chan struct{}) Process {
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		switch m.Method {
		case "initialize":
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}`)))
		case "tools/list":
			<-release
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`)))
		}
	})
}

// A call waiting for the servers to start that the client cancels gets no
// answer at all (it got "shutting down" when its wait ended before the
// cancel was recorded).
func TestACancelledCallWaitingForTheStartGetsNoAnswer(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	released := make(chan struct{})
	close(released)
	memory := warmMemory(t, Options{Start: func(config.Server) (Process, error) { return slowServer(released), nil }}, "slow")
	h := serveOptions(t, Options{Separator: ":", Memory: memory, Start: func(config.Server) (Process, error) { return slowServer(release), nil }}, "slow")
	h.exchange(initLine) // slow is remembered: answered at once
	for i := range 1000 {
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow:x"}}`, 100+i))
		h.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, 100+i))
		h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if line := h.read(); line != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Fatalf("try %d: %s", i, line)
		}
	}
}

// isEarlierTry reports whether line answers a request of id 100 to try-1.
func isEarlierTry(line string, try int) bool {
	m, err := jsonrpc.Parse([]byte(line))
	if err != nil || !m.IsResponse() {
		return false
	}
	var id int
	_, err = fmt.Sscanf(string(m.ID), "%d", &id)
	return err == nil && id >= 100 && id < try
}

// A server that exits on the 2026-07-28 probe and is started again: its
// restart (held here until released) holds up no other server's start.
func TestIsolationServerRestartedAfterExitingOnTheProbe(t *testing.T) {
	t.Parallel()
	restart := make(chan struct{})
	goodListed := make(chan struct{})
	var once sync.Once
	legacy := func(name string, exitOnProbe bool, p **fakeProcess, listed func()) func(*jsonrpc.Message, []byte, io.Writer) {
		return func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			switch m.Method {
			case "server/discover":
				if exitOnProbe {
					(*p).Stop()
					return
				}
				out.Write(jsonrpc.AppendError(nil, m.ID, []byte(`{"code":-32601,"message":"Method not found"}`)))
			case "initialize":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+name+`","version":"1"}}`)))
			case "tools/list":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"x"}]}`)))
				listed()
			}
		}
	}
	var starts sync.Map
	start := func(s config.Server) (Process, error) {
		n, _ := starts.LoadOrStore(s.Key, new(int))
		*n.(*int)++
		var p *fakeProcess
		switch {
		case s.Key == "good":
			p = startScripted(legacy("good", false, &p, func() { once.Do(func() { close(goodListed) }) }))
		case *n.(*int) == 1:
			p = startScripted(legacy("flaky", true, &p, func() {}))
		default:
			<-restart // the restart takes its time
			p = startScripted(legacy("flaky", false, &p, func() {}))
		}
		return p, nil
	}
	h := serveOptions(t, Options{Start: start, ProbeTimeout: time.Hour}, "flaky", "good")
	h.send(modernLine("1", "tools/list", ""))
	select {
	case <-goodListed: // good started while flaky's restart was pending
	case <-time.After(waitLimit):
		t.Fatal("good did not start while flaky was being started again")
	}
	close(restart)
	if list := h.read(); !strings.Contains(list, `"flaky:x"`) || !strings.Contains(list, `"good:x"`) {
		t.Fatalf("tools/list: %s\n%s", list, h.logged())
	}
}

// A server that floods a modern client's subscriptions/listen with
// resources/updated is paced like any other flood, on its own lane: the
// aggregator's own answers take their turn with it.
func TestIsolationServerFloodsResourceUpdates(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind)
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(modernLine("2", "subscriptions/listen", `"notifications":{"resourceSubscriptions":["file:///a"]}`))
	pl.heard(t) // its resources/subscribe
	h.read()    // the acknowledgement
	update := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}` + "\n"
	backlogged, stop := make(chan struct{}), make(chan struct{})
	go func() {
		for written := 0; ; written += len(update) {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := io.WriteString(pl.p.stdoutW, update); err != nil {
				return
			}
			if written < output.LaneRoom/2 && written+len(update) >= output.LaneRoom/2 { // (what reaches the client is half as long again)
				close(backlogged)
			}
		}
	}()
	defer close(stop)
	<-backlogged // read nothing until the updates have a backlog
	h.send(modernLine("3", "tools/list", ""))
	for n := 0; ; n++ {
		line := h.read()
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":3,`) {
			if n > 300 {
				t.Errorf("%d updates came before the aggregator's answer, want at most 300", n)
			}
			break
		}
	}
	go func() {
		for range h.lines { // let the flood's last writes through
		}
	}()
}
