package jsonrpc

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestWriteAtOnceToAPipeThatTakesIt: with Queue, a line to a pipe Go's
// poller watches, which has room, is written on the caller's goroutine: no
// queue, no goroutine handing it on.
func TestWriteAtOnceToAPipeThatTakesIt(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	if c.bounded == nil {
		t.Skip("pipes have no write deadlines here") // Windows: the queue's goroutine writes
	}
	if err := c.Write([]byte("{\"a\":1}\n")); err != nil {
		t.Fatal(err)
	}
	c.wmu.Lock()
	queued := c.flushDone != nil
	c.wmu.Unlock()
	if queued {
		t.Error("a line the pipe had room for went through the queue")
	}
	buf := make([]byte, 64)
	if n, _ := r.Read(buf); string(buf[:n]) != "{\"a\":1}\n" {
		t.Errorf("read %q", buf[:n])
	}
}

// TestWriteToAFullPipeWaitsInTheQueue: to a pipe nobody reads, Write
// returns (after tryWriteFor at most, not when the peer reads), what the
// pipe did not take waits in the queue, and once the peer reads every line
// arrives whole and in order, the one cut by the full pipe included.
func TestWriteToAFullPipeWaitsInTheQueue(t *testing.T) {
	t.Parallel()
	watchdog(t, 10e9)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	var want bytes.Buffer
	big := strings.Repeat("x", 100<<10) // each line more than a pipe holds
	for i := range 5 {
		line := []byte("{\"n\":" + string(rune('0'+i)) + ",\"pad\":\"" + big + "\"}\n")
		want.Write(line)
		if err := c.Write(line); err != nil { // returns although nobody reads
			t.Fatal(err)
		}
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(r, int64(want.Len())))
		got <- b
	}()
	if b := await(t, got, "the lines"); !bytes.Equal(b, want.Bytes()) {
		t.Errorf("read %d bytes, not the %d written, or not in order", len(b), want.Len())
	}
	c.WaitWrites(0)
}

// stuckPeer is a writer with write deadlines whose first Write waits until
// release is closed (a peer that reads nothing for a while; it ignores the
// deadline, as a slow one would take that long).
type stuckPeer struct {
	rec     recordingWriter
	entered chan struct{}
	release chan struct{}
	first   atomic.Bool
}

func (p *stuckPeer) Write(b []byte) (int, error) {
	if p.first.CompareAndSwap(false, true) {
		close(p.entered)
		<-p.release
	}
	return p.rec.Write(b)
}

func (p *stuckPeer) SetWriteDeadline(time.Time) error { return nil }

// TestAWriteAtOnceHoldsUpNoOtherLane: while one lane's line is being
// written at once and the peer is slow to take it, another lane's Write
// returns at once (its line waits in the queue), and the lines go out in
// order once the peer reads.
func TestAWriteAtOnceHoldsUpNoOtherLane(t *testing.T) {
	t.Parallel()
	p := &stuckPeer{entered: make(chan struct{}), release: make(chan struct{})}
	c := NewConn(strings.NewReader(""), p, Options{Queue: true})
	first := make(chan error, 1)
	go func() { first <- c.Write([]byte("first\n")) }()
	await(t, p.entered, "the write at once")
	other := make(chan error, 1)
	go func() { other <- c.NewLane().Write([]byte("other\n")) }()
	if err := await(t, other, "the other lane's Write"); err != nil {
		t.Fatal(err)
	}
	close(p.release)
	if err := await(t, first, "the first Write"); err != nil {
		t.Fatal(err)
	}
	c.WaitWrites(0)
	if got := p.rec.recorded(); len(got) != 2 || string(got[0]) != "first\n" || string(got[1]) != "other\n" {
		t.Errorf("written %q", got)
	}
}

// scriptedPeer is a writer with write deadlines whose writes take, in
// turn, what takes says (all of it when takes is used up), each time ended
// by the deadline when that is less than the whole.
type scriptedPeer struct {
	mu    sync.Mutex
	takes []int
	got   bytes.Buffer
}

func (p *scriptedPeer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.takes) == 0 {
		return p.got.Write(b)
	}
	n := min(p.takes[0], len(b))
	p.takes = p.takes[1:]
	p.got.Write(b[:n])
	if n < len(b) {
		return n, os.ErrDeadlineExceeded
	}
	return n, nil
}

func (p *scriptedPeer) SetWriteDeadline(time.Time) error { return nil }

// TestAWriteAtOnceCutAnywhereLosesAndRepeatsNothing: however the peer's
// writes are cut by the deadline (nothing at first, then part of a part),
// every byte of the line reaches the peer once, in order.
func TestAWriteAtOnceCutAnywhereLosesAndRepeatsNothing(t *testing.T) {
	t.Parallel()
	result := []byte(`{"text":"` + strings.Repeat("y", 1000) + `"}`)
	parts := ResultParts([]byte("5"), result)
	want := string(AppendResult(nil, []byte("5"), result))
	for _, takes := range [][]int{{0, 3}, {0, 0}, {5}, {len(parts[0]) + 7}, {0, len(parts[0]), 100}} {
		p := &scriptedPeer{takes: takes}
		c := NewConn(strings.NewReader(""), p, Options{Queue: true})
		if err := c.WriteParts(parts[:]...); err != nil {
			t.Fatal(err)
		}
		c.WaitWrites(0)
		if got := p.got.String(); got != want {
			t.Errorf("takes %v: the peer got %d bytes, want the %d of the line once", takes, len(got), len(want))
		}
	}
}
