package aggregator

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// hookLimit is how long a connection's hooks may take with one line (or
// with the close of its pending calls) before the watchdog reports them:
// they never wait, so even under -race on a loaded machine they take
// microseconds; a hook that waited for a child's end took 1 to 2 s.
const hookLimit = 500 * time.Millisecond

// lateHooks records every hook the watchdog caught.
var lateHooks struct {
	mu     sync.Mutex
	caught []string
	notify chan string // when set, told of each one caught
}

// TestMain runs every test of the package with the hook watchdog on: a hook
// that does not return within hookLimit is reported, with every
// goroutine's stack, and fails the run.
func TestMain(m *testing.M) {
	hookWatchdog = func(conn string) func(string) func() { return watchWithin(hookLimit, conn) }
	code := m.Run()
	if caught := takeLateHooks(); len(caught) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: hooks that did not return within %v:\n%s\n", hookLimit, strings.Join(caught, "\n"))
		code = 1
	}
	os.Exit(code)
}

// watchWithin watches one connection's hooks, which may take limit.
func watchWithin(limit time.Duration, conn string) func(string) func() {
	return func(what string) func() {
		started := time.Now()
		t := time.AfterFunc(limit, func() {
			buf := make([]byte, 1<<20)
			report := fmt.Sprintf("the hooks of %s with %s have not returned after %v; goroutines:\n%s",
				conn, what, time.Since(started).Round(time.Millisecond), buf[:runtime.Stack(buf, true)])
			lateHooks.mu.Lock()
			lateHooks.caught = append(lateHooks.caught, report)
			notify := lateHooks.notify
			lateHooks.mu.Unlock()
			if notify != nil {
				notify <- report
			}
		})
		return func() { t.Stop() }
	}
}

// takeLateHooks returns the hooks caught so far and forgets them.
func takeLateHooks() []string {
	lateHooks.mu.Lock()
	defer lateHooks.mu.Unlock()
	caught := lateHooks.caught
	lateHooks.caught = nil
	return caught
}

// checkHooks fails t for every hook caught during it.
func checkHooks(t testing.TB) {
	for _, report := range takeLateHooks() {
		t.Errorf("a hook blocked the reader: %s", report)
	}
}

// TestHookWatchdogCatchesABlockedHook: the watchdog reports a hook that has
// not returned in time, naming the connection and what it was given.
func TestHookWatchdogCatchesABlockedHook(t *testing.T) {
	notify := make(chan string, 1)
	lateHooks.mu.Lock()
	lateHooks.notify = notify
	lateHooks.mu.Unlock()
	defer func() {
		lateHooks.mu.Lock()
		lateHooks.notify = nil
		lateHooks.mu.Unlock()
		takeLateHooks()
	}()
	done := watchWithin(time.Millisecond, `server "slow"`)("a line")
	select {
	case report := <-notify:
		if !strings.Contains(report, `server "slow" with a line have not returned`) {
			t.Errorf("report %.200q", report)
		}
	case <-time.After(waitLimit):
		t.Fatal("the watchdog did not catch a hook that never returned")
	}
	done()
}
