package aggregator

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// within runs f and fails the test if it does not return within the
// watchdog.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s: still blocked after %v", what, waitLimit)
	}
}

// stuckWriter is a stderr nobody reads: its first Write blocks, after
// closing blocked, until release is closed. It records every line.
type stuckWriter struct {
	blocked chan struct{}
	release chan struct{}
	once    sync.Once

	mu    sync.Mutex // protects lines
	lines []string
}

func newStuckWriter() *stuckWriter {
	return &stuckWriter{blocked: make(chan struct{}), release: make(chan struct{})}
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.blocked) })
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func (w *stuckWriter) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// A stderr that is not read blocks no Write: lines queue up to the bound,
// the rest are dropped and counted, and once stderr is read again the
// queued lines come out in order, followed by the count.
func TestLoggerNeverBlocks(t *testing.T) {
	t.Parallel()
	w := newStuckWriter()
	l := NewLogger(w, "p: ", false)
	l.limit = 64 << 10
	l.Warnf("first")
	within(t, "the first write to block", func() { <-w.blocked })

	const n = 10000
	within(t, "writing while stderr is stuck", func() {
		var line []byte // reused, as the stderr relay does
		for i := 0; i < n; i++ {
			line = fmt.Appendf(line[:0], "[k] line %d\n", i)
			l.Write(line)
		}
	})
	select {
	case <-w.release:
		t.Fatal("released early")
	default: // every Write returned while the writer was blocked
	}
	if l.Flush(time.Millisecond) {
		t.Fatal("Flush reported the lines written while stderr is stuck")
	}

	close(w.release)
	if !l.Flush(waitLimit) {
		t.Fatal("Flush timed out after stderr was read again")
	}
	got := w.get()
	if len(got) < 3 || got[0] != "p: warning: first"+seeErrors+"\n" {
		t.Fatalf("got %d lines, starting %.3q", len(got), got)
	}
	kept := got[1 : len(got)-1]
	queued := len("p: warning: first" + seeErrors + "\n")
	for i, line := range kept {
		if want := fmt.Sprintf("[k] line %d\n", i); line != want {
			t.Fatalf("line %d: %q, want %q", i+1, line, want)
		}
		queued += len(line)
	}
	if queued > l.limit || len(kept) == n {
		t.Errorf("%d lines (%d bytes) queued with a bound of %d bytes", len(kept), queued, l.limit)
	}
	want := fmt.Sprintf("p: warning: %d log lines dropped: stderr was not read fast enough\n", n-len(kept))
	if last := got[len(got)-1]; last != want {
		t.Errorf("last line %q, want %q", last, want)
	}
}

// Lines from many goroutines come out whole, each goroutine's in order.
func TestLoggerKeepsOrder(t *testing.T) {
	t.Parallel()
	var w recordingWriter
	l := NewLogger(&w, "", false)
	const writers, lines = 8, 500
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < lines; i++ {
				l.Write([]byte(fmt.Sprintf("%d %d\n", g, i)))
			}
		}()
	}
	wg.Wait()
	if !l.Flush(waitLimit) {
		t.Fatal("Flush timed out")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.writes) != writers*lines {
		t.Fatalf("%d writes, want %d", len(w.writes), writers*lines)
	}
	next := make([]int, writers)
	for _, line := range w.writes {
		var g, i int
		if _, err := fmt.Sscanf(line, "%d %d\n", &g, &i); err != nil || i != next[g] {
			t.Fatalf("line %q out of order (want %d next from %d) or garbled: %v", line, next[g], g, err)
		}
		next[g]++
	}
}

// failingWriter is a closed stderr: every Write fails.
type failingWriter struct {
	mu     sync.Mutex // protects writes
	writes int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return 0, errors.New("write /dev/stderr: broken pipe")
}

// After a write error nothing more is written, and logging goes on
// without blocking or starting a writer.
func TestLoggerStopsAfterWriteError(t *testing.T) {
	t.Parallel()
	var w failingWriter
	l := NewLogger(&w, "", false)
	l.Errorf("lost")
	if !l.Flush(waitLimit) {
		t.Fatal("Flush timed out")
	}
	within(t, "logging to a broken stderr", func() {
		for i := 0; i < 1000; i++ {
			l.Warnf("dropped %d", i)
			l.Write([]byte("dropped too\n"))
		}
	})
	l.mu.Lock()
	idle := l.writing == nil && len(l.queue) == 0
	l.mu.Unlock()
	if !idle {
		t.Error("lines queued or a writer started after the write error")
	}
	if !l.Flush(waitLimit) {
		t.Fatal("Flush timed out")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writes != 1 {
		t.Errorf("%d writes, want 1: the one that failed", w.writes)
	}
}

// No goroutine of the Logger lives while there is nothing to write.
func TestLoggerIdleHasNoWriter(t *testing.T) {
	t.Parallel()
	var w recordingWriter
	l := NewLogger(&w, "", false)
	for round := 0; round < 3; round++ {
		l.Warnf("round %d", round)
		if !l.Flush(waitLimit) {
			t.Fatal("Flush timed out")
		}
		l.mu.Lock()
		writing := l.writing
		l.mu.Unlock()
		if writing != nil {
			t.Fatalf("round %d: a writer goroutine is still running after Flush", round)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if got, want := strings.Join(w.writes, ""), strings.Repeat("warning: round %d"+seeErrors+"\n", 3); got != fmt.Sprintf(want, 0, 1, 2) {
		t.Errorf("wrote %q", got)
	}
}

// stepWriter lets one Write through per value sent on step, and records
// the lines.
type stepWriter struct {
	step  chan struct{}
	mu    sync.Mutex // protects lines
	lines []string
}

func (w *stepWriter) Write(p []byte) (int, error) {
	<-w.step
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

// Under a flood that never lets the queue empty (a noisy child), the count
// of dropped lines still comes out: in their place, before the next line
// that fits.
func TestLoggerCountsDropsWhereTheyHappened(t *testing.T) {
	t.Parallel()
	w := &stepWriter{step: make(chan struct{})}
	l := NewLogger(w, "p: ", false)
	l.limit = len("line 0\n") * 2
	l.Write([]byte("line 0\n")) // being written, blocked
	l.Write([]byte("line 1\n")) // queued: the queue is full
	l.Write([]byte("line 2\n")) // dropped
	l.Write([]byte("line 3\n")) // dropped
	w.step <- struct{}{}        // line 0 written: room for one line
	within(t, "room in the queue", func() {
		for {
			l.mu.Lock()
			room := l.queued+len("line 4\n") <= l.limit
			l.mu.Unlock()
			if room {
				return
			}
			runtime.Gosched()
		}
	})
	l.Write([]byte("line 4\n"))
	close(w.step)
	if !l.Flush(waitLimit) {
		t.Fatal("Flush timed out")
	}
	want := []string{"line 0\n", "line 1\n", "p: warning: 2 log lines dropped: stderr was not read fast enough\n", "line 4\n"}
	w.mu.Lock()
	defer w.mu.Unlock()
	if fmt.Sprint(w.lines) != fmt.Sprint(want) {
		t.Errorf("lines %q, want %q", w.lines, want)
	}
}

// The logger's own lines show names in place of the values of the
// servers' env entries and expanded variables (long enough to be
// secrets); the servers' stderr lines it relays are left alone.
func TestLoggerHidesConfigValues(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	l := NewLogger(&out, "p: ", false)
	l.Hide([]config.Server{{Key: "db",
		Env:  []config.EnvVar{{Name: "DB_URL", Value: "postgres://app:hunter22@db/prod"}, {Name: "DEBUG", Value: "1"}},
		Vars: []config.EnvVar{{Name: "PASSWORD", Value: "hunter22"}}}})
	l.Warnf("dropped: %s; then %s; debug=%s", "cannot reach postgres://app:hunter22@db/prod", "hunter22 rejected", "1")
	l.Write([]byte("[db] postgres://app:hunter22@db/prod\n"))
	if !l.Flush(waitLimit) {
		t.Fatal("not flushed")
	}
	want := "p: warning: dropped: cannot reach <env DB_URL>; then ${PASSWORD} rejected; debug=1" + seeErrors + "\n[db] postgres://app:hunter22@db/prod\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
