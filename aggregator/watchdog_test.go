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
// with the close of its pending calls) before the watchdog reports them
// if they are waiting: they never wait, so they take microseconds; a hook
// that waited for a child's end took 1 to 2 s. Hooks that are still busy,
// or wait only for a CPU (runnable: tests run in parallel, on a loaded
// machine), are looked at again every hookLimit/5 until they return or
// wait.
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

// watchWithin watches one connection's hooks, which may take limit: hooks
// that have not returned by then and are waiting are reported; hooks still
// busy are looked at again every limit/5.
func watchWithin(limit time.Duration, conn string) func(string) func() {
	return func(what string) func() {
		w := &watchedHooks{conn: conn, what: what, started: time.Now(), header: goroutineHeader(), recheck: limit / 5}
		w.mu.Lock()
		w.timer = time.AfterFunc(limit, w.check)
		w.mu.Unlock()
		return w.done
	}
}

// watchedHooks are a connection's hooks running with one line, on the
// reader's goroutine (jsonrpc.Options.Watch is told on it).
type watchedHooks struct {
	conn, what string
	started    time.Time
	header     string // "goroutine N [", how the reader's stack begins
	recheck    time.Duration

	mu       sync.Mutex // protects timer and returned
	timer    *time.Timer
	returned bool
}

// done is called once the hooks have returned.
func (w *watchedHooks) done() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.returned = true
	w.timer.Stop()
}

// check reports the hooks if they are waiting, and looks again later if
// they are still busy.
func (w *watchedHooks) check() {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	w.mu.Lock()
	if w.returned {
		w.mu.Unlock()
		return
	}
	if !waiting(stacks, w.header) {
		w.timer.Reset(w.recheck)
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	report := fmt.Sprintf("the hooks of %s with %s have not returned after %v; goroutines:\n%s",
		w.conn, w.what, time.Since(w.started).Round(time.Millisecond), stacks)
	lateHooks.mu.Lock()
	lateHooks.caught = append(lateHooks.caught, report)
	notify := lateHooks.notify
	lateHooks.mu.Unlock()
	if notify != nil {
		notify <- report
	}
}

// goroutineHeader is how the calling goroutine's stack begins in
// runtime.Stack: "goroutine N [".
func goroutineHeader() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	n, _, _ := strings.Cut(string(buf), "[")
	return n + "["
}

// waiting reports whether the goroutine whose stack begins with header is
// blocked in stacks (on a channel, a lock, a timer, I/O, a system call):
// not running, nor runnable, nor preempted or helping the collector.
func waiting(stacks, header string) bool {
	_, rest, found := strings.Cut(stacks, header)
	if !found {
		return true // gone without saying done: report it
	}
	state, _, _ := strings.Cut(rest, "]")
	state, _, _ = strings.Cut(state, ",") // ", 2 minutes", ", locked to thread"
	switch state {
	case "running", "runnable", "preempted", "GC assist wait", "GC assist marking":
		return false
	}
	return true
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
	// Not parallel: it takes every hook caught, which other tests report.
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

// TestHookWatchdogSparesABusyHook: hooks that are still at work after the
// limit (running or runnable, as on a loaded machine) have not waited:
// they are not reported.
func TestHookWatchdogSparesABusyHook(t *testing.T) {
	// Not parallel: it takes every hook caught, which other tests report.
	done := watchWithin(time.Millisecond, `server "busy"`)("a line")
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		// at work, never waiting
	}
	done()
	if caught := takeLateHooks(); len(caught) > 0 {
		t.Errorf("the watchdog reported a hook at work: %.300s", caught[0])
	}
}
