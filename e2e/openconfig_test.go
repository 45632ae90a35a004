package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// A config file other users can write is served as read at launch, with a
// warning that says so and how to fix it; its edits are not followed: a
// server another user adds is never started.
func TestAConfigOthersCanWriteIsNotFollowed(t *testing.T) {
	path := writeConfig(t, ts("a"))
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	s := start(t, "--config", path, "--reload-poll", "10ms", "--debug")
	s.waitStderr("chmod go-w " + path)
	if line := s.stderrText(); !strings.Contains(line, "warning: config: "+path+": other users can write it (-rw-rw-rw-), so its edits are not followed") {
		t.Errorf("the launch warning:\n%s", line)
	}
	s.initialize("2025-11-25", "{}")
	if got := s.tools(); !slices.Contains(got, "a:echo") {
		t.Fatalf("the config read at launch is not served: tools %v", got)
	}
	data, err := os.ReadFile(writeConfig(t, ts("a"), ts("evil")))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o666); err != nil { // in place: the mode stays
		t.Fatal(err)
	}
	s.waitStderr("changed; not applied: other users can write it")
	if got := s.tools(); slices.Contains(got, "evil:echo") {
		t.Errorf("a server added to a config others can write was started: tools %v", got)
	}
	if n := strings.Count(s.stderrText(), "chmod go-w"); n != 1 {
		t.Errorf("the fix was said %d times, want once", n)
	}
}
