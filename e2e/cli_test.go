package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// exitRun is how a run of the aggregator to its end went.
type exitRun struct {
	stdout, stderr string
	code           int // exit status; -1 if killed by a signal
}

// runToExit runs the aggregator with args and stdin until it exits, with
// env as its whole environment (nil: the test's own).
func runToExit(t *testing.T, env []string, stdin string, args ...string) exitRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, aggregatorBin, args...)
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, quickRaceExit)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("aggregator %q did not exit within %v; stderr:\n%s", args, waitLimit, stderr.String())
	}
	r := exitRun{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running the aggregator: %v", err)
	}
	return r
}

// environWithout returns the test's environment without the named variables.
func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			env = append(env, kv)
		}
	}
	return env
}

// writeRawConfig writes a config file with exactly text in it.
func writeRawConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// initResult is the part of an initialize result the tests look at.
type initResult struct {
	ProtocolVersion string `json:"protocolVersion"`
	Capabilities    struct {
		Tools *struct {
			ListChanged bool `json:"listChanged"`
		} `json:"tools"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
	Instructions string `json:"instructions"`
}

func parseInit(t *testing.T, raw json.RawMessage) initResult {
	t.Helper()
	var r initResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("initialize result %s: %v", clip(raw), err)
	}
	return r
}

// processesWithEnv returns the live processes whose environment holds the
// entry kv ("NAME=value"), so that the children of an aggregator that has
// already exited can still be found (Linux).
func processesWithEnv(t *testing.T, kv string) []int {
	t.Helper()
	return livePIDs(t, func(pid int) bool {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		return err == nil && slices.Contains(strings.Split(string(env), "\x00"), kv)
	})
}

func TestCLIConfigFlagTakesTheValueEitherWay(t *testing.T) {
	path := writeConfig(t, ts("alpha"))
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"separate", []string{"--config", path}},
		{"joined", []string{"--config=" + path}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.flags...)
			s.initialize("2025-11-25", "{}")
			names := toolNames(t, s.result("tools/list", ""))
			if !slices.Contains(names, "alpha:echo") {
				t.Fatalf("tools of the config not served: %v", names)
			}
			if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"x":1}}`)); got != `{"x":1}` {
				t.Fatalf("alpha:echo answered %q", got)
			}
		})
	}
}

func TestCLIWithoutConfigExits2WithUsageOnStderr(t *testing.T) {
	r := runToExit(t, nil, "")
	if r.code != 2 {
		t.Errorf("exit status %d, want 2", r.code)
	}
	if !strings.Contains(r.stderr, "Usage:") || !strings.Contains(r.stderr, "--config") {
		t.Errorf("stderr has no usage naming --config:\n%s", r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
}

func TestCLIHelpPrintsUsageOnStdoutAndExits0(t *testing.T) {
	r := runToExit(t, nil, "", "--help")
	if r.code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"Usage:", "--config", "--separator", "--name", "--startup-timeout", "--check", "--debug", "--version"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("usage on stdout lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestCLIVersionPrintsTheVersionServerInfoReports(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	info := parseInit(t, s.initialize("2025-11-25", "{}"))
	if info.ServerInfo.Version == "" {
		t.Fatalf("serverInfo has no version")
	}
	r := runToExit(t, nil, "", "--version")
	if r.code != 0 {
		t.Errorf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
	}
	if want := "mcp-simple-aggregator " + info.ServerInfo.Version + "\n"; r.stdout != want {
		t.Errorf("--version printed %q, want %q", r.stdout, want)
	}
}

func TestCLIDebugAddsDebugLinesToStderr(t *testing.T) {
	session := func(flags ...string) string {
		s := startConfig(t, []server{ts("alpha")}, flags...)
		s.initialize("2025-11-25", "{}")
		s.result("tools/list", "")
		s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)
		s.closeAndWait()
		if s.err != nil {
			t.Fatalf("aggregator %v exited with %v", flags, s.err)
		}
		return s.stderrText()
	}
	if quiet := session(); strings.Contains(quiet, "debug:") {
		t.Errorf("debug lines without --debug:\n%s", quiet)
	}
	loud := session("--debug")
	if !strings.Contains(loud, "mcp-simple-aggregator: debug: ") {
		t.Errorf("no debug line with --debug:\n%s", loud)
	}
}

func TestCLINameSetsServerInfoName(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "mcp-simple-aggregator"},
		{[]string{"--name", "my-bundle"}, "my-bundle"},
	} {
		s := startConfig(t, []server{ts("alpha")}, tc.flags...)
		if got := parseInit(t, s.initialize("2025-11-25", "{}")).ServerInfo.Name; got != tc.want {
			t.Errorf("%v: serverInfo.name %q, want %q", tc.flags, got, tc.want)
		}
	}
}

func TestCLISeparatorJoinsKeyAndToolName(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta", "-tools", "1")}, "--separator", "__")
	s.initialize("2025-11-25", "{}")
	names := toolNames(t, s.result("tools/list", ""))
	var want []string
	for _, n := range toolNames(t, directToolsList(t)) {
		want = append(want, "alpha__"+n)
	}
	for _, n := range toolNames(t, directToolsList(t, "-tools", "1")) {
		want = append(want, "beta__"+n)
	}
	if !slices.Equal(names, want) {
		t.Fatalf("tool names with --separator __:\n got %v\nwant %v", names, want)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"alpha__echo","arguments":{"sep":"__"}}`)); got != `{"sep":"__"}` {
		t.Errorf("alpha__echo answered %q", got)
	}
	if got := toolText(t, s.result("tools/call", `{"name":"beta__t0","arguments":{"v":2}}`)); got != `{"v":2}` {
		t.Errorf("beta__t0 answered %q", got)
	}
	m := s.call("tools/call", `{"name":"alpha:echo","arguments":{}}`)
	if code, _ := m.errorCode(); code == 0 {
		t.Errorf("alpha:echo with --separator __ answered: %s", m.line)
	}
}

func TestCLIServerKeyWithTheSeparatorIsRejected(t *testing.T) {
	for _, tc := range []struct {
		separator, key string
		paths          []string // any of them names the key
	}{
		{"__", "a__b", []string{`mcpServers["a__b"]`, `mcpServers.a__b`}},
		{":", "a:b", []string{`mcpServers["a:b"]`}},
	} {
		t.Run(tc.separator, func(t *testing.T) {
			path := writeConfig(t, ts("alpha"), ts(tc.key))
			r := runToExit(t, nil, "", "--config", path, "--separator", tc.separator)
			if r.code == 0 || r.code == -1 {
				t.Errorf("exit status %d, want a failure", r.code)
			}
			named := false
			for _, p := range tc.paths {
				named = named || strings.Contains(r.stderr, p+": server key must not contain the separator "+strconv.Quote(tc.separator))
			}
			if !named {
				t.Errorf("stderr does not name %s and the separator:\n%s", tc.paths[0], r.stderr)
			}
			if !strings.Contains(r.stderr, path) {
				t.Errorf("stderr does not name the file %s:\n%s", path, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
}

// checkReport is the parsed stdout of --check.
type checkReport struct {
	rows       map[string][]string // server key -> fields of its row
	tools      []string
	clients    map[string]map[string]string // tool -> client label -> the name that client gets, where it differs
	strictNote string
	problems   []string
	exposure   []string // what each entry hides and renames
	skipped    []string // the entries skipped, and why
}

func parseCheck(t *testing.T, out string) checkReport {
	t.Helper()
	r := checkReport{rows: map[string][]string{}, clients: map[string]map[string]string{}}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 || !slices.Equal(strings.Fields(lines[0]), []string{"SERVER", "STATUS", "PROTOCOL", "STARTUP", "TOOLS"}) {
		t.Fatalf("--check output has no table header:\n%s", out)
	}
	section := "table"
	for _, line := range lines[1:] {
		switch {
		case line == "":
			section = ""
		case strings.HasPrefix(line, "Tools ("):
			section = "tools"
		case line == "Problems:":
			section = "problems"
		case line == "Exposed as the config says:":
			section = "exposure"
		case strings.HasPrefix(line, "Skipped "):
			section = "skipped"
		case section == "exposure":
			r.exposure = append(r.exposure, strings.TrimSpace(line))
		case section == "skipped":
			r.skipped = append(r.skipped, strings.TrimSpace(line))
		case strings.HasPrefix(line, "Strict clients "):
			r.strictNote = line
		case section == "table":
			f := strings.Fields(line)
			r.rows[f[0]] = f
		case section == "tools" && strings.HasPrefix(line, "      "):
			labels, name, _ := strings.Cut(strings.TrimSpace(line), ": ")
			tool := r.tools[len(r.tools)-1]
			if r.clients[tool] == nil {
				r.clients[tool] = map[string]string{}
			}
			for _, label := range strings.Split(labels, ", ") {
				r.clients[tool][label] = name
			}
		case section == "tools":
			r.tools = append(r.tools, strings.TrimSpace(line))
		case section == "problems":
			r.problems = append(r.problems, strings.TrimSpace(line))
		default:
			t.Fatalf("unexpected line %q in --check output:\n%s", line, out)
		}
	}
	return r
}

// checkRow verifies a row of a server that started: key, "ok", protocol
// version, start-up time in ms and tool count.
func checkRow(t *testing.T, r checkReport, key string, tools int) {
	t.Helper()
	f := r.rows[key]
	if len(f) != 6 || f[1] != "ok" || f[2] != "2025-11-25" || f[4] != "ms" || f[5] != strconv.Itoa(tools) {
		t.Errorf("row of %s: %q, want [%s ok 2025-11-25 N ms %d]", key, f, key, tools)
		return
	}
	if ms, err := strconv.Atoi(f[3]); err != nil || ms < 0 {
		t.Errorf("row of %s: start-up %q is not a number of ms", key, f[3])
	}
}

func TestCLICheckReportsEveryServerAndStopsThem(t *testing.T) {
	alphaTools := toolNames(t, directToolsList(t))
	betaTools := toolNames(t, directToolsList(t, "-tools", "2"))
	var want []string
	for _, n := range alphaTools {
		want = append(want, "alpha:"+n)
	}
	for _, n := range betaTools {
		want = append(want, "beta:"+n)
	}

	t.Run("all started", func(t *testing.T) {
		mark := "E2E_CHECK_MARK=" + t.Name() + strconv.Itoa(os.Getpid())
		name, value, _ := strings.Cut(mark, "=")
		env := map[string]string{name: value}
		alpha := ts("alpha", "-stderr", "2")
		beta, trace := tracedTS(t, "beta", "-tools", "2")
		alpha.env, beta.env = env, env
		r := runToExit(t, nil, "", "--config", writeConfig(t, alpha, beta), "--check")
		checkTrace(t, trace)
		if r.code != 0 {
			t.Errorf("exit status %d, want 0; stderr:\n%s", r.code, r.stderr)
		}
		rep := parseCheck(t, r.stdout)
		checkRow(t, rep, "alpha", len(alphaTools))
		checkRow(t, rep, "beta", len(betaTools))
		if len(rep.rows) != 2 {
			t.Errorf("rows %v, want alpha and beta", rep.rows)
		}
		if !slices.Equal(rep.tools, want) {
			t.Errorf("tools listed:\n got %v\nwant %v", rep.tools, want)
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("Tools (%d):", len(want))) {
			t.Errorf("no tool total %d:\n%s", len(want), r.stdout)
		}
		if len(rep.problems) != 0 {
			t.Errorf("problems reported: %q", rep.problems)
		}
		if left := processesWithEnv(t, mark); len(left) > 0 {
			t.Errorf("children still running after --check returned: pids %v", left)
		}
	})

	t.Run("one failed", func(t *testing.T) {
		mark := "E2E_CHECK_MARK=" + t.Name() + strconv.Itoa(os.Getpid())
		name, value, _ := strings.Cut(mark, "=")
		env := map[string]string{name: value}
		alpha, trace := tracedTS(t, "alpha")
		bad := ts("bad", "-exit-init", "3")
		alpha.env, bad.env = env, env
		r := runToExit(t, nil, "", "--config", writeConfig(t, alpha, bad), "--check")
		checkTrace(t, trace)
		if r.code != 1 {
			t.Errorf("exit status %d, want 1; stderr:\n%s", r.code, r.stderr)
		}
		rep := parseCheck(t, r.stdout)
		checkRow(t, rep, "alpha", len(alphaTools))
		if f := rep.rows["bad"]; len(f) < 2 || f[1] != "failed" {
			t.Errorf("row of bad: %q, want status failed", f)
		}
		if !slices.Equal(rep.tools, want[:len(alphaTools)]) {
			t.Errorf("tools listed:\n got %v\nwant %v", rep.tools, want[:len(alphaTools)])
		}
		found := false
		for _, p := range rep.problems {
			found = found || strings.HasPrefix(p, "bad: ") && strings.Contains(p, "exit status 3") && strings.Contains(p, "fatal: bad init")
		}
		if !found {
			t.Errorf("no problem line naming bad, exit status 3 and its stderr: %q", rep.problems)
		}
		if left := processesWithEnv(t, mark); len(left) > 0 {
			t.Errorf("children still running after --check returned: pids %v", left)
		}
	})
}

// badConfigRun runs the aggregator on a config it must refuse and checks
// what every refusal has in common: a failing exit status, nothing on
// stdout, and the message on stderr.
func badConfigRun(t *testing.T, env []string, path string) string {
	t.Helper()
	r := runToExit(t, env, "", "--config", path)
	if r.code == 0 || r.code == -1 {
		t.Errorf("exit status %d, want a failure", r.code)
	}
	if r.stdout != "" {
		t.Errorf("stdout not empty: %q", r.stdout)
	}
	return r.stderr
}

func TestCLIConfigSyntaxErrorNamesFileLineAndColumn(t *testing.T) {
	text := "{\"mcpServers\": {\n  \"alpha\": {\"command\": \"x\",}\n}}\n"
	line2 := strings.Split(text, "\n")[1]
	col := strings.Index(line2, ",}") + 2 // the '}', 1-based
	path := writeRawConfig(t, text)
	stderr := badConfigRun(t, nil, path)
	if want := fmt.Sprintf("%s:2:%d:", path, col); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not name %q:\n%s", want, stderr)
	}
}

func TestCLIConfigReportsEveryProblemAtOnce(t *testing.T) {
	path := writeRawConfig(t, `{"mcpServers": {
  "alpha": {"command": ""},
  "beta": {"command": "x", "args": ["ok", 1]},
  "gamma": {"command": "x", "env": {"N": 5}}
}}`)
	stderr := badConfigRun(t, nil, path)
	for _, want := range []string{
		"mcpServers.alpha.command: must be a non-empty string",
		"mcpServers.beta.args[1]: must be a string",
		"mcpServers.gamma.env.N: must be a string",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestCLIMissingVariableStopsBeforeAnyChildStarts(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "started")
	path := writeConfig(t,
		server{key: "first", command: "touch", args: []string{trace}},
		server{key: "alpha", env: map[string]string{"TOKEN": "${API_KEY}"}},
		server{key: "last", command: "touch", args: []string{trace}},
	)
	stderr := badConfigRun(t, environWithout("API_KEY"), path)
	if want := "mcpServers.alpha.env.TOKEN: environment variable API_KEY is not set"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if _, err := os.Stat(trace); err == nil {
		t.Errorf("a child was started although the config was refused")
	}
}

// A remote entry is skipped with one warning naming it, and the stdio
// servers beside it are served (it stopped every server before).
func TestCLIRemoteServersAreSkipped(t *testing.T) {
	path := writeRawConfig(t, fmt.Sprintf(`{"mcpServers": {
  "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
  "alpha": {"command": %q, "args": ["-name", "alpha"]},
  "sse": {"url": "http://127.0.0.1:1/sse"}
}}`, testserverBin))
	s := start(t, "--config", path)
	s.initialize("2025-11-25", "{}")
	if tools := s.tools(); !slices.Contains(tools, "alpha:echo") {
		t.Errorf("tools %q: the stdio server beside the remote ones is not served", tools)
	}
	for _, want := range []string{`mcpServers.web: skipped: a remote server ("type": "http")`, `mcpServers.sse: skipped: a remote server (it has a "url")`} {
		s.waitStderr(want)
		if n := strings.Count(s.stderrText(), want); n != 1 {
			t.Errorf("%d warnings %q, want 1", n, want)
		}
	}
}

func TestCLIVariablesExpandIntoArgsAndEnvOverTheInheritedEnvironment(t *testing.T) {
	t.Setenv("E2E_X_A", "alpha-value")
	t.Setenv("E2E_X_B", "beta-value")
	t.Setenv("E2E_X_ONLY_AGG", "inherited")
	t.Setenv("E2E_X_OVERRIDE", "from-aggregator")
	t.Setenv("E2E_X_UNSET", "")
	os.Unsetenv("E2E_X_UNSET")

	alpha := ts("alpha", "-instructions", "A=${E2E_X_A} B=$E2E_X_B C=${E2E_X_UNSET:-dflt}")
	alpha.env = map[string]string{
		"FROM_BRACES":    "${E2E_X_A}",
		"FROM_DOLLAR":    "$E2E_X_B-suffix",
		"FROM_DEFAULT":   "${E2E_X_UNSET:-fallback}",
		"E2E_X_OVERRIDE": "from-entry",
	}
	// The instructions the server gave reach the initialize answer of the
	// next session (servers start when a request needs them).
	cache, cfg := t.TempDir(), writeConfig(t, alpha)
	first := startCached(t, cache, "--config", cfg)
	first.initialize("2025-11-25", "{}")
	first.startServers()
	first.closeAndWait()
	s := startCached(t, cache, "--config", cfg)
	info := parseInit(t, s.initialize("2025-11-25", "{}"))
	if want := "A=alpha-value B=beta-value C=dflt"; !strings.Contains(info.Instructions, want) {
		t.Errorf("args not expanded: instructions %q, want them to hold %q", info.Instructions, want)
	}
	for name, want := range map[string]string{
		"FROM_BRACES":    "alpha-value",
		"FROM_DOLLAR":    "beta-value-suffix",
		"FROM_DEFAULT":   "fallback",
		"E2E_X_ONLY_AGG": "inherited",
		"E2E_X_OVERRIDE": "from-entry",
	} {
		got := toolText(t, s.result("tools/call", fmt.Sprintf(`{"name":"alpha:env","arguments":{"name":%q}}`, name)))
		if got != want {
			t.Errorf("child's %s = %q, want %q", name, got, want)
		}
	}
	// The same seen from outside: the child's environment, not the
	// aggregator's, holds the entry's value.
	pids := childPIDs(t, s.cmd.Process.Pid)
	if got := processesWithEnv(t, "E2E_X_OVERRIDE=from-entry"); !slices.Equal(got, pids) || len(pids) != 1 {
		t.Errorf("processes with the entry's E2E_X_OVERRIDE: %v, want the one child %v", got, pids)
	}
}

func TestCLIDisabledServerIsLeftOut(t *testing.T) {
	beta := ts("beta")
	beta.extra = `"disabled": true`
	s := startConfig(t, []server{ts("alpha"), beta})
	s.initialize("2025-11-25", "{}")
	for _, n := range toolNames(t, s.result("tools/list", "")) {
		if !strings.HasPrefix(n, "alpha:") {
			t.Errorf("tool %q of a disabled server is listed", n)
		}
	}
	m := s.call("tools/call", `{"name":"beta:echo","arguments":{}}`)
	if code, message := m.errorCode(); code != -32601 || message != "Tool not found: beta:echo" {
		t.Errorf("beta:echo answered %s", m.line)
	}
	if pids := childPIDs(t, s.cmd.Process.Pid); len(pids) != 1 {
		t.Errorf("%d children running, want only alpha", len(pids))
	}
}

// --max-message-size bounds a message: a longer client line gets -32600
// under its id and the next is served; a value that is not a size is
// refused with exit status 2, saying what a size looks like.
func TestCLIMaxMessageSize(t *testing.T) {
	cfg := writeConfig(t, ts("alpha"))
	long := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha:echo","arguments":{"text":"` + strings.Repeat("x", 2048) + `"}}}`
	r := runToExit(t, nil, e2eInit+long+"\n"+`{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n", "--config", cfg, "--max-message-size", "1KiB")
	// (initialize is answered once alpha has started: maybe last.)
	if !strings.Contains(r.stdout, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid Request: a message of 2149 bytes, more than mcp-simple-aggregator's limit of 1024 bytes (--max-message-size)"}}`+"\n") ||
		!strings.Contains(r.stdout, `{"jsonrpc":"2.0","id":8,"result":{}}`+"\n") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	r = runToExit(t, nil, "", "--config", cfg, "--max-message-size", "12X")
	if r.code != 2 || !strings.Contains(r.stderr, `"12X" is not a size`) || !strings.Contains(r.stderr, "256MiB") {
		t.Errorf("--max-message-size 12X: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
