//go:build unix

package jsonrpc

import (
	"io"
	"os"
	"strings"
	"testing"
)

// directPipeWriter returns the direct writer of a new pipe from os.Pipe,
// both ends closed when the test ends.
func directPipeWriter(t *testing.T) func([]byte) (int, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	write := directWriter(w)
	if write == nil {
		t.Fatal("no direct writer for a pipe from os.Pipe")
	}
	return write
}

// TestDirectWriteAllocatesNothing: the non-blocking write to a child's
// pipe, made for every request, reuses its one callback.
func TestDirectWriteAllocatesNothing(t *testing.T) {
	write := directPipeWriter(t)
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if n := testing.AllocsPerRun(100, func() {
		if n, err := write(line); err != nil || n != len(line) {
			t.Fatalf("write = %d, %v", n, err)
		}
	}); n != 0 {
		t.Errorf("a direct write made %v allocations, want 0", n)
	}
}

// TestDirectWriteOfNothing: an empty write writes nothing and fails
// nothing.
func TestDirectWriteOfNothing(t *testing.T) {
	write := directPipeWriter(t)
	if n, err := write(nil); n != 0 || err != nil {
		t.Errorf("write(nil) = %d, %v; want 0, nil", n, err)
	}
}

// TestConnDirectWriteAllocatesNothing: with Options.Queue, a line the pipe
// takes at once goes out through Conn.Write without an allocation.
func TestConnDirectWriteAllocatesNothing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	go io.Copy(io.Discard, r)
	c := NewConn(nil, w, Options{Queue: true, MaxQueued: 1 << 20})
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if n := testing.AllocsPerRun(100, func() {
		if err := c.Write(line); err != nil { // 101 lines: 4 KiB, far less than a pipe holds
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("a direct Conn.Write made %v allocations, want 0", n)
	}
}

// TestWithdrawAfterPartialDirectWrite: a request partly written by the
// direct write is not withdrawn (the peer has its start); a request
// queued behind it is.
func TestWithdrawAfterPartialDirectWrite(t *testing.T) {
	watchdog(t, deadlockTimeout)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := NewConn(nil, w, Options{Queue: true})
	params := []byte(`{"p":"` + strings.Repeat("x", 1<<20) + `"}`) // far more than a pipe holds
	noop := func(*Message, error) {}
	big, err := c.Go("big", params, noop)
	if err != nil {
		t.Fatal(err)
	}
	small, err := c.Go("small", nil, noop)
	if err != nil {
		t.Fatal(err)
	}
	if c.Withdraw(big) {
		t.Error("Withdraw took back a request partly written")
	}
	if !c.Withdraw(small) {
		t.Error("Withdraw did not take back the request queued behind it")
	}
	if err := c.Notify("last", nil); err != nil {
		t.Fatal(err)
	}
	readLines(t, r, AppendRequest(nil, big, "big", params), AppendNotification(nil, "last", nil))
}
