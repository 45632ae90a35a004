package e2e

// The config as users write it for other clients: tool filters of every
// dialect and renames, cwd, remote entries, "~" in --config.

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A filter hides a tool from tools/list and refuses a call to it without
// reaching the server (the server's crash tool, called, would end it); a
// rename lists the tool under its new name and calls it by its own; a
// remote entry is skipped with one warning and the rest are served; a
// server runs in its cwd; a filter naming a tool the server does not offer
// gets a warning with the closest name.
func TestConfigDialects(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(testserverBin, filepath.Join(dir, "srv")); err != nil {
		t.Fatal(err)
	}
	a := ts("a")
	a.extra = `"excludeTools": ["crash"], "exposedTools": [{"original": "echo", "exposed": "say"}, "env", "crash"]`
	b := ts("b")
	b.extra = `"disabledTools": ["ecko"]`
	c := server{key: "c", command: "./srv", args: []string{"-name", "c"}, extra: `"cwd": "` + dir + `"`}
	web := server{key: "web", command: "none", extra: `"type": "http", "url": "https://example.com/mcp"`}
	s := startConfig(t, []server{a, web, b, c})
	s.initialize("2025-11-25", "{}")
	tools := s.tools()
	if got := slices.DeleteFunc(slices.Clone(tools), func(n string) bool { return !strings.HasPrefix(n, "a:") }); !slices.Equal(got, []string{"a:say", "a:env"}) {
		t.Errorf("a's tools: %q, want a:say a:env", got)
	}
	for _, want := range []string{"b:echo", "b:crash", "c:echo"} {
		if !slices.Contains(tools, want) {
			t.Errorf("tools %q lack %s", tools, want)
		}
	}
	m := s.call("tools/call", `{"name":"a:crash","arguments":{}}`)
	if _, msg := m.errorCode(); !strings.Contains(msg, "a:crash is hidden by the aggregator's config") {
		t.Errorf("a:crash answered %s", m.line)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"a:say","arguments":{"input":"hi"}}`)); !strings.Contains(got, "hi") {
		t.Errorf("a:say answered %q", got)
	}
	if m := s.call("tools/call", `{"name":"a:echo","arguments":{"input":"hi"}}`); m.Error == nil {
		t.Errorf("a:echo (renamed) answered %s", m.line)
	}
	s.waitStderr(`mcpServers.web: skipped: a remote server ("type": "http")`)
	s.waitStderr(`server "b": mcpServers.b.disabledTools[0]: "ecko" is not a tool of this server (the closest it offers is "echo"; see README.md#choose-what-each-server-offers)`)
	if n := strings.Count(s.stderrText(), "mcpServers.web"); n != 1 {
		t.Errorf("%d warnings of the remote entry, want 1:\n%s", n, s.stderrText())
	}
}

// A reload that changes only a filter updates the list, with one
// tools/list_changed, and restarts no server.
func TestConfigFilterReloadKeepsTheServer(t *testing.T) {
	a := ts("a")
	path := writeConfig(t, a)
	s := start(t, "--config", path, "--reload-poll", "10ms", "--debug")
	s.initialize("2025-11-25", "{}")
	if !slices.Contains(s.tools(), "a:crash") {
		t.Fatal("no a:crash before the reload")
	}
	before := childPIDs(t, s.cmd.Process.Pid)
	a.extra = `"hiddenTools": ["crash"]`
	rewrite(t, path, a)
	if n := s.reloaded(1); n != 1 {
		t.Errorf("%d tools/list_changed, want 1", n)
	}
	if slices.Contains(s.tools(), "a:crash") {
		t.Error("a:crash still listed after the reload hid it")
	}
	if after := childPIDs(t, s.cmd.Process.Pid); !slices.Equal(before, after) || len(after) != 1 {
		t.Errorf("servers %v before the reload, %v after: restarted", before, after)
	}
	// A broken edit of a filter changes nothing, and says where it is.
	a.extra = `"hiddenTools": "crash"`
	rewrite(t, path, a)
	s.waitStderrLine("mcpServers.a.hiddenTools")
	if slices.Contains(s.tools(), "a:crash") {
		t.Error("a:crash listed again after a broken edit")
	}
	if after := childPIDs(t, s.cmd.Process.Pid); !slices.Equal(before, after) {
		t.Errorf("servers %v before the broken edit, %v after", before, after)
	}
}

// --check shows what each entry hides and renames, and the remote entries
// skipped; "~" in --config is the home directory.
func TestConfigDialectsCheck(t *testing.T) {
	home := t.TempDir()
	a := ts("a")
	a.extra = `"excludeTools": ["crash", "nosuch"], "exposedTools": [{"original": "echo", "exposed": "say"}, "env", "crash"]`
	web := server{key: "web", command: "none", extra: `"url": "https://example.com/sse"`}
	data, err := os.ReadFile(writeConfig(t, a, web))
	if err != nil {
		t.Fatal(err)
	}
	// and a compound tool bundling one of a's tools
	data = append([]byte(`{"tools": {"files": {"description": "Files.", "subtools": {"a": {"tools": [{"name": "env"}]}}}},`), bytes.TrimPrefix(bytes.TrimSpace(data), []byte("{"))...)
	if err := os.WriteFile(filepath.Join(home, "mcp.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := runToExit(t, append(environWithout("HOME"), "HOME="+home), "", "--config", "~/mcp.json", "--check")
	if r.code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	rep := parseCheck(t, r.stdout)
	if !slices.Equal(rep.tools, []string{"a:say", "a:env"}) {
		t.Errorf("tools %q, want a:say a:env", rep.tools)
	}
	if f := rep.rows["a"]; len(f) < 6 || f[5] != "2" {
		t.Errorf("row of a: %q, want 2 tools", f)
	}
	if f := rep.rows["web"]; len(f) < 2 || f[1] != "skipped" {
		t.Errorf("row of web: %q, want skipped", f)
	}
	if len(rep.exposure) != 2 || !strings.HasPrefix(rep.exposure[0], "a: hides ") || !strings.Contains(rep.exposure[0], "crash") || !strings.HasSuffix(rep.exposure[0], "; renames echo to say") {
		t.Errorf("exposure %q", rep.exposure)
	}
	if want := "files: bundles a/env"; len(rep.exposure) != 2 || rep.exposure[1] != want {
		t.Errorf("exposure %q, want its last line %q", rep.exposure, want)
	}
	if want := []string{`web: a remote server (it has a "url")`}; !slices.Equal(rep.skipped, want) {
		t.Errorf("skipped %q, want %q", rep.skipped, want)
	}
	if !strings.Contains(r.stderr, `"nosuch" is not a tool of this server`) {
		t.Errorf("no warning of nosuch:\n%s", r.stderr)
	}
}

// Each pinned client lists a compound tool (the config's top-level
// "tools") within its model API's rule, and the model's call through it,
// filled as its schema and description say, reaches the subtool: the test
// server's echo answers with the arguments it got.
func TestRealClientsCallACompoundTool(t *testing.T) {
	requireRealClients(t)
	path := writeConfig(t, ts("disk"))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	compound := `{"tools": {"files": {"description": "Files on disk.", "subtools": {"disk": {"tools": [{"name": "echo", "description": "Echo the input."}]}}}},`
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "{", compound, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range realClients {
		t.Run(c.name, func(t *testing.T) {
			model := startModel(t, c.api, []string{"files"}, "files")
			model.argsFor = map[string]string{"files": `{"server":"disk","tool":"echo","args":{"input":"through files"}}`}
			run := runClient(t, c, model.url, "all", []string{realClientsAggregator(), "--config", path}, 2*time.Minute)
			model.check(t, nil)
			model.mu.Lock()
			results := strings.Join(model.results, "\n")
			model.mu.Unlock()
			if !strings.Contains(results, "through files") {
				t.Errorf("the call through files did not reach disk's echo: results %q", results)
			}
			if run.err != nil || !strings.Contains(run.stdout, model.final) {
				t.Errorf("%s: %v; stdout:\n%s\nstderr:\n%s", c.name, run.err, run.stdout, clipText(run.stderr, 4000))
			}
		})
	}
}
