package e2e

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// maxCrossings bounds the files of aggregator/ one leg of a message may
// run code in (e2e/crossings): today's worst leg, a server's
// sampling/createMessage on its way to the client, runs code in 17; the
// rest is room for what another goroutine (the client's writer finishing
// the leg before) may run during a leg on a loaded machine.
// docs/architecture.md has each leg's files.
const maxCrossings = 19

// TestCrossings builds e2e/crossings with coverage counters and runs it:
// how many files of aggregator/ each leg of a tools/call, a server's
// sampling request and a server's progress runs code in, each leg within
// maxCrossings.
func TestCrossings(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "crossings")
	build := exec.Command("go", "build", "-cover", "-covermode=atomic", "-coverpkg=./aggregator/...,./e2e/crossings", "-o", bin, "./e2e/crossings")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command(bin, "-max", strconv.Itoa(maxCrossings))
	run.Env = append(run.Environ(), "GOCOVERDIR="+t.TempDir())
	out, err := run.CombinedOutput()
	t.Logf("files of aggregator/ each leg runs code in:\n%s", out)
	if err != nil {
		t.Fatalf("crossings: %v", err)
	}
}
