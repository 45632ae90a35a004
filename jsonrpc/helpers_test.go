package jsonrpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
)

// deadlockTimeout is how long a test may wait for anything before it is
// declared stuck.
const deadlockTimeout = 10 * time.Second

// watchdog crashes the test binary with every goroutine's stack when the
// test is still running after d: a deadlocked test cannot be failed from its
// own goroutine, and waiting for go test's -timeout takes minutes.
func watchdog(t testing.TB, d time.Duration) {
	t.Helper()
	name := t.Name()
	timer := time.AfterFunc(d, func() {
		fmt.Fprintf(os.Stderr, "watchdog: %s still running after %v; goroutines:\n%s\n", name, d, stacks())
		panic("watchdog: " + name + " deadlocked")
	})
	t.Cleanup(func() { timer.Stop() })
}

func stacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}

// await receives from ch, failing the test with a goroutine dump when
// nothing arrives within deadlockTimeout.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return awaitFor(t, ch, deadlockTimeout, what)
}

// awaitFor is await with a time limit of d.
func awaitFor[T any](t testing.TB, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s; goroutines:\n%s", what, stacks())
		panic("unreachable")
	}
}

// fakePeer is the other end of a Conn running over two io.Pipes: what the
// test writes to the peer's side is read by the Conn, and every line the Conn
// writes can be read from the peer.
type fakePeer struct {
	t       testing.TB
	timeout time.Duration // how long to wait for anything
	conn    *Conn

	toConn   *io.PipeWriter // the Conn reads what is written here
	fromConn *io.PipeReader // the Conn's writes arrive here
	lines    *bufio.Reader  // over fromConn

	runDone chan struct{} // closed when Run has returned
	runErr  error         // what Run returned; set before runDone is closed
}

// newFakePeer starts a Conn with opts over pipes and arranges for it to be
// stopped at the end of the test. Writes of the Conn go through rec when it
// is not nil.
func newFakePeer(t testing.TB, opts Options, rec *recordingWriter) *fakePeer {
	t.Helper()
	return newSlowFakePeer(t, opts, rec, deadlockTimeout)
}

// newSlowFakePeer is newFakePeer for a test that may take up to timeout.
func newSlowFakePeer(t testing.TB, opts Options, rec *recordingWriter, timeout time.Duration) *fakePeer {
	t.Helper()
	watchdog(t, timeout)
	connR, toConn := io.Pipe()
	fromConn, connW := io.Pipe()
	var w io.Writer = connW
	if rec != nil {
		rec.w = connW
		w = rec
	}
	p := &fakePeer{
		t:        t,
		timeout:  timeout,
		conn:     NewConn(connR, w, opts),
		toConn:   toConn,
		fromConn: fromConn,
		lines:    bufio.NewReader(fromConn),
		runDone:  make(chan struct{}),
	}
	go func() {
		defer close(p.runDone)
		p.runErr = p.conn.Run()
	}()
	t.Cleanup(func() {
		toConn.Close()
		fromConn.Close()
		p.waitRun()
	})
	return p
}

// waitRun waits for Run to return and returns its error.
func (p *fakePeer) waitRun() error {
	p.t.Helper()
	awaitFor(p.t, p.runDone, p.timeout, "Run to return")
	return p.runErr
}

// send writes raw bytes to the Conn. It may be called from any goroutine
// (it never calls FailNow).
func (p *fakePeer) send(s string) error {
	_, err := io.WriteString(p.toConn, s)
	return err
}

// mustSend is send on the test goroutine.
func (p *fakePeer) mustSend(s string) {
	p.t.Helper()
	if err := p.send(s); err != nil {
		p.t.Fatalf("writing to the conn: %v", err)
	}
}

// readLine returns the next line the Conn wrote, newline included.
func (p *fakePeer) readLine() ([]byte, error) {
	return p.lines.ReadBytes('\n')
}

// mustReadLine is readLine on the test goroutine, guarded by the watchdog.
func (p *fakePeer) mustReadLine() []byte {
	p.t.Helper()
	ch := make(chan []byte, 1)
	errc := make(chan error, 1)
	go func() {
		line, err := p.readLine()
		if err != nil {
			errc <- err
			return
		}
		ch <- line
	}()
	select {
	case line := <-ch:
		return line
	case err := <-errc:
		p.t.Fatalf("reading a line from the conn: %v", err)
	case <-time.After(p.timeout):
		p.t.Fatalf("timed out reading a line from the conn; goroutines:\n%s", stacks())
	}
	return nil
}

// recordingWriter records every Write call separately, then passes the bytes
// on to w (if set).
type recordingWriter struct {
	mu     sync.Mutex // protects writes
	writes [][]byte
	w      io.Writer
	err    error  // returned by every Write when set
	enter  func() // when set, called at the start of every Write
}

func (r *recordingWriter) Write(b []byte) (int, error) {
	if r.enter != nil {
		r.enter()
	}
	r.mu.Lock()
	r.writes = append(r.writes, bytes.Clone(b))
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if r.w == nil {
		return len(b), nil
	}
	return r.w.Write(b)
}

func (r *recordingWriter) recorded() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.writes...)
}

// aliases reports whether sub is a sub-slice of buf's memory (sharing its
// bytes, not a copy of them). An empty sub never aliases.
func aliases(buf, sub []byte) bool {
	if len(sub) == 0 {
		return false
	}
	for i := range buf {
		if &buf[i] == &sub[0] {
			return i+len(sub) <= len(buf)
		}
	}
	return false
}

// rawField describes an expected raw field: absent, or present with exactly
// these bytes.
type rawField struct {
	present bool
	bytes   string
}

func raw(s string) rawField { return rawField{true, s} }

var absent = rawField{}

func (f rawField) String() string {
	if !f.present {
		return "<absent>"
	}
	return "`" + f.bytes + "`"
}

func fieldOf(b []byte) rawField {
	if b == nil {
		return absent
	}
	return raw(string(b))
}

// checkRaw checks that got is exactly want and, when line is not nil, that it
// is a sub-slice of line.
func checkRaw(t testing.TB, name string, line, got []byte, want rawField) {
	t.Helper()
	if (got != nil) != want.present || !bytes.Equal(got, []byte(want.bytes)) {
		t.Errorf("%s = %v, want %v", name, fieldOf(got), want)
		return
	}
	if got != nil && line != nil && !aliases(line, got) {
		t.Errorf("%s = %v is not a sub-slice of the input", name, fieldOf(got))
	}
}

var errBoom = errors.New("boom")
