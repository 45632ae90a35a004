package e2e

// The pinned real clients (e2e/clients: Claude Code, Codex, Gemini CLI)
// run offline against fake model APIs on 127.0.0.1 (fakeapi_test.go) with
// the aggregator in their config, as a person would use them: each must
// offer the model every tool of a server with long names and reach each
// tool the model calls, under the server's own name.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clientsDir holds the pinned real clients (package.json, package-lock.json).
const clientsDir = "clients"

// realClientBins are the clients' commands in clientsDir's node_modules.
var realClientBins = []string{"claude", "codex", "gemini"}

// requireRealClients makes sure the pinned clients are installed, with
// `npm ci` when one is missing. Outside CI a machine that cannot get them
// skips the test, saying why; in CI (CI=true) the test fails.
func requireRealClients(t *testing.T) {
	t.Helper()
	npmInstall(t, clientsDir, func() []string {
		var m []string
		for _, bin := range realClientBins {
			if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", ".bin", bin)); err != nil {
				m = append(m, bin)
			}
		}
		return m
	})
}

// realClient is how to run one client against a fake model, with the
// aggregator registered under a name.
type realClient struct {
	name string
	api  modelAPI
	// prepare writes the client's configuration into home (its HOME or
	// equivalent) for the model at url and the aggregator as server,
	// running cfg; it returns the command line and environment.
	prepare func(t *testing.T, home, url, server string, aggregator []string) (args, env []string)
}

var realClients = []realClient{
	{name: "Claude Code", api: anthropicAPI{}, prepare: prepareClaudeCode},
	{name: "Codex", api: openAIAPI{}, prepare: prepareCodex},
	{name: "Gemini CLI", api: geminiAPI{}, prepare: prepareGemini},
}

// prompt is what each client is asked; the fake model does the rest.
const prompt = "Call the tools."

func prepareClaudeCode(t *testing.T, home, url, server string, aggregator []string) ([]string, []string) {
	cfg := filepath.Join(home, "mcp.json")
	writeJSON(t, cfg, map[string]any{"mcpServers": map[string]any{server: map[string]any{"command": aggregator[0], "args": aggregator[1:]}}})
	args := []string{"claude", "-p", prompt, "--mcp-config", cfg, "--strict-mcp-config", "--allowedTools", "mcp__" + server}
	return args, []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-test", "DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
}

func prepareCodex(t *testing.T, home, url, server string, aggregator []string) ([]string, []string) {
	quoted, _ := json.Marshal(aggregator[1:])
	toml := fmt.Sprintf(`model = "gpt-test"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_API_KEY"

[mcp_servers.%s]
command = %q
args = %s
`, url+"/v1", server, aggregator[0], quoted)
	codexHome := filepath.Join(home, "codex")
	if err := os.MkdirAll(codexHome, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"codex", "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}
	return args, []string{"CODEX_HOME=" + codexHome, "FAKE_API_KEY=sk-test"}
}

func prepareGemini(t *testing.T, home, url, server string, aggregator []string) ([]string, []string) {
	// Gemini CLI 0.61 takes GOOGLE_GEMINI_BASE_URL for the "gateway" auth
	// type, which its own validation then refuses: the key's type is named.
	writeJSON(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
		"mcpServers": map[string]any{server: map[string]any{"command": aggregator[0], "args": aggregator[1:], "trust": true}},
	})
	args := []string{"gemini", "-p", prompt, "--approval-mode", "yolo", "--model", "gemini-2.5-pro"}
	return args, []string{"GEMINI_API_KEY=test", "GOOGLE_GEMINI_BASE_URL=" + url}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// clientRun is what a client printed and how it ended.
type clientRun struct {
	stdout, stderr string
	err            error
}

// runClient runs the client in a home of its own (HOME, the working
// directory) within limit; at the limit, its process group is killed.
func runClient(t *testing.T, c realClient, url, server string, aggregator []string, limit time.Duration) clientRun {
	t.Helper()
	home := t.TempDir()
	args, env := c.prepare(t, home, url, server, aggregator)
	bin, err := filepath.Abs(filepath.Join(clientsDir, "node_modules", ".bin", args[0]))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args[1:]...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), append(env, "HOME="+home, quickRaceExit, emptyCache(t))...)
	cmd.Stdin = nil
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%s did not finish within %v: %w", c.name, limit, err)
	}
	return clientRun{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// longNamed are the tools of the test's child: GitHub's MCP server's
// longest name, a short one, and two longer ones that begin and end alike.
var longNamed = []string{
	"add_pull_request_review_comment_to_pending_review",
	"get_me",
	"submit_pending_pull_request_review_and_request_changes_with_all_comments_from_reviewers",
	"submit_pending_pull_request_review_and_approve_changes_with_all_comments_from_reviewers",
}

// Each pinned client, with the aggregator registered as "all" and as
// "aggregator", offers its model every tool of a server with long names,
// within the model API's rule, and each call the model makes reaches the
// right tool under the server's own name.
func TestRealClientsReachToolsWithLongNames(t *testing.T) {
	requireRealClients(t)
	names, _ := json.Marshal(longNamed)
	child := ts("github", "-tool-names", string(names))
	cfg := writeConfig(t, child)
	all := ownToolNames(t, child) // the test server's own tools, and longNamed
	calls := []string{longNamed[0], longNamed[2], longNamed[3], longNamed[1]}
	for _, c := range realClients {
		for _, server := range []string{"all", "aggregator"} {
			t.Run(c.name+" as "+server, func(t *testing.T) {
				model := startModel(t, c.api, []string{"github"}, calls...)
				run := runClient(t, c, model.url, server, []string{realClientsAggregator(), "--config", cfg}, 2*time.Minute)
				model.check(t, all)
				if run.err != nil || !strings.Contains(run.stdout, model.final) {
					t.Errorf("%s: %v; stdout:\n%s\nstderr:\n%s", c.name, run.err, run.stdout, clipText(run.stderr, 4000))
				}
			})
		}
	}
}

// realClientsAggregator is the aggregator the real clients run: the one
// built for the tests, or another build named by $E2E_AGGREGATOR (to see
// how an older one fares).
func realClientsAggregator() string {
	if bin := os.Getenv("E2E_AGGREGATOR"); bin != "" {
		return bin
	}
	return aggregatorBin
}

// ownToolNames are the names of the tools child lists, as it lists them.
func ownToolNames(t *testing.T, child server) []string {
	t.Helper()
	s := startConfig(t, []server{child})
	s.initialize("2025-11-25", "{}")
	var own []string
	for _, name := range toolNames(t, s.result("tools/list", "")) {
		own = append(own, strings.TrimPrefix(name, child.key+":"))
	}
	return own
}

// clipText is s, or its end when it is longer than n.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// With a server that takes 8 s to initialize, a client that takes
// list_changed (Claude Code, Gemini CLI) gets the other server's tools at
// once, calls one while the slow server is still starting, and gets the
// slow server's tools once it is up, in the same session: the model keeps
// working (a half-second call of the fast server's tool "slow") until
// they are offered. (Codex takes the first tools/list as final, which
// waits for the slow server: startup_test.go.)
func TestRealClientsGetASlowServersTools(t *testing.T) {
	requireRealClients(t)
	cfg := writeConfig(t, ts("fast", "-tool-names", `["early_tool"]`), ts("late", "-init-delay", slowInit, "-tool-names", `["late_tool"]`))
	for _, c := range realClients[:] {
		if c.name == "Codex" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			model := startModel(t, c.api, []string{"fast", "late"}, "early_tool", "late_tool")
			model.pace = "slow" // with {"ms":500+N}: calls that differ, or Gemini CLI stops a loop
			run := runClient(t, c, model.url, "all", []string{realClientsAggregator(), "--config", cfg}, 2*time.Minute)
			model.check(t, nil)
			if model.offeredFirst("late_tool") {
				t.Errorf("the slow server's tool was offered at first: the client waited for it")
			}
			if run.err != nil || !strings.Contains(run.stdout, model.final) {
				t.Errorf("%s: %v; stdout:\n%s\nstderr:\n%s", c.name, run.err, run.stdout, clipText(run.stderr, 4000))
			}
		})
	}
}
