package e2e

// A server that takes 8 s to initialize, on a fresh start (nothing
// remembered), costs the client no more than directly: its initialize
// waits for it only within the client's own budget (1 s for a client that
// fetches lists again), calls to the servers that are up are answered
// meanwhile, and the slow server's tools follow.

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// slowInit is how long the slow server takes to answer initialize.
const slowInit = "8s"

// slowReady is the aggregator's debug line once the slow server is up.
const slowReady = `server "slow": ready in`

// startSlow runs the aggregator (--debug) over a server that is up at once
// and one that answers initialize after slowInit, and initializes as
// client, one whose budget is shorter than slowInit; it returns the
// session and how long initialize took, checked to be answered before the
// slow server was up.
func startSlow(t *testing.T, client string) (*session, time.Duration) {
	t.Helper()
	s := startConfig(t, []server{ts("fast"), ts("slow", "-init-delay", slowInit)}, "--debug")
	began := time.Now()
	s.result("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}`)
	took := time.Since(began)
	t.Logf("%s: initialize answered in %v with a server taking %s", client, took.Round(time.Millisecond), slowInit)
	if strings.Contains(s.stderrText(), slowReady) {
		t.Fatalf("initialize was answered only once the slow server was up:\n%s", s.stderrText())
	}
	if took > 5*time.Second {
		t.Errorf("initialize took %v, want at most 5 s", took)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s, took
}

// callFast calls fast:echo and checks it is answered before the slow
// server is up.
func callFast(t *testing.T, s *session) {
	t.Helper()
	if got := toolText(t, s.result("tools/call", `{"name":"fast:echo","arguments":{"text":"hi"}}`)); !strings.Contains(got, "hi") {
		t.Errorf("fast:echo answered %q", got)
	}
	if strings.Contains(s.stderrText(), slowReady) {
		t.Fatalf("the call to the fast server was answered only once the slow server was up:\n%s", s.stderrText())
	}
}

// A client that takes list_changed (Claude Code, Gemini CLI) gets the
// tools that are up at once, and the slow server's announced when it is up.
func TestSlowServerToolsFollowWithListChanged(t *testing.T) {
	s, _ := startSlow(t, "claude-code")
	callFast(t, s)
	first := toolNames(t, s.result("tools/list", ""))
	if !slices.Contains(first, "fast:echo") || slices.Contains(first, "slow:echo") {
		t.Errorf("the first tools/list: %q, want fast's tools and not slow's", first)
	}
	s.notification("notifications/tools/list_changed")
	// The aggregator logs that the slow server is up before it sends
	// list_changed, but stderr and stdout are read here by two goroutines:
	// the line may not be in yet. The list below shows the order.
	s.waitStderr(slowReady)
	if got := toolNames(t, s.result("tools/list", "")); !slices.Contains(got, "slow:echo") || !slices.Contains(got, "fast:echo") {
		t.Errorf("tools/list after list_changed: %q", got)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"slow:echo","arguments":{"text":"late"}}`)); !strings.Contains(got, "late") {
		t.Errorf("slow:echo answered %q", got)
	}
}

// A client that takes its first tools/list as final (Codex), on a fresh
// start: its initialize waits for the slow server, within its budget (24
// s), and says what it declared (its instructions); its first list, at
// once, holds the tools of both servers.
func TestSlowServerToolsInTheFirstListForCodex(t *testing.T) {
	s := startConfig(t, []server{ts("fast"), ts("slow", "-init-delay", slowInit, "-instructions", "Slow.")}, "--debug")
	init := parseAdvertisedInit(t, s.result("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex-mcp-client","version":"1"}}`))
	if init.Instructions == nil || !strings.Contains(*init.Instructions, "## slow\n\nSlow.") {
		t.Errorf("initialize answered without the slow server's instructions (%v): it did not wait for it", init.Instructions)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	got := toolNames(t, s.result("tools/list", ""))
	if !slices.Contains(got, "slow:echo") || !slices.Contains(got, "fast:echo") {
		t.Errorf("the first tools/list: %q, want the tools of both servers", got)
	}
	if n := s.count(func(m *msg) bool { return m.Method == "notifications/tools/list_changed" }); n != 0 {
		t.Errorf("%d list_changed for a list that was whole", n)
	}
}
