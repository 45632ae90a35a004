package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// rewrite replaces the config at path with servers, as an editor saves:
// a new file renamed over the old one.
func rewrite(t *testing.T, path string, servers ...server) {
	t.Helper()
	data, err := os.ReadFile(writeConfig(t, servers...))
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(path), ".mcp.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloaded waits for the n-th reload that changed servers (the debug log
// says so once its list_changed went out), then for the answer to a ping,
// which comes after that list_changed, and returns the tools/list_changed
// notifications the client has had so far.
func (s *session) reloaded(n int) int {
	s.t.Helper()
	s.waitFor("reload", func() bool { return strings.Count(s.stderr.String(), " server(s) started, ") >= n })
	s.call("ping", "{}")
	return s.count(func(m *msg) bool { return m.Method == "notifications/tools/list_changed" })
}

func (s *session) tools() []string {
	s.t.Helper()
	return toolNames(s.t, s.result("tools/list", "{}"))
}

// The config edited while the client stays connected: a server added, one
// changed (in an editor's save: a file renamed over the config), a broken
// edit that changes nothing, then one removed; a crashed server stays down
// through a reload that leaves its entry alone; a call in flight to an
// unchanged server goes on through every reload. Each reload is announced
// with one tools/list_changed.
func TestReloadFollowsTheConfig(t *testing.T) {
	path := writeConfig(t, ts("a"), ts("c"))
	s := start(t, "--config", path, "--reload-poll", "10ms", "--debug")
	s.initialize("2025-11-25", "{}")
	s.tools()
	inFlight := s.request("tools/call", `{"name":"a:slow","arguments":{"ms":3000}}`)

	rewrite(t, path, ts("a"), ts("c"), ts("b"))
	if n := s.reloaded(1); n != 1 {
		t.Errorf("after adding b: %d tools/list_changed, want 1", n)
	}
	if got := s.tools(); !slices.Contains(got, "b:echo") {
		t.Fatalf("after adding b, tools %v", got)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"b:echo","arguments":{"input":"hi"}}`)); !strings.Contains(got, "hi") {
		t.Errorf("b:echo answered %q", got)
	}

	rewrite(t, path, ts("a"), ts("c"), ts("b", "-tools", "1"))
	if n := s.reloaded(2); n != 2 {
		t.Errorf("after changing b: %d tools/list_changed, want 2", n)
	}
	if got := s.tools(); !slices.Contains(got, "b:t0") {
		t.Errorf("after changing b, tools %v", got)
	}

	if err := os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": 5}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s.waitStderr("mcpServers.a.command")
	if got := s.tools(); !slices.Contains(got, "b:t0") || !slices.Contains(got, "a:echo") {
		t.Errorf("after a broken edit, tools %v: the running servers must go on", got)
	}
	if !strings.Contains(s.stderrText(), "not applied") {
		t.Errorf("the broken edit was not reported as not applied:\n%s", s.stderrText())
	}

	s.call("tools/call", `{"name":"c:crash","arguments":{}}`)
	s.waitStderr(`server "c" dropped`)
	rewrite(t, path, ts("a"), ts("c"))
	if n := s.reloaded(3); n < 4 { // one for c's crash, one for b's removal
		t.Errorf("after removing b: %d tools/list_changed, want 4 in all", n)
	}
	got := s.tools()
	if slices.Contains(got, "b:t0") || slices.Contains(got, "c:echo") || !slices.Contains(got, "a:echo") {
		t.Errorf("after removing b, with c crashed: tools %v; want a's only", got)
	}

	if r := s.response(inFlight); r.Error != nil || !strings.Contains(string(r.Result), "done") {
		t.Errorf("the call in flight to a through the reloads answered %s", r.line)
	}
}

// SIGHUP reloads at once, with the poll off.
func TestReloadOnSIGHUP(t *testing.T) {
	path := writeConfig(t, ts("a"))
	s := start(t, "--config", path, "--reload-poll", "0", "--debug")
	s.initialize("2025-11-25", "{}")
	s.tools()
	rewrite(t, path, ts("a"), ts("b"))
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	s.notification("notifications/tools/list_changed")
	if got := s.tools(); !slices.Contains(got, "b:echo") {
		t.Errorf("after SIGHUP, tools %v", got)
	}
}
