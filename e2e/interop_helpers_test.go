package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// interopDir holds the npm peers: the interop scripts (client.mjs, apps.mjs,
// tasks.mjs, built on the official TypeScript SDK client) and the reference
// servers.
const interopDir = "interop"

// interopPackages are the npm packages (under @modelcontextprotocol) the
// interop scripts use; requireInterop installs them when one is missing.
var interopPackages = []string{"sdk", "client", "server", "server-everything", "server-filesystem", "server-basic-vanillajs"}

// missingInteropPackages lists the interopPackages not installed.
func missingInteropPackages() []string {
	var missing []string
	for _, p := range interopPackages {
		if _, err := os.Stat(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", p, "package.json")); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// requireInterop makes sure node and every npm package the interop scripts
// use are there, installing them with `npm ci` when one is missing (on first
// use, or in a node_modules installed before a package joined package.json).
// Outside CI a machine that cannot get them skips the interop tests, saying
// why; in CI (CI=true) they must run.
func requireInterop(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		skipUnlessCI(t, "node is not installed: %v", err)
	}
	npmInstall(t, interopDir, func() []string {
		var missing []string
		for _, p := range missingInteropPackages() {
			missing = append(missing, "@modelcontextprotocol/"+p)
		}
		return missing
	})
}

// interopServer is a config entry running the npm package pkg (under
// @modelcontextprotocol, in interopDir) with node and args.
func interopServer(t *testing.T, key, pkg string, args ...string) server {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(interopDir, "node_modules", "@modelcontextprotocol", pkg))
	if err != nil {
		t.Fatal(err)
	}
	return server{key: key, command: "node", args: append([]string{filepath.Join(dir, "dist", "index.js")}, args...)}
}

// interopSubtests requires the interop peers (requireInterop), then runs f as
// a subtest "separator SEP" for each separator the interop tests try.
func interopSubtests(t *testing.T, f func(t *testing.T, sep string)) {
	t.Helper()
	requireInterop(t)
	for _, sep := range []string{":", "__"} {
		t.Run("separator "+sep, func(t *testing.T) { f(t, sep) })
	}
}

// emptyCache is the environment variable that gives the aggregators a
// peer starts a cache directory of their own, empty: every interop run is
// a fresh start, the aggregator remembering nothing of its servers, as on
// a new install, in a container or on a CI runner.
func emptyCache(t *testing.T) string { return "XDG_CACHE_HOME=" + t.TempDir() }

// interopRun is one run of an interop script.
type interopRun struct {
	script         string
	stdout, stderr string
	err            error // exec.Cmd.Run's: nil when the script exited with status 0
	exitCode       int   // -1 if it did not start or was killed (at the time limit)
}

// runInteropScript runs `node SCRIPT --sep SEP ARGS... -- AGGREGATOR --config
// CFG --separator SEP` in interopDir within limit, the aggregator with
// quickRaceExit. With report nil it logs the script's output; otherwise the
// output must be the script's JSON report, which it logs (compact) and parses
// into report, failing the test if there is none.
func runInteropScript(t *testing.T, limit time.Duration, script, cfg, sep string, report any, args ...string) interopRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	argv := append(append([]string{script, "--sep", sep}, args...), "--", aggregatorBin, "--config", cfg, "--separator", sep)
	cmd := exec.CommandContext(ctx, "node", argv...)
	cmd.Dir = interopDir
	cmd.Env = append(os.Environ(), quickRaceExit, emptyCache(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	run := interopRun{script: script, stdout: stdout.String(), stderr: stderr.String(), err: err, exitCode: -1}
	if cmd.ProcessState != nil {
		run.exitCode = cmd.ProcessState.ExitCode()
	}
	if report == nil {
		t.Logf("%s output:\n%s", script, run.stdout)
		return run
	}
	var compact bytes.Buffer
	if json.Compact(&compact, stdout.Bytes()) != nil {
		compact = stdout
	}
	t.Logf("%s report: %s", script, compact.String())
	if err := json.Unmarshal(stdout.Bytes(), report); err != nil {
		t.Fatalf("%s (%v) printed no JSON report: %v; stderr:\n%s", script, run.err, err, run.stderr)
	}
	return run
}

// interopReport is the part of a JSON report of apps.mjs or tasks.mjs that
// does not depend on the script (its "seen" does).
type interopReport struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name  string `json:"name"`
		OK    bool   `json:"ok"`
		MS    int    `json:"ms"`
		Error string `json:"error"`
	} `json:"checks"`
	Failures []string       `json:"failures"`
	Notes    []string       `json:"notes"`
	Timings  map[string]int `json:"timings"`
}

// base gives the interopReport a script's report type embeds.
func (rep *interopReport) base() *interopReport { return rep }

// runComparison runs script, one of the scripts that compare the aggregator
// with a direct connection (apps.mjs, tasks.mjs), for sep over a config of
// child and the test server as "other", parses its JSON report into rep and
// requires that it passed every check, each of checks among them.
func runComparison(t *testing.T, script, sep string, child server, rep interface{ base() *interopReport }, checks ...string) {
	t.Helper()
	cfg := writeConfig(t, child, ts("other"))
	run := runInteropScript(t, 2*time.Minute, script, cfg, sep, rep, "--key", child.key, "--other-key", "other")
	rep.base().requirePassed(t, run, checks...)
}

// requirePassed logs the report's notes and timings and fails the test unless
// the run exited with status 0 and passed every check, each of checks among
// them.
func (rep *interopReport) requirePassed(t *testing.T, run interopRun, checks ...string) {
	t.Helper()
	for _, n := range rep.Notes {
		t.Logf("note: %s", n)
	}
	t.Logf("timings (ms): %v", rep.Timings)
	if run.err != nil || !rep.OK || len(rep.Failures) > 0 {
		t.Fatalf("%s failed (exit code %d, %v), failures:\n  %s\nstderr:\n%s", run.script, run.exitCode, run.err, strings.Join(rep.Failures, "\n  "), run.stderr)
	}
	passed := map[string]bool{}
	for _, c := range rep.Checks {
		passed[c.Name] = c.OK
	}
	for _, c := range checks {
		if !passed[c] {
			t.Errorf("check %s did not pass", c)
		}
	}
}

// interopInitialize is an initialize result as the reports keep it.
type interopInitialize struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	ServerInfo   struct {
		Name string `json:"name"`
	} `json:"serverInfo"`
}

// interopChildParams is what the test server's tool initparams answered: the
// initialize params the aggregator sent it (seen.childInitializeParams).
type interopChildParams struct {
	Capabilities struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
		Tasks      json.RawMessage            `json:"tasks"`
	} `json:"capabilities"`
}

// checkAggregator fails the test unless the aggregator answered initialize as
// itself.
func (i *interopInitialize) checkAggregator(t *testing.T) {
	t.Helper()
	if i.ServerInfo.Name != "mcp-simple-aggregator" {
		t.Errorf("aggregator serverInfo.name %q", i.ServerInfo.Name)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
