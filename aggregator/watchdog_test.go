package aggregator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// hookLimit is how long a reader may wait inside a connection's hooks (or
// inside the close's answers to its pending calls) before the watchdog
// reports it: they never wait, so they take microseconds; a hook that
// waited for a child's end took 1 to 2 s. Hooks that are at work, or wait
// only for a CPU (runnable: tests run in parallel, on a loaded machine),
// are never reported.
const hookLimit = 500 * time.Millisecond

// lateHooks records every hook the watchdog caught.
var lateHooks struct {
	mu     sync.Mutex
	caught []string
}

// TestMain runs every test of the package with the hook watchdog on: a
// reader that waits inside its hooks for hookLimit is reported, with
// every goroutine's stack, and fails the run.
func TestMain(m *testing.M) {
	frames, err := learnHookFrames()
	if err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: the hook watchdog: %v\n", err)
		os.Exit(1)
	}
	w := &hookWatch{limit: hookLimit, frames: frames, spare: "aggregator.TestHookWatchdog"}
	stop := w.run(hookLimit/5, func(report string) {
		lateHooks.mu.Lock()
		lateHooks.caught = append(lateHooks.caught, report)
		lateHooks.mu.Unlock()
	})
	code := m.Run()
	stop()
	if caught := takeLateHooks(); len(caught) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: readers that waited in their hooks for %v:\n%s\n", hookLimit, strings.Join(caught, "\n"))
		code = 1
	}
	os.Exit(code)
}

// learnHookFrames returns the functions under which a jsonrpc.Conn runs its
// hooks: for each hook, the function Conn.Run called, on the stack of a
// Conn whose hooks look at their own (so that no change to package
// jsonrpc can hide its hooks from the watchdog). Pace, the one hook that
// may wait, must run under none of them.
func learnHookFrames() ([]string, error) {
	var mu sync.Mutex
	under := map[string]string{} // the hook -> what Run called to run it
	learn := func(hook string) {
		pcs := make([]uintptr, 64)
		frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
		called := ""
		for {
			f, more := frames.Next()
			if strings.HasSuffix(f.Function, "/jsonrpc.(*Conn).Run") {
				mu.Lock()
				under[hook] = called
				mu.Unlock()
				return
			}
			called = f.Function
			if !more {
				return
			}
		}
	}
	in, out := io.Pipe()
	c := jsonrpc.NewConn(in, io.Discard, jsonrpc.Options{
		Handle:      func(*jsonrpc.Message) { learn("Handle") },
		Batch:       func([][]byte) { learn("Batch") },
		Invalid:     func([]byte, *jsonrpc.Message, error) { learn("Invalid") },
		Unmatched:   func(*jsonrpc.Message) { learn("Unmatched") },
		MaxLineSize: 64,
		Oversized:   func([]byte, int64) error { learn("Oversized"); return nil },
		Pace:        func(bool) { learn("Pace") },
	})
	answered, _ := c.Go("m", nil, func(*jsonrpc.Message, error) { learn("an answer") })
	c.Go("m", nil, func(*jsonrpc.Message, error) { learn("the close's answer") })
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		c.Run()
	}()
	io.WriteString(out, `{"jsonrpc":"2.0","id":1,"method":"m"}`+"\n"+
		`[{"jsonrpc":"2.0","method":"n"}]`+"\n"+
		"not JSON\n"+
		`{"jsonrpc":"2.0","id":"nobody's","result":{}}`+"\n"+
		string(jsonrpc.AppendResult(nil, answered, []byte(`{}`)))+
		`{"jsonrpc":"2.0","method":"`+strings.Repeat("x", 100)+`"}`+"\n")
	out.Close()
	<-ran
	var frames []string
	var errs []error
	for _, hook := range []string{"Handle", "Batch", "Invalid", "Unmatched", "an answer", "Oversized", "the close's answer"} {
		f, ok := under[hook]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s did not run under Conn.Run", hook))
		case !strings.Contains(f, "/jsonrpc."):
			errs = append(errs, fmt.Errorf("Conn.Run calls %s itself, not through a function of package jsonrpc (%s)", hook, f))
		case !slices.Contains(frames, f):
			frames = append(frames, f)
		}
	}
	for _, f := range frames {
		if under["Pace"] == f {
			errs = append(errs, fmt.Errorf("Pace runs under %s, as the hooks do: a paced reader would be reported", f))
		}
	}
	return frames, errors.Join(errs...)
}

// hookWatch finds readers that wait inside their hooks: a goroutine seen
// waiting, with one of frames on its stack, and the same stack, in every
// look over limit.
type hookWatch struct {
	limit  time.Duration
	frames []string // learnHookFrames
	spare  string   // a function whose goroutines are never reported: the watchdog's own tests block hooks on purpose

	since    map[string]time.Time // a waiting stack -> when it was first seen
	reported map[string]bool
	buf      []byte // every goroutine's stack, kept from look to look
}

// run looks every interval until stop is called, telling caught of each
// reader found.
func (w *hookWatch) run(interval time.Duration, caught func(report string)) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
			case <-done:
				return
			}
			for _, report := range w.look(time.Now()) {
				caught(report)
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// look takes every goroutine's stack at now and returns a report of each
// reader that has waited in its hooks for limit, once.
func (w *hookWatch) look(now time.Time) []string {
	w.buf = goroutineStacks(w.buf)
	if !w.inHooks(w.buf) {
		w.since = nil // the usual case: no reader is in its hooks now
		return nil
	}
	all := string(w.buf)
	since := make(map[string]time.Time)
	var reports []string
	// Each goroutine's stack ends with a blank line but the last, which
	// ends with a newline: trimmed, a goroutine's stack reads the same
	// wherever it comes in the dump.
	for _, g := range strings.Split(strings.TrimRight(all, "\n"), "\n\n") {
		if !waiting(g) || !w.inHooks([]byte(g)) || (w.spare != "" && strings.Contains(g, w.spare)) {
			continue
		}
		key := withoutState(g) // the same goroutine, at the same point
		first, ok := w.since[key]
		if !ok {
			first = now
		}
		since[key] = first
		if now.Sub(first) >= w.limit && !w.reported[key] {
			if w.reported == nil {
				w.reported = make(map[string]bool)
			}
			w.reported[key] = true
			reports = append(reports, fmt.Sprintf("a reader has waited in its hooks for %v:\n%s\n\nevery goroutine:\n%s", now.Sub(first), g, all))
		}
	}
	w.since = since
	return reports
}

// inHooks reports whether the stacks hold a call of one of w.frames.
func (w *hookWatch) inHooks(stacks []byte) bool {
	for _, f := range w.frames {
		if bytes.Contains(stacks, []byte("\n"+f+"(")) {
			return true
		}
	}
	return false
}

// goroutineStacks is every goroutine's stack, as a panic prints them, in
// buf if it has room.
func goroutineStacks(buf []byte) []byte {
	buf = buf[:cap(buf)]
	if len(buf) == 0 {
		buf = make([]byte, 1<<20)
	}
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}

// waiting reports whether the goroutine whose stack is g is blocked (on a
// channel, a lock, a timer, I/O, a system call): not running, nor
// runnable, nor preempted or helping the collector.
func waiting(g string) bool {
	_, state, _ := strings.Cut(g, "[")
	state, _, _ = strings.Cut(state, "]")
	state, _, _ = strings.Cut(state, ",") // ", 2 minutes", ", locked to thread"
	switch state {
	case "running", "runnable", "preempted", "GC assist wait", "GC assist marking":
		return false
	}
	return true
}

// withoutState is the goroutine's stack g without the state in its first
// line, which says for how many minutes it has waited.
func withoutState(g string) string {
	head, rest, _ := strings.Cut(g, "[")
	_, rest, _ = strings.Cut(rest, "]")
	return head + rest
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

// watchedConn runs a Conn with opts over a pipe, and writes it one
// notification; stop ends it.
func watchedConn(t *testing.T, opts jsonrpc.Options) {
	t.Helper()
	in, out := io.Pipe()
	c := jsonrpc.NewConn(in, io.Discard, opts)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		c.Run()
	}()
	go io.WriteString(out, `{"jsonrpc":"2.0","method":"n"}`+"\n")
	t.Cleanup(func() {
		out.Close()
		<-ran
	})
}

// parkedIn waits until a goroutine is waiting in fn (a function of this
// test, whose name is on its stack).
func parkedIn(t *testing.T, fn string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < waitLimit; runtime.Gosched() {
		for _, g := range strings.Split(string(goroutineStacks(nil)), "\n\n") {
			if waiting(g) && strings.Contains(g, fn) {
				return
			}
		}
	}
	t.Fatalf("no goroutine waits in %s", fn)
}

// TestHookWatchdogCatchesABlockedHook: the watchdog reports a reader whose
// hook has waited for the limit, with its stack.
func TestHookWatchdogCatchesABlockedHook(t *testing.T) {
	// Not parallel: the watchdog looks at every goroutine.
	release := make(chan struct{})
	defer close(release)
	watchedConn(t, jsonrpc.Options{Handle: func(*jsonrpc.Message) { <-release }})
	parkedIn(t, "TestHookWatchdogCatchesABlockedHook.func")
	w := &hookWatch{limit: time.Second, frames: mustHookFrames(t)}
	t0 := time.Now()
	if reports := w.look(t0); len(reports) != 0 {
		t.Fatalf("reported at once: %.300s", reports[0])
	}
	reports := w.look(t0.Add(time.Second))
	if len(reports) != 1 || !strings.Contains(reports[0], "TestHookWatchdogCatchesABlockedHook.func") {
		t.Fatalf("the blocked hook was reported %d times: %.2000q", len(reports), reports)
	}
	if reports := w.look(t0.Add(2 * time.Second)); len(reports) != 0 {
		t.Errorf("reported again: %.300s", reports[0])
	}
}

// TestHookWatchdogSparesABusyHook: a hook at work after the limit (running
// or runnable, as on a loaded machine) has not waited: it is not reported.
func TestHookWatchdogSparesABusyHook(t *testing.T) {
	// Not parallel: the watchdog looks at every goroutine.
	var mu sync.Mutex
	busy, started := true, make(chan struct{})
	watchedConn(t, jsonrpc.Options{Handle: func(*jsonrpc.Message) {
		close(started)
		for {
			mu.Lock()
			b := busy
			mu.Unlock()
			if !b {
				return
			}
		}
	}})
	w := &hookWatch{limit: time.Millisecond, frames: mustHookFrames(t)}
	<-started
	t0 := time.Now()
	for i := range 20 {
		if reports := w.look(t0.Add(time.Duration(i) * time.Millisecond)); len(reports) != 0 {
			t.Errorf("the watchdog reported a hook at work: %.300s", reports[0])
		}
	}
	mu.Lock()
	busy = false
	mu.Unlock()
}

// TestHookWatchdogSparesAPacedReader: the reader may wait in Pace (flow
// control), after the hooks returned: it is not reported.
func TestHookWatchdogSparesAPacedReader(t *testing.T) {
	// Not parallel: the watchdog looks at every goroutine.
	release := make(chan struct{})
	defer close(release)
	watchedConn(t, jsonrpc.Options{Handle: func(*jsonrpc.Message) {}, Pace: func(bool) { <-release }})
	parkedIn(t, "TestHookWatchdogSparesAPacedReader.func")
	w := &hookWatch{limit: time.Second, frames: mustHookFrames(t)}
	t0 := time.Now()
	w.look(t0)
	if reports := w.look(t0.Add(time.Second)); len(reports) != 0 {
		t.Errorf("the watchdog reported a paced reader: %.300s", reports[0])
	}
}

// mustHookFrames is learnHookFrames, or fails t.
func mustHookFrames(t *testing.T) []string {
	t.Helper()
	frames, err := learnHookFrames()
	if err != nil {
		t.Fatal(err)
	}
	return frames
}
