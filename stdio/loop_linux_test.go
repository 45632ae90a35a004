package stdio

import (
	"bufio"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

func newTestLoop(t *testing.T) *Loop {
	t.Helper()
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// loopPipeForTest returns a loop reader of a new pipe and its write end.
func loopPipeForTest(t *testing.T, l *Loop, grace time.Duration) (*pipeReader, *os.File) {
	t.Helper()
	r, w, err := l.loopPipe(grace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return r, w
}

// Two readers share the loop's one goroutine: each gets its own lines, in
// turn, and the end of its pipe.
func TestLoopReadsPipesInTurn(t *testing.T) {
	l := newTestLoop(t)
	type got struct {
		who  string
		line string
		err  error
	}
	lines := make(chan got, 16)
	read := func(who string, r io.Reader) func() {
		return func() {
			br := bufio.NewReader(r)
			for {
				line, err := br.ReadString('\n')
				lines <- got{who, line, err}
				if err != nil {
					return
				}
			}
		}
	}
	ra, wa := loopPipeForTest(t, l, time.Second)
	rb, wb := loopPipeForTest(t, l, time.Second)
	l.Go(read("a", ra))
	l.Go(read("b", rb))
	expect := func(who, line string, err error) {
		t.Helper()
		g := <-lines
		if g.who != who || g.line != line || !errors.Is(g.err, err) && g.err != err {
			t.Fatalf("got %s %q %v, want %s %q %v", g.who, g.line, g.err, who, line, err)
		}
	}
	wa.WriteString("one\n")
	expect("a", "one\n", nil)
	wb.WriteString("two\n")
	expect("b", "two\n", nil)
	wa.WriteString("thr")
	wa.WriteString("ee\n")
	expect("a", "three\n", nil)
	wb.Close()
	expect("b", "", io.EOF)
	wa.WriteString("four\n")
	expect("a", "four\n", nil)
	wa.Close()
	expect("a", "", io.EOF)
}

// Once the child has exited, a read that finds no data for the grace
// period fails with ErrLeftOpen, as without a loop.
func TestLoopReadGivesUpAfterTheExit(t *testing.T) {
	l := newTestLoop(t)
	r, w := loopPipeForTest(t, l, 50*time.Millisecond)
	errs := make(chan error, 1)
	l.Go(func() {
		_, err := io.ReadAll(r)
		errs <- err
	})
	w.WriteString("data\n") // read at once: the grace is not running yet
	r.exited()
	if err := <-errs; !errors.Is(err, ErrLeftOpen) {
		t.Fatalf("got %v, want ErrLeftOpen", err)
	}
}

// Close ends a read that is waiting, and the descriptor is closed.
func TestLoopReaderCloseEndsTheRead(t *testing.T) {
	l := newTestLoop(t)
	r, _ := loopPipeForTest(t, l, time.Second)
	errs := make(chan error, 1)
	l.Go(func() {
		_, err := r.Read(make([]byte, 10))
		errs <- err
	})
	r.Close()
	if err := <-errs; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("got %v, want os.ErrClosed", err)
	}
	if _, err := r.f.Stat(); err == nil {
		t.Fatal("the pipe is still open")
	}
}

// Closing the loop fails the reads waiting in it and returns once their
// functions have returned.
func TestLoopCloseEndsWaitingReads(t *testing.T) {
	l, err := NewLoop()
	if err != nil {
		t.Fatal(err)
	}
	r, _ := loopPipeForTest(t, l, time.Second)
	errs := make(chan error, 1)
	started := make(chan struct{})
	l.Go(func() {
		close(started)
		_, err := r.Read(make([]byte, 10))
		errs <- err
	})
	<-started
	l.Close()
	if err := <-errs; !errors.Is(err, errLoopClosed) {
		t.Fatalf("got %v, want errLoopClosed", err)
	}
}

// Reader takes a pipe such as stdin, puts it in non-blocking mode while it
// reads it and back when it is done; it refuses a regular file.
func TestLoopReaderOfAPipe(t *testing.T) {
	l := newTestLoop(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	var fd int
	control(pr, func(d int) { fd = d })
	syscall.SetNonblock(fd, false)
	shared, err := syscall.Dup(fd) // its flags are the pipe's, after pr is closed
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(shared)
	rc, err := l.Reader(pr)
	if err != nil {
		t.Fatal(err)
	}
	if flags, _ := fcntl(shared, syscall.F_GETFL, 0); flags&syscall.O_NONBLOCK == 0 {
		t.Fatal("the pipe was not made non-blocking")
	}
	got := make(chan string, 1)
	l.Go(func() {
		b, _ := io.ReadAll(rc)
		got <- string(b)
	})
	pw.WriteString("hello")
	pw.Close()
	if s := <-got; s != "hello" {
		t.Fatalf("read %q", s)
	}
	if flags, err := fcntl(shared, syscall.F_GETFL, 0); err != nil || flags&syscall.O_NONBLOCK != 0 {
		t.Fatalf("the pipe was left non-blocking (%v)", err)
	}

	file, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if _, err := l.Reader(file); err == nil {
		t.Fatal("a regular file was taken")
	}
}

// Read outside the loop's functions fails instead of corrupting the loop.
func TestLoopReadOutsideTheLoopFails(t *testing.T) {
	l := newTestLoop(t)
	r, _ := loopPipeForTest(t, l, time.Second)
	if _, err := r.Read(make([]byte, 10)); err == nil {
		t.Fatal("no error")
	}
}

// A read into an empty buffer returns 0 and no error at once, as an
// io.Reader should, and the pipe is still read after it.
func TestLoopReadIntoNothing(t *testing.T) {
	l := newTestLoop(t)
	r, w := loopPipeForTest(t, l, time.Second)
	type result struct {
		empty, n int
		err      error
		data     string
	}
	done := make(chan result, 1)
	l.Go(func() {
		var res result
		res.empty, res.err = r.Read(nil)
		if res.err == nil {
			buf := make([]byte, 16)
			res.n, res.err = r.Read(buf)
			res.data = string(buf[:res.n])
		}
		done <- res
	})
	if _, err := w.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.empty != 0 || res.err != nil || res.data != "x\n" {
		t.Errorf("Read(nil) = %d, then %q, %v; want 0, then \"x\\n\", nil", res.empty, res.data, res.err)
	}
}
