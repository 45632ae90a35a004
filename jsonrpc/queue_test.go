package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestQueuedWritesNeverBlock writes far more than a pipe holds to peers
// that do not read yet: every Write returns at once, and the lines arrive
// whole and in order once the peer reads.
func TestQueuedWritesNeverBlock(t *testing.T) {
	osR, osW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ioR, ioW := io.Pipe()
	for name, p := range map[string]struct {
		r io.ReadCloser
		w io.WriteCloser
	}{"os.Pipe (direct writes)": {osR, osW}, "io.Pipe (flusher)": {ioR, ioW}} {
		t.Run(name, func(t *testing.T) {
			watchdog(t, 10e9)
			c := NewConn(strings.NewReader(""), p.w, Options{Queue: true})
			big := strings.Repeat("x", 100<<10)
			var want bytes.Buffer
			for i := 0; i < 20; i++ { // 2 MB: far beyond a 64 KiB pipe
				line := fmt.Sprintf("{\"n\":%d,\"pad\":%q}\n", i, big)
				want.WriteString(line)
				if err := c.Write([]byte(line)); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]byte, want.Len())
			if _, err := io.ReadFull(bufio.NewReader(p.r), got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatal("queued lines arrived changed or out of order")
			}
			p.w.Close()
			p.r.Close()
		})
	}
}

// TestQueuedWriteErrorSticks checks that after a failed write every later
// Write fails too.
func TestQueuedWriteErrorSticks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	defer w.Close()
	if err := c.Write([]byte("{}\n")); err == nil {
		t.Fatal("write to a pipe without reader succeeded")
	}
	if err := c.Write([]byte("{}\n")); err == nil {
		t.Fatal("second write succeeded")
	}
}

// TestBrokenAnswerEndsTheCall checks that an answer that is not a valid
// response still ends the call it names, instead of leaving it pending.
func TestBrokenAnswerEndsTheCall(t *testing.T) {
	for _, answer := range []string{
		`{"jsonrpc":"2.0","id":1,"error":5}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
	} {
		t.Run(answer, func(t *testing.T) {
			p := newFakePeer(t, Options{}, nil)
			res := goCall(context.Background(), p.conn, "m", nil)
			p.mustReadLine()
			p.mustSend(answer + "\n")
			r := await(t, res, "the call")
			if r.err == nil || !strings.Contains(r.err.Error(), "invalid answer to request 1") {
				t.Fatalf("Call = %v, %v; want an invalid-answer error", r.m, r.err)
			}
		})
	}
}

// TestWaitWritesWaitsForTheFlusher: WaitWrites returns once the goroutine
// writing queued lines has stopped, here because the writer was closed
// under a write that waited.
func TestWaitWritesWaitsForTheFlusher(t *testing.T) {
	pr, pw := io.Pipe() // not a file: every line goes through the flusher
	c := NewConn(strings.NewReader(""), pw, Options{Queue: true})
	c.WaitWrites() // nothing written: returns at once
	if err := c.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		c.WaitWrites()
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("WaitWrites returned while a line was being written")
	default:
	}
	pr.CloseWithError(errors.New("reader gone"))
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("WaitWrites did not return after the write failed")
	}
}
