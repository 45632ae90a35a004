package e2e

// The demo of README ("Try it"), run as a user runs it from a clone, and
// --check over its config.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// demoCommand runs the demo; README's "Try it" gives it verbatim
// (TestREADMECommands).
const demoCommand = "go run ./examples/demo"

// demoLimit bounds a run of the demo, a deadlock watchdog: from a cold
// build cache it compiles the demo, the aggregator and two servers.
const demoLimit = 3 * time.Minute

// demoTranscript is what the demo prints, the aggregator's version
// replaced by VERSION.
const demoTranscript = `mcp-simple-aggregator --config examples/demo.json: one client, two servers (notes, calc), one connection.

--> initialize
<-- mcp-simple-aggregator VERSION, protocol 2025-11-25: a first start (--no-memory), so initialize started both servers to say what they declare
    the servers' instructions, each under its key:
      ## notes

      Notes kept for this session: add, list, read and delete them by title.

      ## calc

      Arithmetic on two numbers, rounded to 4 decimal places.

--> tools/list
<-- 8 tools in one list, from both servers, named KEY:tool:
      notes:add      Add a note, or replace the note of that title.
      notes:list     List the titles of all notes.
      notes:read     Read the note of a title.
      notes:delete   Delete the note of a title.
      calc:add       a + b
      calc:subtract  a - b
      calc:multiply  a × b
      calc:divide    a ÷ b; b must not be 0

--> tools/call notes:add {"title":"groceries","text":"eggs, milk, coffee"}
<-- Saved "groceries"; notes: 1.
    (routed to server notes as its tool "add")

--> tools/call notes:read {"title":"groceries"}
<-- eggs, milk, coffee
    (routed to server notes as its tool "read")

--> tools/call calc:divide {"a":22,"b":7}
<-- 3.1429
    (routed to server calc as its tool "divide")

--> tools/call calc:divide {"a":1,"b":0}
<-- calc's error, passed through byte for byte as calc sent it:
    CALC_ERROR

Stdin closed: the aggregator stopped both servers and exited with status 0.
`

// runInRepo runs a command line in the repository's root within demoLimit
// and returns its stdout, failing the test unless it exits with status 0.
func runInRepo(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), demoLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), quickRaceExit)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = waitLimit
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v; stdout:\n%s\nstderr:\n%s", name, args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestDemo(t *testing.T) {
	fields := strings.Fields(demoCommand)
	got := runInRepo(t, "", fields[0], fields[1:]...)
	got = regexp.MustCompile(`(?m)^<-- mcp-simple-aggregator \S+, protocol`).ReplaceAllString(got, "<-- mcp-simple-aggregator VERSION, protocol")

	// The error line holds calc's result exactly as calc writes it when
	// asked directly.
	direct := runInRepo(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":0}}}
`, "go", "run", "./examples/calc")
	var answer struct{ Result json.RawMessage }
	lines := strings.Split(strings.TrimSpace(direct), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &answer); err != nil || !bytes.Contains(answer.Result, []byte(`"isError":true`)) {
		t.Fatalf("calc's own answer to a division by zero: %q (%v)", direct, err)
	}
	want := strings.Replace(demoTranscript, "CALC_ERROR", string(answer.Result), 1)
	if got != want {
		t.Errorf("the demo printed\n%s\nwant\n%s", got, want)
	}
}

// --check over the demo's config is the diagnostic: every server started,
// every tool listed.
func TestDemoConfigCheck(t *testing.T) {
	got := runInRepo(t, "", aggregatorBin, "--check", "--config", "examples/demo.json")
	for _, want := range []string{"\nnotes   ok ", "\ncalc    ok ", "Tools (8):\n  notes:add\n  notes:list\n  notes:read\n  notes:delete\n  calc:add\n  calc:subtract\n  calc:multiply\n  calc:divide\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("--check --config examples/demo.json lacks %q:\n%s", want, got)
		}
	}
}
