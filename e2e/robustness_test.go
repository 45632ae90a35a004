package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// A child that stops reading its stdin (a full pipe) must not stall the
// client connection or the other children.
func TestAChildThatStopsReadingBlocksNobody(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", "{}")
	deaf := s.request("tools/call", `{"name":"alpha:deaf","arguments":{"ms":5000}}`)
	s.waitStderr("[alpha] deaf")
	pad := strings.Repeat("x", 100<<10)
	var echoes []string
	for i := 0; i < 4; i++ { // 400 KB: far more than alpha's pipe and buffer hold
		echoes = append(echoes, s.request("tools/call", `{"name":"alpha:echo","arguments":{"pad":"`+pad+`"}}`))
	}
	if m := s.call("ping", ""); m.Error != nil {
		t.Fatalf("ping: %s", m.line)
	}
	s.result("tools/call", `{"name":"beta:echo","arguments":{"n":1}}`)
	s.barrier() // what alpha answered on reading again, had it come first, has come by now
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == deaf }); n != 0 {
		t.Fatal("ping and beta:echo were answered only after alpha read again: a child that stopped reading stalled the others")
	}
	// Once alpha reads again, everything queued for it arrives in order.
	if got := toolText(t, s.response(deaf).Result); got != "heard again" {
		t.Fatalf("deaf answered %q", got)
	}
	for _, id := range echoes {
		if m := s.response(id); m.Error != nil {
			t.Fatalf("queued echo %s: %s", id, clip(m.line))
		}
	}
}

// Requests read before the client closed its input are answered for real,
// even while the children are still starting (the list starts them, right
// before the end of input).
func TestRequestsReadBeforeEndOfInputAreAnswered(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha:echo","arguments":{"k":"v"}}}`)
	s.closeAndWait()
	if names := toolNames(t, s.response("2").Result); len(names) == 0 || names[0] != "alpha:echo" {
		t.Fatalf("tools/list after end of input: %v", names)
	}
	if m := s.response("3"); m.Error != nil || toolText(t, m.Result) != `{"k":"v"}` {
		t.Fatalf("tools/call after end of input: %s", m.line)
	}
}

// A child's request sent as soon as it is initialized waits for the client
// to be initialized: our initialize answer comes first.
func TestChildRequestsWaitForTheClientToBeInitialized(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-ask-on-init", "roots/list")})
	s.result("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"e2e","version":"1"}}`)
	s.startServers() // alpha asks as soon as it is initialized
	// alpha writes its roots/list before it reads on, so before it answers
	// this call, and the aggregator relays what alpha sends in order, on
	// alpha's lane: a roots/list that passed the gate has come by now.
	if m := s.call("tools/call", `{"name":"alpha:echo","arguments":{}}`); m.Error != nil {
		t.Fatalf("alpha:echo: %s", m.line)
	}
	if n := s.count(func(m *msg) bool { return m.Method == "roots/list" }); n != 0 {
		t.Fatal("a child's roots/list reached the client before the initialize answer and the client's initialized")
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req := s.serverRequest("roots/list")
	s.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"roots":[{"uri":"file:///tmp/x"}]}}`)
	s.waitStderr(`[alpha] asked roots/list on init: {"roots":[{"uri":"file:///tmp/x"}]}`)
}

// Whether a request came before initialize is decided by line order.
func TestRequestBeforeInitializeIsRefusedByLineOrder(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if code, _ := s.response("1").errorCode(); code != -32600 {
		t.Fatalf("tools/list before initialize: code %d, want -32600", code)
	}
	if m := s.response("2"); m.Error != nil {
		t.Fatalf("initialize: %s", m.line)
	}
}

func TestBadRequestsAreRefusedWithoutReachingAChild(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	// Two name members: the child could run the other one.
	m := s.call("tools/call", `{"name":"alpha:echo","arguments":{},"name":"alpha:env"}`)
	if code, msg := m.errorCode(); code != -32602 || !strings.Contains(msg, "one params.name") {
		t.Errorf("duplicate name: %s", m.line)
	}
	// An id already in flight.
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha:slow","arguments":{"ms":2000}}}`)
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha:echo","arguments":{}}}`)
	if code, msg := s.response("7").errorCode(); code != -32600 || !strings.Contains(msg, "already used") {
		t.Errorf("duplicate id in flight: %d %q", code, msg)
	}
	// A notification with bad params gets no answer; the next answer is the
	// ping's.
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}`)
	s.call("ping", "")
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == "null" }); n != 0 {
		t.Errorf("a broken notification was answered")
	}
}

// A child answering with something that is not a response still ends the
// call, with an error naming the server.
func TestABrokenChildAnswerFailsTheCall(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	m := s.call("tools/call", `{"name":"alpha:badanswer"}`)
	if code, msg := m.errorCode(); code != -32603 || !strings.Contains(msg, `server "alpha"`) || !strings.Contains(msg, "invalid answer") {
		t.Fatalf("broken answer: %s", m.line)
	}
}

// startWithPipes runs the aggregator on a config of servers with its
// stdout and stderr on pipes of the test's own, which the test may close.
func startWithPipes(t *testing.T, servers []server, flags ...string) (cmd *exec.Cmd, stdin io.WriteCloser, stdout, stderr *os.File, exit *exitWatch) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(aggregatorBin, append([]string{"--config", writeConfig(t, servers...)}, flags...)...)
	cmd.Env = append(os.Environ(), quickRaceExit)
	cmd.Stdout, cmd.Stderr = outW, errW
	if stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	exit = &exitWatch{done: make(chan struct{})}
	go func() {
		exit.err = cmd.Wait()
		close(exit.done)
	}()
	t.Cleanup(func() {
		stdin.Close()
		if _, ok := exit.within(waitLimit); !ok {
			cmd.Process.Kill()
			<-exit.done
		}
		outR.Close()
		errR.Close()
	})
	return cmd, stdin, outR, errR, exit
}

// exitWatch is a process's end.
type exitWatch struct {
	done chan struct{}
	err  error // how it ended, once done is closed
}

// within waits up to limit for the end and returns how it ended.
func (e *exitWatch) within(limit time.Duration) (error, bool) {
	select {
	case <-e.done:
		return e.err, true
	case <-time.After(limit):
		return nil, false
	}
}

const e2eInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}` + "\n"

// A client that goes away closes the aggregator's stdout: the next answer
// fails to be written, and the aggregator shuts down as on a signal,
// stopping its children, instead of dying of SIGPIPE with them running.
func TestClosedStdoutShutsDown(t *testing.T) {
	cmd, stdin, stdout, stderr, exit := startWithPipes(t, []server{ts("alpha")})
	io.WriteString(stdin, e2eInit)
	if _, err := bufio.NewReader(stdout).ReadBytes('\n'); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	pids := childPIDs(t, cmd.Process.Pid)
	stdout.Close()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if err, ok := exit.within(5 * time.Second); !ok {
		t.Fatal("still running 5 s after its stdout was closed")
	} else if err != nil {
		t.Errorf("exit: %v, want status 0", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("child %d still running", pid)
		}
	}
	logged, _ := io.ReadAll(stderr)
	if !strings.Contains(string(logged), "the client closed its output") {
		t.Errorf("stderr does not say why it stopped:\n%s", logged)
	}
}

// A client that does not want the aggregator's stderr closes it: logs are
// lost, the protocol goes on.
func TestClosedStderrDropsLogsOnly(t *testing.T) {
	_, stdin, stdout, stderr, exit := startWithPipes(t, []server{ts("alpha")}, "--debug")
	stderr.Close()
	br := bufio.NewReader(stdout)
	for i, line := range []string{
		e2eInit,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha:echo","arguments":{"n":1}}}` + "\n",
	} {
		io.WriteString(stdin, line)
		if i == 1 {
			continue
		}
		if answer, err := br.ReadBytes('\n'); err != nil || !bytes.Contains(answer, []byte(`"result"`)) {
			t.Fatalf("answer %d: %s %v", i, answer, err)
		}
	}
	stdin.Close()
	if err, ok := exit.within(5 * time.Second); !ok {
		t.Fatal("still running 5 s after its stdin closed")
	} else if err != nil {
		t.Errorf("exit: %v, want status 0", err)
	}
}

// A host that never reads the aggregator's stderr: a noisy child fills the
// pipe, and the log lines that follow (here the warning for a client line
// that is not JSON, logged on the client's reader) must not stall the
// protocol. They are dropped, and counted once the host reads again.
func TestUnreadStderrNeverStallsTheProtocol(t *testing.T) {
	// The child writes its lines before it answers initialize, so by the
	// time the client has its answer all but a pipe's worth have reached
	// the aggregator: more than its stderr pipe and its log queue hold.
	const noise, warnings = 200000, 20
	_, stdin, stdout, stderr, exit := startWithPipes(t, []server{ts("alpha"), ts("noisy", "-stderr", fmt.Sprint(noise))})
	br := bufio.NewReader(stdout)
	io.WriteString(stdin, e2eInit)
	if _, err := br.ReadBytes('\n'); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`+"\n") // starts the servers
	if _, err := br.ReadBytes('\n'); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for i := 0; i < warnings; i++ {
		io.WriteString(stdin, "not json\n")
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", 100+i)
		answered := make(chan []byte, 1)
		go func() {
			br.ReadBytes('\n') // the parse error
			line, _ := br.ReadBytes('\n')
			answered <- line
		}()
		select {
		case line := <-answered:
			if !bytes.Contains(line, []byte(fmt.Sprintf(`"id":%d,"result"`, 100+i))) {
				t.Fatalf("ping %d answered %s", i, line)
			}
		case <-time.After(waitLimit):
			t.Fatalf("ping %d not answered within %v while stderr is not read", i, waitLimit)
		}
	}

	// The host reads again: every line was either written or counted.
	logged := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		logged <- b
	}()
	stdin.Close()
	go io.Copy(io.Discard, stdout)
	if _, ok := exit.within(waitLimit); !ok {
		t.Fatal("still running after its stdin closed")
	}
	written, dropped := 0, 0
	for _, line := range strings.Split(strings.TrimSuffix(string(<-logged), "\n"), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "mcp-simple-aggregator: warning: %d log lines dropped", &n); err == nil {
			dropped += n
		} else {
			written++
		}
	}
	t.Logf("%d log lines written, %d dropped and counted", written, dropped)
	if dropped == 0 || written+dropped < noise+warnings {
		t.Errorf("%d log lines written and %d counted as dropped, want some dropped and %d in all", written, dropped, noise+warnings)
	}
}
