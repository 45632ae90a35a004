package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of --share: sessions of one user share one process per server
// through the holder (internal/share).

// shareWorld is one test's own world of shared servers: its runtime
// directory (where the holder's socket is: short, for the socket path's
// limit) and cache (where the holder logs).
type shareWorld struct {
	t       *testing.T
	runtime string
	cache   string
	idle    string
}

// newShareWorld makes a world whose holder, if any, is gone when the test
// ends (its cleanup waits for it to exit).
func newShareWorld(t *testing.T, idle string) *shareWorld {
	t.Helper()
	runtime, err := os.MkdirTemp("/tmp", "sh")
	if err != nil {
		t.Fatal(err)
	}
	w := &shareWorld{t: t, runtime: runtime, cache: t.TempDir(), idle: idle}
	t.Cleanup(func() { // after every session's (cleanups run last first)
		w.waitHolderGone()
		os.RemoveAll(runtime)
		if t.Failed() {
			log, _ := os.ReadFile(w.holderLog())
			t.Logf("holder log:\n%s", log)
		}
	})
	return w
}

func (w *shareWorld) sock() string {
	return filepath.Join(w.runtime, "mcp-simple-aggregator", "holder.sock")
}

func (w *shareWorld) holderLog() string {
	return filepath.Join(w.cache, "mcp-simple-aggregator", "holder.log")
}

// start runs an aggregator with --share in this world.
func (w *shareWorld) start(cfg string, flags ...string) *session {
	w.t.Helper()
	args := append([]string{"--config", cfg, "--share", "--share-idle", w.idle}, flags...)
	cmd := exec.Command(aggregatorBin, args...)
	cmd.Env = append(os.Environ(), quickRaceExit, "XDG_CACHE_HOME="+w.cache, "XDG_RUNTIME_DIR="+w.runtime)
	return startCmd(w.t, cmd)
}

// holderPids are the live holders of this world.
func (w *shareWorld) holderPids() []int {
	return livePIDs(w.t, func(p int) bool {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		return strings.Contains(string(cmdline), "\x00--share-holder\x00"+w.runtime+"/")
	})
}

// waitHolderGone waits, within waitLimit, for the holder to exit: its
// socket removed and its process gone; past the limit it kills it and
// fails the test.
func (w *shareWorld) waitHolderGone() {
	deadline := time.Now().Add(waitLimit)
	for {
		pids := w.holderPids()
		_, err := os.Stat(w.sock())
		if len(pids) == 0 && os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range pids {
				if pr, err := os.FindProcess(p); err == nil {
					pr.Kill()
				}
			}
			w.t.Errorf("the holder did not exit within %v after the last session (pids %v)", waitLimit, pids)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startedPids reads a -started-file: the pid of each server started.
func startedPids(t *testing.T, path string) []int {
	t.Helper()
	data, _ := os.ReadFile(path)
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			pid, _ := strconv.Atoi(f[1])
			pids = append(pids, pid)
		}
	}
	return pids
}

var holderPidInLog = regexp.MustCompile(`held by the holder \(pid (\d+)\)`)

func TestShareFiveSessionsOneProcessPerServer(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, ts("a", "-started-file", started), ts("b", "-started-file", started))
	var sessions []*session
	for i := 0; i < 5; i++ {
		s := w.start(cfg)
		s.initialize("2025-06-18", `{}`)
		if got := toolText(t, s.result("tools/call", `{"name":"a:echo","arguments":{"text":"hi"}}`)); !strings.Contains(got, "hi") {
			t.Fatalf("session %d: echo answered %q", i, got)
		}
		sessions = append(sessions, s)
	}
	pids := startedPids(t, started)
	if len(pids) != 2 {
		t.Fatalf("%d server processes started for 5 sessions of 2 servers, want 2: %v", len(pids), pids)
	}
	holders := w.holderPids()
	if len(holders) != 1 {
		t.Fatalf("%d holders, want 1", len(holders))
	}
	for _, s := range sessions {
		s.waitStderr(fmt.Sprintf("held by the holder (pid %d)", holders[0]))
	}
	// A session ending changes nothing for the others.
	sessions[0].closeAndWait()
	for _, s := range sessions[1:] {
		if got := toolText(t, s.result("tools/call", `{"name":"b:echo","arguments":{"text":"still"}}`)); !strings.Contains(got, "still") {
			t.Fatalf("after one session ended: echo answered %q", got)
		}
	}
	if pids := startedPids(t, started); len(pids) != 2 {
		t.Fatalf("after one session ended, %d processes were started in all, want 2", len(pids))
	}
	var wg sync.WaitGroup
	for _, s := range sessions[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); s.stdin.Close(); <-s.exited }()
	}
	wg.Wait()
	w.waitHolderGone()
	for _, p := range pids {
		if alive(p) {
			t.Errorf("server pid %d still runs after the holder's idle time", p)
		}
	}
}
