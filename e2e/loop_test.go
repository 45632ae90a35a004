package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// countedAggregator is a server entry running the aggregator on config,
// through a shell that first appends a line to countFile: the lines count
// the aggregators started.
func countedAggregator(key, config, countFile string) server {
	return server{key: key, command: "sh", args: []string{"-c",
		`echo started >> '` + countFile + `'; exec "$0" "$@"`, aggregatorBin, "--config", config}}
}

// writeConfigAt writes a config of servers to path.
func writeConfigAt(t *testing.T, path string, servers ...server) {
	t.Helper()
	if err := os.Rename(writeConfig(t, servers...), path); err != nil {
		t.Fatal(err)
	}
}

// startedCount returns the lines of countFile.
func startedCount(t *testing.T, countFile string) int {
	t.Helper()
	b, err := os.ReadFile(countFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// A config that lists the aggregator on itself (here through a symlink:
// the file counts, not its spelling) is a loop: the nested aggregator
// refuses to start, naming the config and the chain, and the outer one
// reports that server as failed and serves the rest.
func TestConfigThatStartsTheAggregatorOnItselfIsRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(cfg, link); err != nil {
		t.Fatal(err)
	}
	count := filepath.Join(dir, "count")
	writeConfigAt(t, cfg, ts("alpha"), countedAggregator("self", link, count))

	s := start(t, "--config", cfg)
	s.initialize("2025-11-25", "{}")
	names := toolNames(t, s.result("tools/list", ""))
	if !hasPrefixed(names, "alpha") || hasPrefixed(names, "self") {
		t.Errorf("tools %v, want alpha's and none of self", names)
	}
	s.waitStderrLine(`server "self" dropped`, "refusing to serve config "+link, "("+cfg+" -> "+link+")")
	if n := startedCount(t, count); n != 1 {
		t.Errorf("%d nested aggregators started, want 1", n)
	}

	// --check too: it reports the loop and exits 1.
	os.Remove(count)
	check := exec.Command(aggregatorBin, "--check", "--config", cfg)
	check.Env = append(os.Environ(), quickRaceExit)
	out, err := check.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("--check: %v, want exit status 1\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("refusing to serve config "+link)) {
		t.Errorf("--check does not report the loop:\n%s", out)
	}
	if n := startedCount(t, count); n != 1 {
		t.Errorf("--check started %d nested aggregators, want 1", n)
	}
}

// Aggregators started by one another nest at most 8 deep, whatever their
// configs: the 9th refuses and the 8th serves the rest.
func TestNestedAggregatorsAreBoundedTo8(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	const configs = 10
	path := func(i int) string { return filepath.Join(dir, fmt.Sprintf("c%d.json", i)) }
	for i := 1; i < configs; i++ {
		writeConfigAt(t, path(i), countedAggregator(fmt.Sprintf("n%d", i+1), path(i+1), count))
	}
	writeConfigAt(t, path(configs), ts("alpha"))

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	check := exec.CommandContext(ctx, aggregatorBin, "--check", "--config", path(1))
	check.Env = append(os.Environ(), quickRaceExit)
	out, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("--check of the top aggregator: %v\n%s", err, out)
	}
	if n := startedCount(t, count); n != 8 {
		t.Errorf("%d nested aggregators started, want 8 (the 2nd to the 9th, which refuses)", n)
	}
	want := fmt.Sprintf("refusing to serve config %s: aggregators would nest 9 deep", path(9))
	if !strings.Contains(string(out), want) {
		t.Errorf("output does not say %q:\n%s", want, out)
	}
}
