package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as the server: run with TESTSERVER_BE_SERVER=1 it
// serves MCP on stdin/stdout, so every test talks to a real process over pipes.
func TestMain(m *testing.M) {
	if os.Getenv("TESTSERVER_BE_SERVER") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const waitFor = 20 * time.Second

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type peer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited
	err    error         // cmd.Wait's result, valid after done
	seen   [][]byte      // lines read while waiting for something else
	closed bool
}

// start runs the server with args; at cleanup it closes stdin and expects exit status 0.
func start(t *testing.T, args ...string) *peer {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TESTSERVER_BE_SERVER=1")
	if os.Getenv("GORACE") == "" {
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0") // a -race child otherwise sleeps 1s at exit
	}
	p := &peer{t: t, cmd: cmd, lines: make(chan []byte, 1024), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- bytes.TrimRight(line, "\n")
			}
			if err != nil {
				close(p.lines)
				p.err = cmd.Wait()
				close(p.done)
				return
			}
		}
	}()
	t.Cleanup(func() {
		if !p.closed {
			p.stdin.Close()
			if code := p.exitCode(); code != 0 {
				t.Errorf("exit status %d after stdin EOF, want 0; stderr:\n%s", code, p.stderr.String())
			}
		}
	})
	return p
}

// exitCode closes stdin and waits for the process to end (killing it if it does not).
func (p *peer) exitCode() int {
	p.closed = true
	p.stdin.Close()
	go func() {
		for range p.lines { // drain
		}
	}()
	select {
	case <-p.done:
	case <-time.After(waitFor):
		p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("server did not exit")
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		p.t.Errorf("wait: %v", p.err)
		return -1
	}
	return 0
}

func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// next returns the next stdout line.
func (p *peer) next() []byte {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("stdout closed; stderr:\n%s", p.stderr.String())
		}
		return line
	case <-time.After(waitFor):
		p.t.Fatalf("timeout waiting for a line; stderr:\n%s", p.stderr.String())
	}
	return nil
}

func decode(t *testing.T, line []byte) *message {
	t.Helper()
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("bad line %q: %v", line, err)
	}
	return &m
}

// until returns the first line for which match is true; other lines go to p.seen.
func (p *peer) until(match func(line []byte, m *message) bool) ([]byte, *message) {
	p.t.Helper()
	for {
		line := p.next()
		m := decode(p.t, line)
		if match(line, m) {
			return line, m
		}
		p.seen = append(p.seen, line)
	}
}

// response waits for the answer to the request with raw id, or takes it
// from the lines seen while another was awaited (answers to concurrent
// requests come in either order).
func (p *peer) response(id string) ([]byte, *message) {
	p.t.Helper()
	for i, line := range p.seen {
		if m := decode(p.t, line); m.Method == "" && string(m.ID) == id {
			p.seen = append(p.seen[:i:i], p.seen[i+1:]...)
			return line, m
		}
	}
	return p.until(func(_ []byte, m *message) bool { return m.Method == "" && string(m.ID) == id })
}

// request sends a request and waits for its answer.
func (p *peer) request(id, method, params string) ([]byte, *message) {
	p.t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	p.send(line + "}")
	return p.response(id)
}

func (p *peer) callTool(id, name, args string) ([]byte, *message) {
	p.t.Helper()
	return p.request(id, "tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
}

func (p *peer) handshake() {
	p.t.Helper()
	_, m := p.request(`"init"`, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"0"}}`)
	if len(m.Error) > 0 {
		p.t.Fatalf("initialize: %s", m.Error)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func (p *peer) waitStderr(s string) {
	p.t.Helper()
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(p.stderr.String(), s) {
		if time.Now().After(deadline) {
			p.t.Fatalf("stderr never contained %q:\n%s", s, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// toolText returns the first text content of a tools/call result and its isError.
func toolText(t *testing.T, m *message) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if len(m.Error) > 0 || json.Unmarshal(m.Result, &r) != nil || len(r.Content) == 0 {
		t.Fatalf("not a text tool result: result=%s error=%s", m.Result, m.Error)
	}
	return r.Content[0].Text, r.IsError
}

func errorCode(t *testing.T, m *message) int {
	t.Helper()
	var e struct {
		Code int `json:"code"`
	}
	if len(m.Error) == 0 || json.Unmarshal(m.Error, &e) != nil {
		t.Fatalf("want an error, got result=%s error=%s", m.Result, m.Error)
	}
	return e.Code
}

func toolNames(t *testing.T, m *message) ([]string, string) {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatalf("tools/list result %s: %v (error %s)", m.Result, err, m.Error)
	}
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name)
	}
	return names, r.NextCursor
}

var builtinNames = []string{"echo", "env", "slow", "progress", "crash", "big", "fail", "iserror",
	"sample", "elicit", "roots", "pingclient", "log", "change", "notify", "cancelclient", "initparams", "deaf", "badanswer"}

func TestInitializeAndToolsList(t *testing.T) {
	t.Parallel()
	p := start(t, "-name", "alpha", "-tools", "2", "-instructions", "use <me> & enjoy")
	initParams := `{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}, "elicitation":{}},"clientInfo":{"name":"t","version":"0"}}`
	line, m := p.request(`"init-1"`, "initialize", initParams)
	if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":"init-1","result":`)) {
		t.Fatalf("initialize answer: %s", line)
	}
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage
		ServerInfo      struct{ Name, Version string }
		Instructions    string
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion != "2025-06-18" || r.ServerInfo.Name != "alpha" || r.ServerInfo.Version != "1.0.0" ||
		string(r.Capabilities["tools"]) != `{"listChanged":true}` || len(r.Capabilities) != 1 {
		t.Errorf("initialize result: %s", m.Result)
	}
	if !bytes.Contains(line, []byte(`"instructions":"use <me> & enjoy"`)) {
		t.Errorf("instructions not raw: %s", line)
	}

	// tools/list before notifications/initialized is refused.
	if _, m := p.request("1", "tools/list", ""); errorCode(t, m) != -32002 {
		t.Errorf("tools/list before initialized: %s", m.Error)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	line, m = p.request("2", "tools/list", `{}`)
	names, next := toolNames(t, m)
	want := append(append([]string{}, builtinNames...), "t0", "t1")
	if strings.Join(names, ",") != strings.Join(want, ",") || next != "" {
		t.Errorf("tools = %v (next %q), want %v", names, next, want)
	}
	if !bytes.Contains(line, []byte(`"description":"echo <input> & return it — ünïcode"`)) || bytes.Contains(line, []byte(`\u003c`)) {
		t.Errorf("echo description not raw: %s", line)
	}
	for _, field := range []string{`"title":`, `"outputSchema":`, `"annotations":{"readOnlyHint":true}`, `"_meta":{"x":1}`, `"icons":[`} {
		if !bytes.Contains(line, []byte(field)) {
			t.Errorf("echo lacks %s", field)
		}
	}

	// The client's initialize params come back raw.
	if _, m := p.callTool("3", "initparams", `{}`); func() string { s, _ := toolText(t, m); return s }() != initParams {
		t.Errorf("initparams: %s", m.Result)
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	p := start(t, "-version", "2024-11-05", "-caps", "subscribe,prompts,logging,completions")
	_, m := p.request("0", "initialize", `{"protocolVersion":"2025-11-25","capabilities":{}}`)
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion != "2024-11-05" {
		t.Errorf("protocolVersion %q", r.ProtocolVersion)
	}
	if string(r.Capabilities["resources"]) != `{"subscribe":true,"listChanged":true}` ||
		string(r.Capabilities["prompts"]) != `{"listChanged":true}` ||
		string(r.Capabilities["logging"]) != `{}` || string(r.Capabilities["completions"]) != `{}` {
		t.Errorf("capabilities: %s", m.Result)
	}
}

func TestEchoByteForByte(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	args := `{"b": 1,  "a":"<&> ü \u00fc",	"n":[1, 2.50, 1e3], "o":{}}`
	line, m := p.callTool(`"x-1"`, "echo", args)
	if !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":"x-1","result":`)) {
		t.Errorf("id not echoed raw: %s", line)
	}
	if !bytes.HasSuffix(line, []byte(`"structuredContent":`+args+`}}`)) {
		t.Errorf("structuredContent not byte-identical:\n%s", line)
	}
	if text, isErr := toolText(t, m); text != args || isErr {
		t.Errorf("text %q", text)
	}
	// Generated tools answer like echo; missing arguments are {}.
	p2 := start(t, "-tools", "3")
	p2.handshake()
	_, m = p2.request("5", "tools/call", `{"name":"t2"}`)
	if string(m.Result) != `{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}` {
		t.Errorf("t2: %s", m.Result)
	}
	if _, m := p2.callTool("6", "t3", `{}`); errorCode(t, m) != -32602 {
		t.Errorf("t3 should not exist")
	}
}

func TestSlowCancelAndConcurrency(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	// A fast request is answered while slow runs.
	if line, _ := p.request("11", "ping", ""); string(line) != `{"jsonrpc":"2.0","id":11,"result":{}}` {
		t.Errorf("ping: %s", line)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":10,"reason":"test"}}`)
	p.waitStderr("cancelled 10\n")
	p.request("12", "ping", "")
	if _, m := p.callTool("13", "slow", `{"ms":5}`); func() string { s, _ := toolText(t, m); return s }() != "done" {
		t.Errorf("slow 5ms: %s", m.Result)
	}
	for _, l := range p.seen {
		if m := decode(t, l); string(m.ID) == "10" {
			t.Errorf("cancelled request was answered: %s", l)
		}
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	for _, token := range []string{`"p-1"`, `42`} {
		p.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"progress","arguments":{"steps":3},"_meta":{"progressToken":` + token + `}}}`)
		for i := 1; i <= 3; i++ {
			line := p.next()
			want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":3,"message":"step %d"}}`, token, i, i)
			if string(line) != want {
				t.Errorf("got  %s\nwant %s", line, want)
			}
		}
		if _, m := p.response(`"c"`); func() string { s, _ := toolText(t, m); return s }() != "progressed" {
			t.Errorf("progress result %s", m.Result)
		}
	}
	if _, m := p.callTool(`"d"`, "progress", `{}`); errorCode(t, m) != -32602 {
		t.Errorf("progress without token should fail")
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	line, _ := p.callTool("1", "fail", `{}`)
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"custom failure","data":{"why":"asked to fail <&>"}}}`; string(line) != want {
		t.Errorf("fail:\n got %s\nwant %s", line, want)
	}
	line, _ = p.callTool("2", "iserror", `{}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"tool error"}],"isError":true}}`; string(line) != want {
		t.Errorf("iserror: %s", line)
	}
	if _, m := p.request("3", "no/such/method", `{}`); errorCode(t, m) != -32601 {
		t.Errorf("unknown method: %s", m.Error)
	}
	if _, m := p.request("4", "resources/list", `{}`); errorCode(t, m) != -32601 {
		t.Errorf("resources/list without the capability: %s", m.Error)
	}
	if _, m := p.callTool("5", "nope", `{}`); errorCode(t, m) != -32602 {
		t.Errorf("unknown tool: %s", m.Error)
	}
	p.send(`{not json`)
	if line := p.next(); !bytes.Contains(line, []byte(`"id":null,"error":{"code":-32700`)) {
		t.Errorf("parse error: %s", line)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	p := start(t, "-page", "5", "-tools", "7")
	p.handshake()
	var all []string
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		_, m := p.request(fmt.Sprint(100+pages), "tools/list", params)
		names, next := toolNames(t, m)
		if len(names) == 0 || len(names) > 5 {
			t.Fatalf("page of %d tools", len(names))
		}
		all = append(all, names...)
		pages++
		if next == "" {
			break
		}
		cursor = next
	}
	want := append([]string{}, builtinNames...)
	for i := 0; i < 7; i++ {
		want = append(want, fmt.Sprintf("t%d", i))
	}
	if strings.Join(all, ",") != strings.Join(want, ",") || pages != (len(want)+4)/5 {
		t.Errorf("%d pages: %v", pages, all)
	}
	if _, m := p.request("9", "tools/list", `{"cursor":"bogus"}`); errorCode(t, m) != -32602 {
		t.Errorf("bad cursor: %s", m.Error)
	}
}

func TestNoise(t *testing.T) {
	t.Parallel()
	p := start(t, "-noise", "-stderr", "2")
	if line := p.next(); string(line) != noiseLine {
		t.Fatalf("first line %q", line)
	}
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if line := p.next(); string(line) != noiseLine {
		t.Fatalf("line before first tools/list answer %q", line)
	}
	p.response("1")
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if line := p.next(); !bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":2,`)) {
		t.Fatalf("noise twice: %q", line)
	}
	p.waitStderr("stderr line 0\nstderr line 1\n")
}

func TestClientRequests(t *testing.T) {
	t.Parallel()
	p := start(t, "-name", "s")
	p.handshake()

	p.send(`{"jsonrpc":"2.0","method":"tools/call","id":1,"params":{"name":"sample","arguments":{"progress":true}}}`)
	_, req := p.until(func(_ []byte, m *message) bool { return m.Method == "sampling/createMessage" })
	if string(req.ID) != "0" || !bytes.Contains(req.Params, []byte(`"_meta":{"progressToken":"sample-tok"}`)) {
		t.Errorf("sampling request id %s params %s", req.ID, req.Params)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"sample-tok","progress":1}}`)
	answer := `{"role":"assistant", "content":{"type":"text","text":"<hi> & ü"},"model":"m","stopReason":"endTurn"}`
	p.send(`{"jsonrpc":"2.0","id":0,"result":` + answer + `}`)
	if _, m := p.response("1"); func() string { s, _ := toolText(t, m); return s }() != answer {
		t.Errorf("sample result %s", m.Result)
	}
	p.waitStderr(`client progress "sample-tok"`)

	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pingclient"}}`)
	_, req = p.until(func(_ []byte, m *message) bool { return m.Method == "ping" })
	if string(req.ID) != "1" {
		t.Errorf("second request to the client has id %s, want 1", req.ID)
	}
	errObj := `{"code":-32601,"message":"no <ping>"}`
	p.send(`{"jsonrpc":"2.0","id":1,"error":` + errObj + `}`)
	if _, m := p.response("2"); func() string {
		s, isErr := toolText(t, m)
		if !isErr {
			return "not isError"
		}
		return s
	}() != errObj {
		t.Errorf("pingclient result %s", m.Result)
	}

	_, m := p.callTool("3", "cancelclient", `{"ms":1}`)
	if s, _ := toolText(t, m); s != "cancelled sampling" {
		t.Errorf("cancelclient: %s", m.Result)
	}
	var sawReq, sawCancel bool
	for _, l := range p.seen {
		sawReq = sawReq || bytes.Contains(l, []byte(`"id":2,"method":"sampling/createMessage"`))
		sawCancel = sawCancel || bytes.Contains(l, []byte(`"method":"notifications/cancelled","params":{"requestId":2,"reason":"changed my mind"}`))
	}
	if !sawReq || !sawCancel {
		t.Errorf("cancelclient lines: %s", bytes.Join(p.seen, []byte("\n")))
	}
}

func TestResourcesPromptsCompletion(t *testing.T) {
	t.Parallel()
	p := start(t, "-name", "rs", "-caps", "resources,prompts,completions,logging", "-page", "2")
	p.handshake()
	_, m := p.request("1", "resources/list", "")
	if !bytes.Contains(m.Result, []byte(`"uri":"test://rs/r0"`)) || !bytes.Contains(m.Result, []byte(`"nextCursor":"cursor-2"`)) {
		t.Errorf("resources/list: %s", m.Result)
	}
	if _, m := p.request("2", "resources/read", `{"uri":"test://rs/t/42"}`); !bytes.Contains(m.Result, []byte(`"text":"content of test://rs/t/42"`)) {
		t.Errorf("read template: %s %s", m.Result, m.Error)
	}
	if _, m := p.request("3", "resources/read", `{"uri":"test://other/r0"}`); errorCode(t, m) != -32002 {
		t.Errorf("read unknown")
	}
	if _, m := p.request("4", "prompts/get", `{"name":"greet","arguments":{"name":"Bob"}}`); !bytes.Contains(m.Result, []byte(`"text":"Hello Bob"`)) {
		t.Errorf("prompts/get: %s", m.Result)
	}
	_, m = p.request("5", "completion/complete", `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"B"}}`)
	if !bytes.Contains(m.Result, []byte(`"values":["rs-a","rs-b","ref/prompt:greet"]`)) {
		t.Errorf("completion: %s", m.Result)
	}
	p.request("6", "logging/setLevel", `{"level":"debug"}`)
	p.waitStderr("level set to debug")
}

func TestBigLine(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	const n = 3 << 20
	_, m := p.callTool("1", "big", fmt.Sprintf(`{"bytes":%d}`, n))
	if s, _ := toolText(t, m); len(s) != n || strings.Trim(s, "x") != "" {
		t.Errorf("big: %d bytes", len(s))
	}
	// and a big request line in
	big := strings.Repeat("y", n)
	if _, m := p.callTool("2", "echo", `{"s":"`+big+`"}`); !bytes.HasSuffix(m.Result, []byte(big+`"}}`)) {
		t.Errorf("big echo")
	}
}

func TestExits(t *testing.T) {
	t.Parallel()
	p := start(t)
	p.handshake()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash"}}`)
	p.waitStderr("crash requested")
	if code := p.exitCode(); code != 3 {
		t.Errorf("crash: exit status %d", code)
	}

	p = start(t, "-exit-init", "5")
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	p.waitStderr("fatal: bad init")
	if code := p.exitCode(); code != 5 {
		t.Errorf("exit-init: exit status %d", code)
	}
}

// -started-file gets one line per process, written at start: before the
// first request, and also by a server that then crashes on initialize.
func TestStartedFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "started")
	p := start(t, "-name", "one", "-started-file", file)
	p.request("1", "ping", "") // it is up, so its line is in
	q := start(t, "-name", "two", "-started-file", file, "-exit-init", "1")
	q.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if code := q.exitCode(); code != 1 {
		t.Errorf("exit-init: exit status %d", code)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "one ") || !strings.HasPrefix(lines[1], "two ") {
		t.Errorf("started file:\n%s\nwant a line for one, then one for two", b)
	}
}

func TestLogToolLevel(t *testing.T) {
	t.Parallel()
	p := start(t, "-name", "alpha")
	p.handshake()
	for _, c := range []struct{ args, want string }{
		{`{"text":"plain"}`, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"testserver","data":"plain"}}`},
		{`{"text":"fine","level":"debug"}`, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"testserver","data":"fine"}}`},
	} {
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"log","arguments":` + c.args + `}}`)
		line, _ := p.until(func(_ []byte, m *message) bool { return m.Method == "notifications/message" })
		if string(line) != c.want {
			t.Errorf("log %s sent %s, want %s", c.args, line, c.want)
		}
		p.response("1")
	}
}

// TestKeepLine: -keep-line reads one line and exits 0, writing nothing; a
// stream that ends before its newline is an error.
func TestKeepLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-keep-line"}, strings.NewReader(`{"a":1}`+"\nmore"), &out, &errOut); code != 0 || out.Len() > 0 {
		t.Fatalf("a line: exit %d, wrote %q, stderr %q", code, out.String(), errOut.String())
	}
	if code := run([]string{"-keep-line"}, strings.NewReader("no newline"), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "EOF") {
		t.Fatalf("no newline: exit %d, stderr %q", code, errOut.String())
	}
}
