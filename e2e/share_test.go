package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests of --share: sessions of one user share one process per server
// through the holder (internal/share).

// shareWorld is one test's own world of shared servers: its runtime
// directory (where the holder's socket is: short, for the socket path's
// limit) and cache (where the holder logs).
type shareWorld struct {
	t       *testing.T
	runtime string
	cache   string
	idle    string
}

// newShareWorld makes a world whose holder, if any, is gone when the test
// ends (its cleanup waits for it to exit).
func newShareWorld(t *testing.T, idle string) *shareWorld {
	t.Helper()
	runtime, err := os.MkdirTemp("/tmp", "sh")
	if err != nil {
		t.Fatal(err)
	}
	w := &shareWorld{t: t, runtime: runtime, cache: t.TempDir(), idle: idle}
	t.Cleanup(func() { // after every session's (cleanups run last first)
		w.waitHolderGone()
		os.RemoveAll(runtime)
		if log, _ := os.ReadFile(w.holderLog()); strings.Contains(string(log), "DATA RACE") || strings.Contains(string(log), "panic:") {
			t.Errorf("the holder raced or panicked: see its log")
		}
		if t.Failed() {
			log, _ := os.ReadFile(w.holderLog())
			t.Logf("holder log:\n%s", log)
		}
	})
	return w
}

func (w *shareWorld) sock() string {
	return filepath.Join(w.runtime, "mcp-simple-aggregator", "holder.sock")
}

func (w *shareWorld) holderLog() string {
	return filepath.Join(w.cache, "mcp-simple-aggregator", "holder.log")
}

// start runs an aggregator with --share in this world.
func (w *shareWorld) start(cfg string, flags ...string) *session {
	w.t.Helper()
	args := append([]string{"--config", cfg, "--share", "--share-idle", w.idle}, flags...)
	cmd := exec.Command(aggregatorBin, args...)
	cmd.Env = append(os.Environ(), quickRaceExit, "XDG_CACHE_HOME="+w.cache, "XDG_RUNTIME_DIR="+w.runtime)
	return startCmd(w.t, cmd)
}

// holderPids are the live holders of this world.
func (w *shareWorld) holderPids() []int {
	return livePIDs(w.t, func(p int) bool {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		return strings.Contains(string(cmdline), "\x00--share-holder\x00"+w.runtime+"/")
	})
}

// waitHolderGone waits, within waitLimit, for the holder to exit: its
// socket removed and its process gone; past the limit it kills it and
// fails the test.
func (w *shareWorld) waitHolderGone() {
	deadline := time.Now().Add(waitLimit)
	for {
		pids := w.holderPids()
		_, err := os.Stat(w.sock())
		if len(pids) == 0 && os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				if pr, err := os.FindProcess(p); err == nil {
					pr.Kill()
				}
			}
			w.t.Errorf("the holder did not exit within %v after the last session (pids %v)", waitLimit, pids)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLog waits, within waitLimit, for the holder's log to hold text.
func (w *shareWorld) waitLog(text string) {
	w.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		log, _ := os.ReadFile(w.holderLog())
		if strings.Contains(string(log), text) {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the holder's log lacks %s", text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startedPids reads a -started-file: the pid of each server started.
func startedPids(t *testing.T, path string) []int {
	t.Helper()
	data, _ := os.ReadFile(path)
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			pid, _ := strconv.Atoi(f[1])
			pids = append(pids, pid)
		}
	}
	return pids
}

var holderPidInLog = regexp.MustCompile(`held by the holder \(pid (\d+)\)`)

func TestShareFiveSessionsOneProcessPerServer(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started), ts("b", "-started-file", started))
	var sessions []*session
	for i := 0; i < 5; i++ {
		s := w.start(cfg)
		s.initialize("2025-06-18", `{}`)
		if got := toolText(t, s.result("tools/call", `{"name":"a:echo","arguments":{"text":"hi"}}`)); !strings.Contains(got, "hi") {
			t.Fatalf("session %d: echo answered %q", i, got)
		}
		sessions = append(sessions, s)
	}
	pids := startedPids(t, started)
	if len(pids) != 2 {
		t.Fatalf("%d server processes started for 5 sessions of 2 servers, want 2: %v", len(pids), pids)
	}
	holders := w.holderPids()
	if len(holders) != 1 {
		t.Fatalf("%d holders, want 1", len(holders))
	}
	for _, s := range sessions {
		s.waitStderr(fmt.Sprintf("held by the holder (pid %d)", holders[0]))
	}
	// A session ending changes nothing for the others.
	sessions[0].closeAndWait()
	for _, s := range sessions[1:] {
		if got := toolText(t, s.result("tools/call", `{"name":"b:echo","arguments":{"text":"still"}}`)); !strings.Contains(got, "still") {
			t.Fatalf("after one session ended: echo answered %q", got)
		}
	}
	if pids := startedPids(t, started); len(pids) != 2 {
		t.Fatalf("after one session ended, %d processes were started in all, want 2", len(pids))
	}
	var wg sync.WaitGroup
	for _, s := range sessions[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); s.stdin.Close(); <-s.exited }()
	}
	wg.Wait()
	w.waitHolderGone()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("server pid %d still runs after the holder's idle time", p)
		}
	}

	// Without --share: five of each.
	alone := filepath.Join(t.TempDir(), "started")
	cfg = writeConfig(t, ts("a", "-started-file", alone), ts("b", "-started-file", alone))
	for i := 0; i < 5; i++ {
		s := start(t, "--config", cfg)
		s.initialize("2025-06-18", `{}`)
		s.startServers()
	}
	if n := len(startedPids(t, alone)); n != 10 {
		t.Errorf("without --share, 5 sessions of 2 servers started %d processes, want 10", n)
	}
}

// callAnswering calls tool on session s and answers every sampling
// request it is asked meanwhile with its own text, mark; it returns the
// call's answer.
func callAnswering(s *session, params, mark string) *msg {
	s.t.Helper()
	id := s.request("tools/call", params)
	for {
		m := s.next("the answer to "+id+" or a sampling request", func(m *msg) bool {
			return (m.isResponse() && string(m.ID) == id) || (m.Method == "sampling/createMessage" && m.ID != nil)
		})
		if m.isResponse() {
			return m
		}
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":%q},"model":"m"}}`, m.ID, mark))
	}
}

func TestShareSamplingGoesToTheSessionThatAsked(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	var sessions []*session
	for i := 0; i < 3; i++ {
		s := w.start(cfg)
		s.initialize("2025-06-18", `{"sampling":{}}`)
		sessions = append(sessions, s)
	}
	// In turn: each gets its own answer.
	for round := 0; round < 2; round++ {
		for i, s := range sessions {
			mark := fmt.Sprintf("answer of session %d", i)
			m := callAnswering(s, `{"name":"a:sample"}`, mark)
			if m.Error != nil || !strings.Contains(string(m.Result), mark) {
				t.Fatalf("session %d: sample answered %s, want its own answer %q", i, m.line, mark)
			}
		}
	}
	// At once: each gets its own answer or an error, never another's.
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mark := fmt.Sprintf("answer of session %d", i)
			m := callAnswering(s, `{"name":"a:sample"}`, mark)
			for j := range sessions {
				if other := fmt.Sprintf("answer of session %d", j); j != i && strings.Contains(string(m.line), other) {
					t.Errorf("session %d got session %d's answer: %s", i, j, m.line)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(startedPids(t, started)); n != 1 {
		t.Errorf("%d processes of server a, want 1", n)
	}
}

func TestShareProgressTokensStayWithTheirSession(t *testing.T) {
	w := newShareWorld(t, "1s")
	cfg := writeConfig(t, ts("a"))
	a, b := w.start(cfg), w.start(cfg)
	a.initialize("2025-06-18", `{}`)
	b.initialize("2025-06-18", `{}`)
	const call = `{"name":"a:progress","arguments":{"steps":3},"_meta":{"progressToken":"same"}}`
	ida, idb := a.request("tools/call", call), b.request("tools/call", call)
	a.response(ida)
	b.response(idb)
	a.barrier()
	b.barrier()
	for _, s := range []*session{a, b} {
		if n := s.count(func(m *msg) bool { return m.Method == "notifications/progress" }); n != 3 {
			t.Errorf("a session got %d progress notifications for its 3 steps, want 3 (its own only)", n)
		}
	}
}

func TestShareAnotherEnvValueIsAnotherProcess(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	one := ts("a", "-started-file", started)
	one.env = map[string]string{"TOKEN": "secret-one-4711"}
	two := one
	two.env = map[string]string{"TOKEN": "secret-two-4711"}
	s1, s2, s3 := w.start(writeConfig(t, one)), w.start(writeConfig(t, two)), w.start(writeConfig(t, one))
	for i, s := range []*session{s1, s2, s3} {
		s.initialize("2025-06-18", `{}`)
		want := map[int]string{0: "secret-one-4711", 1: "secret-two-4711", 2: "secret-one-4711"}[i]
		if got := toolText(t, s.result("tools/call", `{"name":"a:env","arguments":{"name":"TOKEN"}}`)); got != want {
			t.Errorf("session %d: TOKEN is %q, want %q", i, got, want)
		}
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Errorf("%d processes for two env values, want 2", n)
	}
	if log, _ := os.ReadFile(w.holderLog()); strings.Contains(string(log), "4711") {
		t.Errorf("the holder's log shows an env value:\n%s", log)
	}
}

func TestShareHolderKilledNoOrphanAndCallsWorkAgain(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	a, b := w.start(cfg), w.start(cfg)
	for _, s := range []*session{a, b} {
		s.initialize("2025-06-18", `{"sampling":{}}`)
		s.result("tools/call", `{"name":"a:echo","arguments":{"text":"before"}}`)
	}
	holders := w.holderPids()
	servers := startedPids(t, started)
	if len(holders) != 1 || len(servers) != 1 {
		t.Fatalf("holders %v, servers %v: want one each", holders, servers)
	}
	// A call surely at the server: it asks the session, which never answers.
	slow := a.request("tools/call", `{"name":"a:sample"}`)
	a.serverRequest("sampling/createMessage")
	pr, _ := os.FindProcess(holders[0])
	pr.Kill()
	// The call in flight gets an error at once, naming the holder.
	if m := a.response(slow); m.Error == nil || !strings.Contains(string(m.Error), "holder of shared servers ended") {
		t.Fatalf("the call in flight when the holder died: %s", m.line)
	}
	deadline := time.Now().Add(waitLimit)
	for alive(servers[0]) {
		if time.Now().After(deadline) {
			t.Fatalf("server pid %d outlived its holder (SIGKILL)", servers[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, s := range []*session{a, b} {
		if got := toolText(t, s.result("tools/call", `{"name":"a:echo","arguments":{"text":"after"}}`)); !strings.Contains(got, "after") {
			t.Fatalf("after the holder died: %q", got)
		}
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Errorf("%d processes started in all, want 2 (one before, one shared after)", n)
	}
	if n := len(w.holderPids()); n != 1 {
		t.Errorf("%d holders after the first died, want 1", n)
	}
}

func TestShareSocketDirectoryIsTheUsersAlone(t *testing.T) {
	w := newShareWorld(t, "1s")
	dir := filepath.Join(w.runtime, "mcp-simple-aggregator")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	started := filepath.Join(t.TempDir(), "started")
	s := w.start(writeConfig(t, ts("a", "-started-file", started)))
	s.initialize("2025-06-18", `{}`)
	s.result("tools/call", `{"name":"a:echo","arguments":{"text":"x"}}`)
	s.waitStderr("has mode 0755, not 0700")
	s.waitStderr("this session runs its servers itself")
	if n := len(w.holderPids()); n != 0 {
		t.Errorf("a holder runs on a directory others may enter")
	}
	os.Chmod(dir, 0o700)
	s2 := w.start(writeConfig(t, ts("a", "-started-file", started)))
	s2.initialize("2025-06-18", `{}`)
	s2.result("tools/call", `{"name":"a:echo","arguments":{"text":"x"}}`)
	s2.waitStderr("held by the holder")
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory: %v, mode %v", err, fi.Mode())
	}
}

// callAnsweringRoots calls on session s and answers every roots/list it
// is asked meanwhile with roots (a JSON array), until the answer.
func callAnsweringRoots(s *session, method, params, roots string) *msg {
	s.t.Helper()
	id := s.request(method, params)
	for {
		m := s.next("the answer to "+id+" or roots/list", func(m *msg) bool {
			return (m.isResponse() && string(m.ID) == id) || (m.Method == "roots/list" && m.ID != nil)
		})
		if m.isResponse() {
			return m
		}
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":%s}}`, m.ID, roots))
	}
}

func TestShareSessionsWithOtherRootsGetTheirOwn(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started, "-ask-on-init", "roots/list"))
	rootsOf := []string{`[{"uri":"file:///one"}]`, `[{"uri":"file:///two"}]`, `[{"uri":"file:///one"}]`}
	for i, roots := range rootsOf {
		s := w.start(cfg)
		m := callAnsweringRoots(s, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"e2e","version":"1"}}`, roots)
		if m.Error != nil {
			t.Fatalf("session %d: initialize: %s", i, m.line)
		}
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		m = callAnsweringRoots(s, "tools/call", `{"name":"a:roots"}`, roots)
		if want := map[bool]string{true: "file:///one", false: "file:///two"}[i != 1]; m.Error != nil || !strings.Contains(string(m.Result), want) {
			t.Fatalf("session %d: the server's roots/list got %s, want its own roots %s", i, m.line, roots)
		}
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Errorf("%d processes for two sets of roots, want 2", n)
	}
	// Each process asked its roots as it was initialized, and got its
	// session's.
	for _, want := range []string{`asked roots/list on init: {"roots":[{"uri":"file:///one"}]}`, `asked roots/list on init: {"roots":[{"uri":"file:///two"}]}`} {
		w.waitLog(want)
	}
}

// Modern clients probe each server with server/discover first: the
// holder probes a legacy server once, answers later probes with what it
// said, and a server that exits on the probe is started again, once.
func TestShareModernClientsOverLegacyServers(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	file := filepath.Join(t.TempDir(), "discovered")
	cfg := writeConfig(t, ts("a", "-started-file", started), ts("bad", "-started-file", started, "-exit-on-discover", file))
	for i := 0; i < 3; i++ {
		s := w.start(cfg)
		if m := s.call("server/discover", `{`+modernMeta+`}`); m.Error != nil {
			t.Fatalf("session %d: server/discover: %s", i, clip(m.line))
		}
		for _, tool := range []string{"a:echo", "bad:echo"} {
			m := s.call("tools/call", `{`+modernMeta+`,"name":"`+tool+`","arguments":{"text":"hello"}}`)
			if m.Error != nil || toolText(t, m.Result) != `{"text":"hello"}` {
				t.Fatalf("session %d: %s: %s", i, tool, clip(m.line))
			}
		}
	}
	counts := map[string]int{}
	data, _ := os.ReadFile(started)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		counts[strings.Fields(line)[0]]++
	}
	if counts["a"] != 1 || counts["bad"] != 2 {
		t.Errorf("processes started: %v, want a once, bad twice (it exits on its first probe)", counts)
	}
}

// Sessions starting at the same moment end with one holder and one
// process per server.
func TestShareSessionsStartingAtOnceMeetOneHolder(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	sessions := make([]*session, 4)
	for i := range sessions {
		sessions[i] = w.start(cfg)
	}
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
			s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a:echo","arguments":{"text":"x"}}}`)
		}()
	}
	wg.Wait()
	for i, s := range sessions {
		if m := s.response("2"); m.Error != nil {
			t.Errorf("session %d: %s", i, m.line)
		}
	}
	// A holder that lost the race says so and exits: wait for that.
	deadline := time.Now().Add(waitLimit)
	for len(w.holderPids()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("holders %v, want 1", w.holderPids())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(startedPids(t, started)); n != 1 {
		t.Errorf("%d processes of a, want 1", n)
	}
	pids := map[string]bool{}
	for _, s := range sessions {
		if m := holderPidInLog.FindStringSubmatch(s.stderrText()); m != nil {
			pids[m[1]] = true
		}
	}
	if len(pids) != 1 {
		t.Errorf("sessions name holders %v, want one", pids)
	}
}

func TestShareCheckSaysWhetherEachServerIsShared(t *testing.T) {
	w := newShareWorld(t, "1s")
	cfg := writeConfig(t, ts("a"))
	check := func() string {
		cmd := exec.Command(aggregatorBin, "--config", cfg, "--share", "--share-idle", w.idle, "--check")
		cmd.Env = append(os.Environ(), quickRaceExit, "XDG_CACHE_HOME="+w.cache, "XDG_RUNTIME_DIR="+w.runtime)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("--check --share: %v\n%s", err, out)
		}
		return string(out)
	}
	if out := check(); !regexp.MustCompile(`\n  a: shared: held by the holder \(pid \d+\)`).MatchString(out) {
		t.Errorf("--check --share does not say a is shared:\n%s", out)
	}
	w.waitHolderGone()
	dir := filepath.Join(w.runtime, "mcp-simple-aggregator")
	os.Chmod(dir, 0o750)
	if out := check(); !strings.Contains(out, "a: not shared: runs in this session (share: socket directory "+dir+": has mode 0750") {
		t.Errorf("--check --share does not say why a is not shared:\n%s", out)
	}
	os.Chmod(dir, 0o700)
}

// --share-idle 2s: the server stays up 2 s after the last session (a
// session within it finds it up), then it stops and the holder exits.
func TestShareIdleLeavesNothingRunning(t *testing.T) {
	w := newShareWorld(t, "2s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	s := w.start(cfg)
	s.initialize("2025-06-18", `{}`)
	s.result("tools/call", `{"name":"a:echo","arguments":{"text":"x"}}`)
	s.closeAndWait()
	ended := time.Now()
	s2 := w.start(cfg) // within the idle time: the same process
	s2.initialize("2025-06-18", `{}`)
	s2.result("tools/call", `{"name":"a:echo","arguments":{"text":"x"}}`)
	if time.Since(ended) < 2*time.Second {
		if n := len(startedPids(t, started)); n != 1 {
			t.Errorf("a session within the idle time started %d processes in all, want 1", n)
		}
	}
	last := time.Now() // the idle time starts after it, as the session's connection ends
	s2.closeAndWait()
	w.waitHolderGone()
	if took := time.Since(last); took < 2*time.Second {
		t.Errorf("the holder exited %v after the last session, before the idle time (2s)", took)
	}
	for _, p := range startedPids(t, started) {
		if alive(p) {
			t.Errorf("server pid %d still runs after the holder exited", p)
		}
	}
}

// A 2026-07-28 server (the TypeScript SDK v2's, modern only) is one
// process for the entry, whatever the sessions declare: its state is per
// request.
func TestShareModernServerIsOneProcess(t *testing.T) {
	requireInterop(t)
	w := newShareWorld(t, "1s")
	script, err := filepath.Abs(filepath.Join(interopDir, "era-server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, server{key: "era", command: "node", args: []string{script, "--modern-only"}})
	caps := []string{`{}`, `{"elicitation":{}}`, `{"sampling":{}}`}
	for i, c := range caps {
		s := w.start(cfg)
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + c + `}`
		if m := s.call("server/discover", `{`+meta+`}`); m.Error != nil {
			t.Fatalf("session %d: server/discover: %s", i, clip(m.line))
		}
		text := fmt.Sprintf("from session %d", i)
		m := s.call("tools/call", `{`+meta+`,"name":"era:echo","arguments":{"text":"`+text+`"}}`)
		if m.Error != nil || !strings.Contains(string(m.Result), text) {
			t.Fatalf("session %d: era:echo: %s", i, clip(m.line))
		}
	}
	log, _ := os.ReadFile(w.holderLog())
	if n := strings.Count(string(log), "started for entry"); n != 1 {
		t.Errorf("the holder started the modern server %d times, want once; its log:\n%s", n, log)
	}
}

// A session whose roots change leaves the shared process and is keyed by
// its new roots; the others keep theirs.
func TestShareRootsChangeMovesTheSession(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	const initParams = `{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"e2e","version":"1"}}`
	one, two := `[{"uri":"file:///one"}]`, `[{"uri":"file:///two"}]`
	a, b := w.start(cfg), w.start(cfg)
	for _, s := range []*session{a, b} {
		if m := callAnsweringRoots(s, "initialize", initParams, one); m.Error != nil {
			t.Fatal(m.line)
		}
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if m := callAnsweringRoots(s, "tools/call", `{"name":"a:roots"}`, one); !strings.Contains(string(m.Result), "file:///one") {
			t.Fatalf("roots: %s", m.line)
		}
	}
	if n := len(startedPids(t, started)); n != 1 {
		t.Fatalf("%d processes for one set of roots, want 1", n)
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	// Its next call reaches a process of its new roots: the session side
	// left the shared one as the notification passed.
	if m := callAnsweringRoots(a, "tools/call", `{"name":"a:roots"}`, two); m.Error != nil || !strings.Contains(string(m.Result), "file:///two") {
		t.Fatalf("after its roots changed, a's server got %s, want its new roots", m.line)
	}
	if m := callAnsweringRoots(b, "tools/call", `{"name":"a:roots"}`, one); !strings.Contains(string(m.Result), "file:///one") {
		t.Fatalf("b's roots: %s", m.line)
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Errorf("%d processes, want 2 (one per set of roots)", n)
	}
}

// When the holder dies and no new one can be reached (here: the socket
// directory became open to others), the session runs the server itself,
// says so once, and its calls work again.
func TestShareHolderGoneAndNoneToReachRunsTheServerHere(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started))
	s := w.start(cfg)
	s.initialize("2025-06-18", `{}`)
	s.result("tools/call", `{"name":"a:echo","arguments":{"text":"before"}}`)
	holders := w.holderPids()
	if len(holders) != 1 {
		t.Fatalf("holders %v", holders)
	}
	dir := filepath.Join(w.runtime, "mcp-simple-aggregator")
	os.Chmod(dir, 0o755)
	defer os.Chmod(dir, 0o700)
	pr, _ := os.FindProcess(holders[0])
	pr.Kill()
	s.waitStderr("the holder of shared servers ended")
	for i := 0; i < 2; i++ {
		if got := toolText(t, s.result("tools/call", `{"name":"a:echo","arguments":{"text":"after"}}`)); !strings.Contains(got, "after") {
			t.Fatalf("after the holder died: %q", got)
		}
	}
	s.waitStderr("running it in this session")
	if n := strings.Count(s.stderrText(), "running it in this session"); n != 1 {
		t.Errorf("said %d times that it runs the server itself, want once", n)
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Errorf("%d processes started, want 2 (the holder's, then the session's own)", n)
	}
	os.Remove(w.sock()) // a holder killed leaves it; the next one would remove it, under the lock
}

// A config edit moves only the changed entry: its session gets a process
// of the new entry; the other session keeps the old one, and so does the
// unchanged entry.
func TestShareReloadMovesOnlyTheChangedEntry(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	a1 := ts("a", "-started-file", started)
	a1.env = map[string]string{"V": "first-value-x"}
	b := ts("b", "-started-file", started)
	cfg := writeConfig(t, a1, b)
	s1, s2 := w.start(cfg, "--reload-poll", "0", "--debug"), w.start(writeConfig(t, a1, b))
	for _, s := range []*session{s1, s2} {
		s.initialize("2025-11-25", `{}`)
		s.tools()
	}
	a2 := a1
	a2.env = map[string]string{"V": "second-value-x"}
	rewrite(t, cfg, a2, b)
	if err := s1.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s1.reloaded(1)
	for i, want := range map[*session]string{s1: "second-value-x", s2: "first-value-x"} {
		if got := toolText(t, i.result("tools/call", `{"name":"a:env","arguments":{"name":"V"}}`)); got != want {
			t.Errorf("V is %q, want %q", got, want)
		}
	}
	counts := map[string]int{}
	data, _ := os.ReadFile(started)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		counts[strings.Fields(line)[0]]++
	}
	if counts["a"] != 2 || counts["b"] != 1 {
		t.Errorf("processes started %v, want a twice (old and new entry), b once", counts)
	}
}
