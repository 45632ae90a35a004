package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitStderrLine waits until one line of stderr holds every one of parts.
func (s *session) waitStderrLine(parts ...string) {
	s.t.Helper()
	s.waitFor(fmt.Sprintf("a stderr line with %q", parts), func() bool {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				return true
			}
		}
		return false
	})
}

// childByKey returns the pid of the aggregator's child started as the test
// server of key (ts(key, ...)); the child must have been spawned.
func childByKey(t *testing.T, s *session, key string) int {
	t.Helper()
	for _, pid := range childPIDs(t, s.cmd.Process.Pid) {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && bytes.Contains(cmdline, []byte("\x00-name\x00"+key+"\x00")) {
			return pid
		}
	}
	t.Fatalf("no child process for server %q", key)
	return 0
}

// waitProcessGone waits until pid has ended. Nothing tells the client when
// the aggregator reaps a child, so this polls /proc; waitLimit is a
// deadlock watchdog.
func waitProcessGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running after %v", pid, waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// responseWithin waits up to limit for the answer to id: for answers that
// take long to produce under the race detector.
func (s *session) responseWithin(id string, limit time.Duration) *msg {
	s.t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		var found *msg
		for _, m := range s.inbox {
			if !s.taken[m] && m.isResponse() && string(m.ID) == id {
				s.taken[m] = true
				found = m
				break
			}
		}
		updated := s.updated
		s.mu.Unlock()
		if found != nil {
			return found
		}
		select {
		case <-updated:
		case <-s.exited:
			s.t.Fatalf("aggregator exited (%v) while waiting for the answer to id %s", s.err, id)
		case <-deadline.C:
			s.t.Fatalf("no answer to id %s within %v", id, limit)
		}
	}
}

// tracedTS is ts(key, args...) run by a shell that, once the test server
// has exited, writes "exit STATUS" to the file it returns. The file shows
// that the aggregator stopped the child by closing its stdin and reaped it
// before exiting: a child killed with a signal, or by the kernel when the
// aggregator dies (parent-death signal), writes nothing.
func tracedTS(t *testing.T, key string, args ...string) (server, string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), key+".exit")
	script := fmt.Sprintf(`"$0" "$@"; echo "exit $?" > '%s'`, trace)
	return server{key: key, command: "sh", args: append([]string{"-c", script, testserverBin, "-name", key}, args...)}, trace
}

// checkTrace verifies that the child of tracedTS exited with status 0.
func checkTrace(t *testing.T, trace string) {
	t.Helper()
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Errorf("the child was not stopped by closing its stdin and reaped before the aggregator exited: %v", err)
	} else if string(b) != "exit 0\n" {
		t.Errorf("the child ended with %q, want exit 0", b)
	}
}

// hasPrefixed reports whether names hold a tool of server key.
func hasPrefixed(names []string, key string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, key+":") })
}

func TestChildrenStartInParallel(t *testing.T) {
	const delay = 400 * time.Millisecond
	var servers []server
	for i := 0; i < 5; i++ {
		servers = append(servers, ts(fmt.Sprintf("s%d", i), "-init-delay", delay.String()))
	}
	s := startConfig(t, servers)
	s.initialize("2025-11-25", "{}")
	begin := time.Now()
	list := s.result("tools/list", "") // starts them all
	took := time.Since(begin)
	// A parallelism check, not a measure: one after the other, the five
	// children would need 5 x 400 ms = 2 s; in parallel 400 ms and change.
	t.Logf("the first list answered after %v", took)
	if took >= 1600*time.Millisecond {
		t.Errorf("the first list took %v for 5 children that each take %v to initialize: not started in parallel", took, delay)
	}
	if n := len(toolNames(t, list)); n != 5*len(toolNames(t, directToolsList(t))) {
		t.Errorf("%d tools, want those of all 5 children", n)
	}
}

func TestChildStderrIsRelayedLineByLineWithItsKey(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-stderr", "3"), ts("beta", "-stderr", "2")})
	s.initialize("2025-11-25", "{}")
	s.startServers()
	for _, line := range []string{"[alpha] stderr line 0", "[alpha] stderr line 1", "[alpha] stderr line 2", "[beta] stderr line 0", "[beta] stderr line 1"} {
		s.waitFor("stderr line "+line, func() bool {
			return slices.Contains(strings.Split(s.stderr.String(), "\n"), line)
		})
	}
}

func TestNonJSONLineOfAChildIsSkippedWithAWarning(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-noise")})
	s.initialize("2025-11-25", "{}")
	s.startServers()
	s.waitStderrLine("warning", `"alpha"`, "this is not json")
	names := toolNames(t, s.result("tools/list", ""))
	if !slices.Contains(names, "alpha:echo") {
		t.Fatalf("tools of the noisy child missing: %v", names)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"still":"here"}}`)); got != `{"still":"here"}` {
		t.Errorf("alpha:echo answered %q", got)
	}
}

// hugeLimit is the watchdog for answers of tens of MB.
const hugeLimit = 60 * time.Second

// hugeSize is n, or a quarter of it under -race: the race detector slows
// the JSON scanning of the aggregator and of the test some ten times, and
// a quarter (5 MB and more) is still far past any line-length limit one
// would meet (bufio.Scanner's 64 KiB, a raised 1 MiB). Without -race the
// full sizes run.
func hugeSize(n int) int {
	if raceEnabled {
		return n / 4
	}
	return n
}

// release drops the bytes of a huge message the session keeps.
func release(m *msg) { m.line, m.Result = nil, nil }

func TestNoLineLengthLimitClientToChildAndBack(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	// 20 MB of arguments, escapes and non-ASCII included, on one line each
	// way (twice over on the way back: as text and as structuredContent).
	unit := `abcdefghij0123456789 <&> \"q\" \u00e9 ü \\ `
	args := `{"text":"` + strings.Repeat(unit, hugeSize(20<<20)/len(unit)) + `"}`
	begin := time.Now()
	m := s.responseWithin(s.request("tools/call", `{"name":"alpha:echo","arguments":`+args+`}`), hugeLimit)
	t.Logf("echo of %d bytes answered in %v", len(args), time.Since(begin))
	if want := `"structuredContent":` + args + `}}`; !bytes.HasSuffix(m.line, []byte(want)) {
		t.Errorf("echo of %d bytes not byte-for-byte: got %d bytes ending %q", len(args), len(m.line), m.line[max(0, len(m.line)-80):])
	}
	release(m)
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"after":1}}`)); got != `{"after":1}` {
		t.Errorf("echo after the huge one answered %q", got)
	}
}

func TestNoLineLengthLimitChildToClient(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	size := hugeSize(30000000)
	begin := time.Now()
	m := s.responseWithin(s.request("tools/call", fmt.Sprintf(`{"name":"alpha:big","arguments":{"bytes":%d}}`, size)), hugeLimit)
	t.Logf("result of %d bytes answered in %v", size, time.Since(begin))
	// Checked on the bytes: decoding 30 MB again is slow under -race.
	const head, tail = `{"content":[{"type":"text","text":"`, `"}]}`
	got, ok := bytes.CutPrefix(m.Result, []byte(head))
	got, ok2 := bytes.CutSuffix(got, []byte(tail))
	if !ok || !ok2 || len(got) != size || bytes.Count(got, []byte("x")) != size {
		t.Errorf("big answered %d bytes of result, want %d x: %s", len(m.Result), size, clip(m.Result))
	}
	release(m)
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:big","arguments":{"bytes":3}}`)); got != "xxx" {
		t.Errorf("big after the huge one answered %q", got)
	}
}

func TestChildrenThatFailToStartAreReportedAndTheOthersServe(t *testing.T) {
	s := startConfig(t, []server{
		ts("alpha"),
		{key: "nospawn", command: "/nonexistent/x"},
		ts("dies", "-exit-init", "3"),
		ts("nolist", "-fail-list"),
	})
	s.initialize("2025-11-25", "{}")
	s.startServers()
	s.waitStderrLine(`"nospawn"`, "/nonexistent/x", "no such file or directory")
	s.waitStderrLine(`"dies"`, "exit status 3", "fatal: bad init")
	s.waitStderrLine(`"nolist"`, "tools/list", "list failed")
	if strings.Contains(s.stderrText(), `server "nolist": server "nolist"`) {
		t.Errorf("the server is named twice in one message:\n%s", s.stderrText())
	}

	names := toolNames(t, s.result("tools/list", ""))
	for _, key := range []string{"nospawn", "dies", "nolist"} {
		if hasPrefixed(names, key) {
			t.Errorf("tools of %s listed: %v", key, names)
		}
	}
	if !slices.Contains(names, "alpha:echo") {
		t.Fatalf("alpha's tools missing: %v", names)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"ok":true}}`)); got != `{"ok":true}` {
		t.Errorf("alpha:echo answered %q", got)
	}
}

func TestStartupTimeoutDropsAHungChildAndStopsIt(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("hung", "-hang-init")}, "--startup-timeout", "500ms", "--debug")
	// A fresh start: initialize starts them, and is answered within the
	// client's budget, without the hung child.
	init := s.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1.0"}}`)
	s.waitStderr(`server "hung": started`)
	hung := childByKey(t, s, "hung")
	if m := s.response(init); m.Result == nil {
		t.Fatalf("initialize: %s", m.line)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	names := toolNames(t, s.result("tools/list", ""))
	if hasPrefixed(names, "hung") || !slices.Contains(names, "alpha:echo") {
		t.Errorf("tools: %v, want alpha's only", names)
	}
	s.waitStderrLine("error", `"hung"`, "start-up timeout")
	waitProcessGone(t, hung)
	if slices.Contains(childPIDs(t, s.cmd.Process.Pid), hung) {
		t.Errorf("the hung child %d is still a child", hung)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)); got != `{}` {
		t.Errorf("alpha:echo answered %q", got)
	}
}

func TestChildDyingAtRunTimeIsDroppedForGood(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", "{}")
	s.startServers()
	alpha := childByKey(t, s, "alpha")
	beta := childByKey(t, s, "beta")

	// A call in flight at alpha when it dies. The echo answered after it
	// went out makes sure the slow call has long reached alpha.
	slow := s.request("tools/call", `{"name":"alpha:slow","arguments":{"ms":60000}}`)
	s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)

	crash := s.request("tools/call", `{"name":"alpha:crash","arguments":{}}`)
	// Fails at once: the harness gives up after waitLimit, well before the
	// 60 s the slow call would take.
	m := s.response(slow)
	if _, message := m.errorCode(); m.Error == nil || !strings.Contains(message, `"alpha"`) {
		t.Errorf("in-flight call to the dead child: %s, want an error naming the server", m.line)
	}
	m = s.response(crash)
	if _, message := m.errorCode(); m.Error == nil || !strings.Contains(message, `"alpha"`) || !strings.Contains(message, "exit status 3") {
		t.Errorf("crash call: %s, want an error naming the server and exit status 3", m.line)
	}
	s.notification("notifications/tools/list_changed")

	names := toolNames(t, s.result("tools/list", ""))
	if hasPrefixed(names, "alpha") || !slices.Contains(names, "beta:echo") {
		t.Errorf("tools after alpha died: %v, want beta's only", names)
	}
	if alive(alpha) || slices.Contains(childPIDs(t, s.cmd.Process.Pid), alpha) {
		t.Errorf("dead child %d not reaped", alpha)
	}
	m = s.call("tools/call", `{"name":"alpha:echo","arguments":{}}`)
	if code, message := m.errorCode(); code != -32601 || message != `Tool not found: alpha:echo: server "alpha" stopped working and was dropped (the aggregator's log says why)` {
		t.Errorf("call to the dead child's tool: %s", m.line)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"beta:echo","arguments":{"b":1}}`)); got != `{"b":1}` {
		t.Errorf("beta:echo answered %q", got)
	}
	if pids := childPIDs(t, s.cmd.Process.Pid); !slices.Equal(pids, []int{beta}) {
		t.Errorf("children %v, want only beta %d: the dead child must stay down", pids, beta)
	}
	s.waitStderrLine("error", `"alpha"`, "exit status 3")
}

func TestShutdownStopsEveryChildAndExits0(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trigger func(*session)
		polite  bool // children are stopped by closing their stdin, not signalled
	}{
		{"stdin EOF", func(s *session) { s.stdin.Close() }, true},
		{"SIGTERM", func(s *session) { s.cmd.Process.Signal(syscall.SIGTERM) }, false},
		{"SIGINT", func(s *session) { s.cmd.Process.Signal(os.Interrupt) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gamma, trace := tracedTS(t, "gamma")
			s := startConfig(t, []server{ts("alpha"), ts("beta"), gamma})
			s.initialize("2025-11-25", "{}")
			s.result("tools/list", "")
			s.request("tools/call", `{"name":"alpha:slow","arguments":{"ms":60000}}`) // still running at shutdown
			pids := childPIDs(t, s.cmd.Process.Pid)
			if len(pids) != 3 {
				t.Fatalf("children %v, want 3", pids)
			}

			s.timeExit(tc.name, tc.trigger)
			if s.err != nil {
				t.Errorf("exit after %s: %v, want status 0", tc.name, s.err)
			}
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("child %d still running after the aggregator exited", pid)
				}
			}
			if tc.polite {
				checkTrace(t, trace)
			}
		})
	}
}

// stubbornTS is the test server "stubborn" in a shell that ignores SIGTERM
// and, once the server has ended at the end of its stdin, sleeps.
func stubbornTS() server {
	return server{key: "stubborn", command: "sh", args: []string{"-c",
		`trap '' TERM; "$0" "$@"; exec sleep 300`, testserverBin, "-name", "stubborn"}}
}

// timeExit runs trigger and returns how long the aggregator then took to
// exit.
func (s *session) timeExit(what string, trigger func(*session)) time.Duration {
	s.t.Helper()
	begin := time.Now()
	trigger(s)
	select {
	case <-s.exited:
	case <-time.After(waitLimit):
		s.t.Fatalf("aggregator still running %v after %s", waitLimit, what)
	}
	took := time.Since(begin)
	s.t.Logf("exited %v after %s", took.Round(time.Millisecond), what)
	return took
}

// A child that ignores both the end of its stdin and SIGTERM (as
// server-everything does while its request to the client is pending) has
// to be killed. On a signal the host will not wait: Claude Code sends
// SIGINT, SIGTERM 100 ms later and SIGKILL 400 ms after that, so the
// aggregator must be gone, with its children, within 500 ms. At the end of
// stdin (the polite shutdown) the children get a graceful chance and the
// whole exit stays under 3 s, also with a request in flight.
func TestShutdownWithAStubbornChild(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trigger func(*session)
		limit   time.Duration
	}{
		{"stdin EOF", func(s *session) { s.stdin.Close() }, 3 * time.Second},
		{"SIGINT", func(s *session) { s.cmd.Process.Signal(os.Interrupt) }, 500 * time.Millisecond},
		{"SIGTERM", func(s *session) { s.cmd.Process.Signal(syscall.SIGTERM) }, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startConfig(t, []server{ts("alpha"), stubbornTS()})
			s.initialize("2025-11-25", "{}")
			s.result("tools/list", "")
			s.request("tools/call", `{"name":"alpha:slow","arguments":{"ms":60000}}`)
			pids := childPIDs(t, s.cmd.Process.Pid)
			if len(pids) != 2 {
				t.Fatalf("children %v, want 2", pids)
			}
			if took := s.timeExit(tc.name, tc.trigger); took >= tc.limit {
				t.Errorf("aggregator took %v to exit after %s, want less than %v", took, tc.name, tc.limit)
			}
			if s.err != nil {
				t.Errorf("exit: %v, want status 0", s.err)
			}
			for _, pid := range pids {
				if alive(pid) {
					t.Errorf("child %d still running after the aggregator exited", pid)
				}
			}
		})
	}
}

// A signal during a polite shutdown hurries it: the aggregator is gone
// within 500 ms of the signal, though the stubborn child would have had
// seconds of grace.
func TestSignalHurriesAPoliteShutdown(t *testing.T) {
	s := startConfig(t, []server{stubbornTS()}, "--debug")
	s.initialize("2025-11-25", "{}")
	s.stdin.Close()
	s.waitStderrLine("client closed its input")
	if took := s.timeExit("SIGINT", func(s *session) { s.cmd.Process.Signal(os.Interrupt) }); took >= 500*time.Millisecond {
		t.Errorf("aggregator took %v to exit after SIGINT during shutdown, want less than 500ms", took)
	}
}

// When the aggregator is killed (SIGKILL: it cannot clean up), its watchdog
// kills every server's process group, grandchildren included, and exits.
func TestNoOrphansWhenTheAggregatorIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	tree := server{key: "tree", command: "sh", args: []string{"-c",
		`sleep 1000 & echo $! > '` + pidFile + `'; exec "$0" "$@"`, testserverBin, "-name", "tree"}}
	s := startConfig(t, []server{ts("alpha"), tree})
	s.initialize("2025-11-25", "{}")
	s.startServers()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("grandchild pid %q: %v", b, err)
	}
	watched := append(childPIDs(t, s.cmd.Process.Pid), grandchild, watchdogOf(t, s.cmd.Process.Pid))
	if len(watched) != 4 {
		t.Fatalf("processes %v, want 2 servers, a grandchild and the watchdog", watched)
	}

	begin := time.Now()
	s.cmd.Process.Kill()
	<-s.exited
	left := watched
	for len(left) > 0 && time.Since(begin) < waitLimit {
		left = slices.DeleteFunc(left, func(pid int) bool { return !alive(pid) })
		runtime.Gosched()
	}
	took := time.Since(begin)
	t.Logf("all %d processes gone %v after SIGKILL of the aggregator", len(watched), took.Round(time.Millisecond))
	if len(left) > 0 || took > time.Second {
		t.Errorf("processes %v still running %v after SIGKILL of the aggregator (watched %v)", left, took, watched)
	}
}
