package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The isolation tests with real processes: the aggregator binary serves two
// test servers, "bad" (with its hostile tools, -hostile) and "good". While
// bad misbehaves with a call in flight, a ping (answered by the aggregator
// itself) and a call of good:echo sent right after are both answered, and
// the call to bad ends with its answer or an error naming "bad". Every wait
// is on lines read, bounded by the harness's deadlock watchdog (waitLimit).

// isolationServers are bad and good, in that order; extra are more
// arguments of bad.
func isolationServers(extra ...string) []server {
	return []server{ts("bad", append([]string{"-hostile"}, extra...)...), ts("good")}
}

// startIsolation runs the aggregator on bad and good and initializes it as
// a legacy client with sampling.
func startIsolation(t *testing.T) *session {
	t.Helper()
	s := startConfig(t, isolationServers())
	s.initialize("2025-11-25", `{"sampling":{}}`)
	return s
}

// othersAnswer sends a ping and a call of good:echo and waits for both
// answers, checking them.
func othersAnswer(t *testing.T, s *session) {
	t.Helper()
	ping := s.request("ping", "")
	echo := s.request("tools/call", `{"name":"good:echo","arguments":{"text":"hello"}}`)
	if m := s.response(ping); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("ping: %s", clip(m.line))
	}
	if m := s.response(echo); m.Error != nil || toolText(t, m.Result) != `{"text":"hello"}` {
		t.Fatalf("good:echo: %s", clip(m.line))
	}
}

// answered reports whether the request id has its answer already.
func (s *session) answered(id string) bool {
	return s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == id }) > 0
}

// badPid asks bad for its process id.
func badPid(t *testing.T, s *session) int {
	t.Helper()
	pid, err := strconv.Atoi(toolText(t, s.result("tools/call", `{"name":"bad:pid"}`)))
	if err != nil || pid <= 0 {
		t.Fatalf("bad:pid: %v", err)
	}
	return pid
}

// failedNamingBad checks that m is an error answer naming server "bad".
func failedNamingBad(t *testing.T, m *msg, what string) {
	t.Helper()
	if code, message := m.errorCode(); m.Error == nil || !strings.Contains(message, `server "bad"`) {
		t.Errorf("%s ended with %s (code %d), want an error naming server \"bad\"", what, clip(m.line), code)
	}
}

// processState returns the state letter of /proc/PID/stat ("T": stopped).
func processState(t testing.TB, pid int) string {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	var state string
	fmt.Sscan(string(stat[strings.LastIndexByte(string(stat), ')')+1:]), &state)
	return state
}

// badGone checks that bad left the tool list and that the list still has
// good's tools.
func badGone(t *testing.T, s *session) {
	t.Helper()
	s.notification("notifications/tools/list_changed")
	names := toolNames(t, s.result("tools/list", ""))
	if len(names) == 0 || !strings.HasPrefix(names[0], "good:") || strings.HasPrefix(names[len(names)-1], "bad:") {
		t.Errorf("tools after bad is gone: %v", names)
	}
}

func TestIsolationRealProcesses(t *testing.T) {
	t.Run("stopped", func(t *testing.T) {
		s := startIsolation(t)
		pid := badPid(t, s)
		slow := s.request("tools/call", `{"name":"bad:slow","arguments":{"ms":300}}`)
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		// Registered after start's cleanup, so it runs first: no process
		// is left stopped, whatever happens.
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
		othersAnswer(t, s)
		// The condition held all along: only SIGCONT resumes bad, and a
		// stopped process answers nothing.
		if state := processState(t, pid); state != "T" {
			t.Errorf("bad is in state %q after the others answered, want T (stopped)", state)
		}
		if s.answered(slow) {
			t.Fatal("bad:slow was answered while bad was stopped")
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		if m := s.response(slow); m.Error != nil {
			failedNamingBad(t, m, "bad:slow")
		} else if got := toolText(t, m.Result); got != "done" {
			t.Errorf("bad:slow answered %q after SIGCONT", got)
		}
		// bad serves again.
		if again := badPid(t, s); again != pid {
			t.Errorf("bad's pid is %d after SIGCONT, was %d", again, pid)
		}
	})

	t.Run("crashed", func(t *testing.T) {
		s := startIsolation(t)
		crash := s.request("tools/call", `{"name":"bad:crash"}`)
		othersAnswer(t, s)
		failedNamingBad(t, s.response(crash), "bad:crash")
		badGone(t, s)
		if m := s.call("tools/call", `{"name":"bad:pid"}`); m.Error == nil {
			t.Errorf("bad:pid after bad crashed: %s", clip(m.line))
		}
		s.waitStderr("crash requested")
		othersAnswer(t, s)
	})

	t.Run("closed stdout", func(t *testing.T) {
		s := startIsolation(t)
		closeout := s.request("tools/call", `{"name":"bad:closeout"}`)
		othersAnswer(t, s)
		m := s.response(closeout)
		failedNamingBad(t, m, "bad:closeout")
		if _, message := m.errorCode(); !strings.Contains(message, "stdout") {
			t.Errorf("bad:closeout ended with %q, which does not say bad closed its stdout", message)
		}
		badGone(t, s)
		othersAnswer(t, s)
	})

	t.Run("huge line written slowly", func(t *testing.T) {
		s := startIsolation(t)
		const n = 8 << 20
		line := s.request("tools/call", fmt.Sprintf(`{"name":"bad:slowline","arguments":{"bytes":%d,"pause":5}}`, n))
		othersAnswer(t, s)
		// 128 pieces 5 ms apart: the line takes 0.64 s at least to write.
		if s.answered(line) {
			t.Fatal("bad:slowline was answered before the others: the test proves nothing")
		}
		if got := toolText(t, s.result("tools/call", `{"name":"bad:pid"}`)); got == "" {
			t.Error("bad:pid answered an empty text")
		}
		m := s.response(line)
		if m.Error != nil {
			t.Fatalf("bad:slowline: %s", clip(m.line))
		}
		if got := toolText(t, m.Result); len(got) != n || strings.Trim(got, "x") != "" {
			t.Errorf("bad:slowline answered %d bytes, want %d times x", len(got), n)
		}
	})

	t.Run("hundreds of sampling requests", func(t *testing.T) {
		s := startIsolation(t)
		const n = 300
		sample := s.request("tools/call", fmt.Sprintf(`{"name":"bad:samplemany","arguments":{"n":%d}}`, n))
		var ids []string
		for len(ids) < n {
			ids = append(ids, string(s.serverRequest("sampling/createMessage").ID))
		}
		// None answered yet: bad waits for all of them.
		othersAnswer(t, s)
		if s.answered(sample) {
			t.Fatal("bad:samplemany was answered before its requests")
		}
		for _, id := range ids {
			s.send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m","stopReason":"endTurn"}}`)
		}
		m := s.response(sample)
		if m.Error != nil || toolText(t, m.Result) != strconv.Itoa(n) {
			t.Errorf("bad:samplemany: %s", clip(m.line))
		}
	})

	// A legacy server that exits on the 2026-07-28 probe is started again
	// and initialized: a modern client is then served by both.
	t.Run("restarted after exiting on discover", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "discovered")
		s := startConfig(t, isolationServers("-exit-on-discover", file))
		if m := s.call("server/discover", `{`+modernMeta+`}`); m.Error != nil {
			t.Fatalf("server/discover: %s", clip(m.line))
		}
		if m := s.call("tools/list", `{`+modernMeta+`}`); m.Error != nil { // the servers start, probed
			t.Fatalf("tools/list: %s", clip(m.line))
		}
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("bad did not exit on server/discover: %v", err)
		}
		s.waitStderr("server/discover: exiting")
		if m := s.call("tools/call", `{`+modernMeta+`,"name":"good:echo","arguments":{"text":"hello"}}`); m.Error != nil || toolText(t, m.Result) != `{"text":"hello"}` {
			t.Errorf("good:echo: %s", clip(m.line))
		}
		if m := s.call("tools/call", `{`+modernMeta+`,"name":"bad:pid"}`); m.Error != nil {
			t.Errorf("bad:pid after its restart: %s", clip(m.line))
		}
		if n := strings.Count(s.stderrText(), "server/discover: exiting"); n != 1 {
			t.Errorf("bad exited on server/discover %d times, want 1; stderr:\n%s", n, s.stderrText())
		}
	})
}
