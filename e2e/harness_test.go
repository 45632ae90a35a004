package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Paths of the binaries built once by TestMain.
var (
	aggregatorBin string
	testserverBin string
	relayBin      string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	aggregatorBin = filepath.Join(dir, "mcp-simple-aggregator")
	testserverBin = filepath.Join(dir, "testserver")
	relayBin = filepath.Join(dir, "relay")
	for bin, pkg := range map[string]string{aggregatorBin: "..", testserverBin: "./testserver", relayBin: "./relay"} {
		args := []string{"build", "-o", bin}
		if raceEnabled && bin == aggregatorBin {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, pkg)...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	// What servers declared is remembered in the user's cache directory:
	// the tests' own, not the user's, and none left behind.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quickRaceExit keeps an aggregator built with -race (and its watchdog)
// from sleeping a second before it exits, and stops it at the first race.
const quickRaceExit = "GORACE=halt_on_error=1 atexit_sleep_ms=0"

// waitLimit bounds every wait of a test for an event; it is a deadlock
// watchdog, not a measure.
const waitLimit = 15 * time.Second

// server is one entry of a test config.
type server struct {
	key     string
	command string   // default: the test server
	args    []string // arguments
	env     map[string]string
	extra   string // raw JSON members added to the entry, e.g. `"disabled": true`
}

// ts is an entry running the test server with args.
func ts(key string, args ...string) server {
	return server{key: key, args: append([]string{"-name", key}, args...)}
}

// writeConfig writes a config file with the servers in order.
func writeConfig(t testing.TB, servers ...server) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"mcpServers": {`)
	for i, s := range servers {
		if i > 0 {
			b.WriteString(",")
		}
		cmd := s.command
		if cmd == "" {
			cmd = testserverBin
		}
		args, _ := json.Marshal(append([]string{}, s.args...))
		fmt.Fprintf(&b, "\n  %q: {\"command\": %q, \"args\": %s", s.key, cmd, args)
		if s.env != nil {
			env, _ := json.Marshal(s.env)
			fmt.Fprintf(&b, `, "env": %s`, env)
		}
		if s.extra != "" {
			b.WriteString(", " + s.extra)
		}
		b.WriteString("}")
	}
	b.WriteString("\n}}\n")
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// msg is one message the aggregator wrote, with its raw line.
type msg struct {
	line   []byte
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m *msg) isResponse() bool { return m.Method == "" }

// errorCode returns the code and message of an error response.
func (m *msg) errorCode() (int, string) {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	json.Unmarshal(m.Error, &e)
	return e.Code, e.Message
}

// session is the aggregator running as a child of the test, driven like an
// MCP client drives it.
type session struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	err    error // how it exited, after exited closes

	mu      sync.Mutex // protects the fields below
	inbox   []*msg     // every message read, in order
	taken   map[*msg]bool
	stderr  bytes.Buffer
	updated chan struct{} // closed and replaced on every change
	nextID  int
}

// start runs the aggregator with flags and waits for nothing.
func start(t testing.TB, flags ...string) *session {
	t.Helper()
	return startCached(t, t.TempDir(), flags...)
}

// startCached is start with the cache directory given (where what servers
// declared is remembered from one session to the next): sessions that
// share it remember for each other.
func startCached(t testing.TB, cache string, flags ...string) *session {
	t.Helper()
	cmd := exec.Command(aggregatorBin, flags...)
	cmd.Env = append(os.Environ(), quickRaceExit, "XDG_CACHE_HOME="+cache)
	return startCmd(t, cmd)
}

// startCmd runs cmd, the aggregator or a launcher of it (npm's, an
// unpacked bundle's), as start does.
func startCmd(t testing.TB, cmd *exec.Cmd) *session {
	t.Helper()
	s := &session{t: t, taken: make(map[*msg]bool), updated: make(chan struct{}), nextID: 100, exited: make(chan struct{})}
	s.cmd = cmd
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				s.read(line)
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		defer readers.Done()
		br := bufio.NewReader(stderr)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				s.mu.Lock()
				s.stderr.Write(line)
				s.changed()
				s.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		readers.Wait()
		s.err = s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(waitLimit):
			s.cmd.Process.Kill()
			<-s.exited
			t.Errorf("aggregator did not exit after its stdin closed")
		}
		if t.Failed() {
			t.Logf("aggregator stderr:\n%s", s.stderrText())
		}
	})
	return s
}

// startConfig runs the aggregator on a config of servers.
func startConfig(t testing.TB, servers []server, flags ...string) *session {
	t.Helper()
	return start(t, append([]string{"--config", writeConfig(t, servers...)}, flags...)...)
}

// read records one stdout line; anything but a JSON-RPC message fails the
// test: stdout carries protocol only.
func (s *session) read(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if bytes.HasPrefix(line, []byte("[")) {
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil {
			s.t.Errorf("stdout line is not JSON: %q", clip(line))
			return
		}
		m := &msg{line: line, Method: "(batch)"}
		s.push(m)
		return
	}
	m := &msg{line: line}
	if err := json.Unmarshal(line, m); err != nil || !bytes.Contains(line, []byte(`"jsonrpc":"2.0"`)) {
		s.t.Errorf("stdout line is not a JSON-RPC message: %q", clip(line))
		return
	}
	s.push(m)
}

func (s *session) push(m *msg) {
	s.mu.Lock()
	s.inbox = append(s.inbox, m)
	s.changed()
	s.mu.Unlock()
}

// changed wakes the waiters; called with mu held.
func (s *session) changed() {
	close(s.updated)
	s.updated = make(chan struct{})
}

// waitFor waits until find returns true under mu, or fails the test.
func (s *session) waitFor(what string, find func() bool) {
	s.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := find()
		updated := s.updated
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-updated:
		case <-s.exited:
			s.mu.Lock()
			ok = find()
			s.mu.Unlock()
			if !ok {
				s.t.Fatalf("aggregator exited (%v) while waiting for %s; stderr:\n%s", s.err, what, s.stderrText())
			}
			return
		case <-deadline.C:
			s.t.Fatalf("timed out waiting for %s; stderr:\n%s", what, s.stderrText())
		}
	}
}

// next takes the first message not yet taken that match accepts.
func (s *session) next(what string, match func(*msg) bool) *msg {
	s.t.Helper()
	var found *msg
	s.waitFor(what, func() bool {
		for _, m := range s.inbox {
			if !s.taken[m] && match(m) {
				s.taken[m] = true
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// send writes one raw line.
func (s *session) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("writing to the aggregator: %v", err)
	}
}

// newID returns a fresh request id.
func (s *session) newID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprint(s.nextID)
}

// request sends a request without waiting and returns its id.
func (s *session) request(method, params string) string {
	s.t.Helper()
	id := s.newID()
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != "" {
		line += `,"params":` + params
	}
	s.send(line + "}")
	return id
}

// response waits for the answer to id.
func (s *session) response(id string) *msg {
	s.t.Helper()
	return s.next("the answer to id "+id, func(m *msg) bool { return m.isResponse() && string(m.ID) == id })
}

// call sends a request and waits for its answer.
func (s *session) call(method, params string) *msg {
	s.t.Helper()
	return s.response(s.request(method, params))
}

// result calls and fails the test on an error answer.
func (s *session) result(method, params string) json.RawMessage {
	s.t.Helper()
	m := s.call(method, params)
	if m.Error != nil {
		s.t.Fatalf("%s %s: error %s", method, params, m.Error)
	}
	return m.Result
}

// barrier is a ping round trip, taken before a check that something did
// not come: every line the aggregator queued for the client before it
// answered the ping has been read by then (a lane's lines keep their
// order, and the lanes take turns, a line each).
func (s *session) barrier() {
	s.t.Helper()
	if m := s.call("ping", ""); m.Error != nil {
		s.t.Fatalf("ping: %s", m.line)
	}
}

// notification waits for a notification of method.
func (s *session) notification(method string) *msg {
	s.t.Helper()
	return s.next("notification "+method, func(m *msg) bool { return m.Method == method && m.ID == nil })
}

// serverRequest waits for a request of method from the aggregator.
func (s *session) serverRequest(method string) *msg {
	s.t.Helper()
	return s.next("request "+method, func(m *msg) bool { return m.Method == method && m.ID != nil })
}

// count returns how many messages so far match.
func (s *session) count(match func(*msg) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.inbox {
		if match(m) {
			n++
		}
	}
	return n
}

// waitStderr waits until stderr contains text.
func (s *session) waitStderr(text string) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("stderr to contain %q", text), func() bool { return strings.Contains(s.stderr.String(), text) })
}

func (s *session) stderrText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// initialize performs the handshake with capabilities caps.
func (s *session) initialize(version, caps string) json.RawMessage {
	s.t.Helper()
	r := s.result("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"e2e","version":"1.0"}}`, version, caps))
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// startServers has the aggregator start every server, as a client's first
// list does (servers start when a request needs them): it sends a
// tools/list and waits for its answer, once every server is up or failed
// (the list waits as long for a client that lists once).
func (s *session) startServers() {
	s.t.Helper()
	s.result("tools/list", "")
}

// closeAndWait closes stdin and waits for the exit, returning how long it
// took.
func (s *session) closeAndWait() time.Duration {
	s.t.Helper()
	start := time.Now()
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(waitLimit):
		s.t.Fatalf("aggregator did not exit after stdin closed")
	}
	return time.Since(start)
}

// toolText returns the first text content of a tools/call result.
func toolText(t testing.TB, result json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(result, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tool result with text: %s", clip(result))
	}
	return r.Content[0].Text
}

// toolNames returns the names of a tools/list result, in order.
func toolNames(t testing.TB, result json.RawMessage) []string {
	t.Helper()
	var r struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("not a tools/list result: %s", clip(result))
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	return names
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

// livePIDs returns the pids of the live (not zombie) processes for which
// keep is true (Linux: it reads /proc).
func livePIDs(t testing.TB, keep func(pid int) bool) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc here")
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && alive(pid) && keep(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// childPIDs returns the pids of the live processes whose parent is pid,
// its watchdog left out.
func childPIDs(t testing.TB, pid int) []int {
	t.Helper()
	return livePIDs(t, func(p int) bool { return parentOf(p) == pid && !isWatchdog(p) })
}

// parentOf returns the parent pid of process pid, 0 if it is gone.
func parentOf(pid int) int {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...
	var state string
	var ppid int
	fmt.Sscan(string(stat[bytes.LastIndexByte(stat, ')')+1:]), &state, &ppid)
	return ppid
}

// isWatchdog reports whether process pid is an aggregator's watchdog,
// which is the aggregator's child but not a server.
func isWatchdog(pid int) bool {
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return bytes.HasSuffix(cmdline, []byte("\x00__watchdog\x00"))
}

// watchdogOf returns the pid of the watchdog of the aggregator pid.
func watchdogOf(t testing.TB, pid int) int {
	t.Helper()
	pids := livePIDs(t, func(p int) bool { return parentOf(p) == pid && isWatchdog(p) })
	if len(pids) != 1 {
		t.Fatalf("aggregator %d has %d watchdogs, want 1", pid, len(pids))
	}
	return pids[0]
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	var state string
	fmt.Sscan(string(rest), &state)
	return state != "Z" && state != "X"
}
