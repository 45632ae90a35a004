package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	t.Parallel()
	osR, osW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ioR, ioW := io.Pipe()
	for name, p := range map[string]struct {
		r io.ReadCloser
		w io.WriteCloser
	}{"os.Pipe": {osR, osW}, "io.Pipe": {ioR, ioW}} {
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
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	defer w.Close()
	c.Write([]byte("{}\n")) // fails at once (written at once), or in the queue's goroutine
	c.WaitWrites(0)
	if err := c.Write([]byte("{}\n")); err == nil {
		t.Fatal("a write after the flusher's failed write succeeded")
	}
}

// TestBrokenAnswerEndsTheCall checks that an answer that is not a valid
// response still ends the call it names, instead of leaving it pending.
func TestBrokenAnswerEndsTheCall(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	pr, pw := io.Pipe() // not a file: every line goes through the flusher
	c := NewConn(strings.NewReader(""), pw, Options{Queue: true})
	c.WaitWrites(0) // nothing written: returns at once
	if err := c.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		c.WaitWrites(0)
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

// notificationOfSize returns a notification line of exactly n bytes,
// newline included.
func notificationOfSize(n int) []byte {
	base := len(AppendNotification(nil, "m", []byte(`{"p":""}`)))
	return AppendNotification(nil, "m", []byte(`{"p":"`+strings.Repeat("x", n-base)+`"}`))
}

// stuckWriter returns a writer that is not a file (every queued line goes
// through the flusher) and takes nothing until pr is read, and a channel
// told each time a Write starts.
func stuckWriter(t *testing.T) (w io.Writer, pr *io.PipeReader, entered <-chan struct{}) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pr.Close() })
	ch := make(chan struct{}, 100)
	return &recordingWriter{w: pw, enter: func() { ch <- struct{}{} }}, pr, ch
}

// readLines reads one line from r for each of want and checks that it is
// that line.
func readLines(t *testing.T, r io.Reader, want ...[]byte) {
	t.Helper()
	for i, w := range want {
		got := make([]byte, len(w))
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("reading line %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("line %d is %.60q..., want %.60q...", i, got, w)
		}
	}
}

// TestMaxQueued: with the queue holding bytes, a line that would take it
// over MaxQueued is refused with ErrQueueFull, whatever writes it (a
// refused call leaves nothing pending); everything accepted arrives in
// order, and once the queue drains lines are accepted again, even one over
// the bound.
func TestMaxQueued(t *testing.T) {
	t.Parallel()
	watchdog(t, deadlockTimeout)
	w, pr, entered := stuckWriter(t)
	c := NewConn(nil, w, Options{Queue: true, MaxQueued: 1000})
	var sent [][]byte
	mustWrite := func(line []byte) {
		t.Helper()
		if err := c.Write(line); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, line)
	}
	mustWrite(notificationOfSize(300))
	await(t, entered, "the flusher to write") // 300 bytes in its hands
	mustWrite(notificationOfSize(300))
	mustWrite(notificationOfSize(300)) // 900 bytes queued
	err := c.Write(notificationOfSize(101))
	if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "900 bytes queued") || !strings.Contains(err.Error(), "limit 1000") {
		t.Fatalf("Write over the bound = %v, want ErrQueueFull saying 900 bytes queued, limit 1000", err)
	}
	mustWrite(notificationOfSize(100)) // exactly 1000

	if _, err := c.Go("m", nil, func(*Message, error) { t.Error("the Waiter of a refused call was called") }); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Go = %v, want ErrQueueFull", err)
	}
	c.mu.Lock()
	pending := len(c.pending)
	c.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d calls pending after Go was refused", pending)
	}
	if err := c.Notify("n", nil); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Notify = %v, want ErrQueueFull", err)
	}
	if err := c.Reply([]byte("1"), []byte("{}")); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Reply = %v, want ErrQueueFull", err)
	}

	readLines(t, pr, sent...)
	c.WaitWrites(0)
	big := notificationOfSize(5000) // over the bound, but nothing is queued
	mustWrite(big)
	if err := c.Write(notificationOfSize(200)); !errors.Is(err, ErrQueueFull) {
		t.Errorf("Write behind a line over the bound = %v, want ErrQueueFull", err)
	}
	readLines(t, pr, big)
	c.WaitWrites(0)
	last := notificationOfSize(200)
	mustWrite(last)
	readLines(t, pr, last)
}

// TestCancelWithdrawsQueued: a request still waiting whole in the queue is
// taken back by Cancel: the peer never gets it (not even a cancel) and its
// Waiter is never called; one being written is forgotten and the peer
// told; one answered already is not taken back.
func TestCancelWithdrawsQueued(t *testing.T) {
	t.Parallel()
	watchdog(t, deadlockTimeout)
	w, pr, entered := stuckWriter(t)
	told := make(chan string, 10)
	var c *Conn
	c = NewConn(nil, w, Options{Queue: true, Cancelled: func(via *Lane, id json.RawMessage, _ error) {
		if via != c.Lane() {
			t.Errorf("Cancelled through another lane than the request's")
		}
		told <- string(id)
	}})
	answers := make(map[string]chan error)
	send := func(method string) []byte {
		t.Helper()
		ch := make(chan error, 1)
		answers[method] = ch
		id, err := c.Go(method, nil, func(_ *Message, err error) { ch <- err })
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	writing := send("writing")
	await(t, entered, "the flusher to write")
	withdrawn := send("withdrawn")
	kept := send("kept")
	if err := c.Notify("last", nil); err != nil {
		t.Fatal(err)
	}

	if !c.Cancel(withdrawn, errBoom) {
		t.Fatal("Cancel did not take back a queued request")
	}
	if c.Cancel(withdrawn, errBoom) {
		t.Error("Cancel took back the same request twice")
	}
	if c.Cancel([]byte(`"x"`), errBoom) || c.Cancel([]byte("99"), errBoom) {
		t.Error("Cancel took back requests never sent")
	}
	readLines(t, pr,
		requestLine(writing, "writing", nil),
		requestLine(kept, "kept", nil),
		AppendNotification(nil, "last", nil))
	c.WaitWrites(0)
	select {
	case id := <-told:
		t.Errorf("Cancelled told of %s, which the peer never got", id)
	default:
	}
	if !c.Cancel(kept, errBoom) {
		t.Error("Cancel did not take back a request written and unanswered")
	}
	if id := await(t, told, "Cancelled"); id != string(kept) {
		t.Errorf("Cancelled told of %s, want %s", id, kept)
	}

	c.Close(errBoom) // every call still pending fails; the taken back ones do not
	if err := await(t, answers["writing"], "writing"); !errors.Is(err, errBoom) {
		t.Errorf("call writing ended with %v, want %v", err, errBoom)
	}
	for _, m := range []string{"withdrawn", "kept"} {
		select {
		case err := <-answers[m]:
			t.Errorf("the Waiter of %s, taken back, was called: %v", m, err)
		default:
		}
	}
}

// TestLineQueue: lines come out oldest first whatever the pushes, pops
// and removals in between, with the array reused and compacted.
func TestLineQueue(t *testing.T) {
	t.Parallel()
	var q lineQueue
	var want []int64 // the model: ids in order
	next := int64(1)
	push := func(n int) {
		for range n {
			q.push(queuedLine{parts: [3][]byte{[]byte("x")}, id: next})
			want = append(want, next)
			next++
		}
	}
	pop := func(n int) {
		t.Helper()
		for range n {
			l, ok := q.pop()
			if !ok || l.id != want[0] {
				t.Fatalf("pop = %d, %v; want %d", l.id, ok, want[0])
			}
			want = want[1:]
		}
	}
	push(10)
	pop(7)
	push(30) // compacts or grows past the spent front
	if l, ok := q.remove(want[5]); !ok || l.id != want[5] {
		t.Fatalf("remove(%d) = %d, %v", want[5], l.id, ok)
	}
	want = append(want[:5:5], want[6:]...)
	if _, ok := q.remove(1); ok {
		t.Fatal("removed a line already popped")
	}
	pop(len(want))
	if l, ok := q.pop(); ok {
		t.Fatalf("pop of an empty queue = %d", l.id)
	}
	if q.head != 0 || len(q.lines) != 0 {
		t.Fatalf("a drained queue has head %d and %d lines", q.head, len(q.lines))
	}
}
