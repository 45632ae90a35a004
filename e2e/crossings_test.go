package e2e

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var updateCrossings = flag.Bool("update", false, "rewrite testdata/crossings.txt with what e2e/crossings measures")

// TestCrossings builds e2e/crossings with coverage counters and runs it:
// the files of aggregator/ each leg of a tools/call, a server's sampling
// request and a server's progress runs code in. No leg of a legacy client
// may cross more than 5 files of package aggregator (issue 30), nor one of
// a 2026-07-28 client's more than 8 (its call to a legacy server runs
// through the era pairing too), and they must be those of
// testdata/crossings.txt, file for file: a change that adds a file to a
// leg, or takes one away, shows there (go test -run TestCrossings ./e2e/
// -update rewrites it), and docs/architecture.md's paths follow it. The
// measure is the same on every run, on a loaded machine too: nothing in
// the session runs on a timer during a leg.
func TestCrossings(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "crossings")
	build := exec.CommandContext(ctx, "go", "build", "-cover", "-covermode=atomic", "-coverpkg=./aggregator/...,./e2e/crossings", "-o", bin, "./e2e/crossings")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.CommandContext(ctx, bin, "-max", "5", "-max-modern", "8")
	run.Env = append(run.Environ(), "GOCOVERDIR="+t.TempDir())
	run.WaitDelay = time.Second
	got, err := run.Output()
	t.Logf("files of aggregator/ each leg runs code in:\n%s", got)
	if err != nil {
		t.Fatalf("crossings: %v", err)
	}
	golden := filepath.Join("testdata", "crossings.txt")
	if *updateCrossings {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the files each leg crosses changed:\ngot:\n%s\nwant (%s):\n%s\nif the change is meant, run go test -run TestCrossings ./e2e/ -update and update docs/architecture.md's paths", got, golden, want)
	}
}
