package jsonrpc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// gatedWriter holds its first Write until release is closed; every write
// is recorded.
type gatedWriter struct {
	rec     recordingWriter
	entered chan struct{}
	release chan struct{}
	first   bool
}

func newGatedWriter() *gatedWriter {
	return &gatedWriter{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedWriter) Write(b []byte) (int, error) {
	if !g.first {
		g.first = true // only the flusher writes: no race
		close(g.entered)
		<-g.release
	}
	return g.rec.Write(b)
}

// TestLanesTakeTurns: the queue serves the lanes with lines waiting one
// line each in turn, each lane's lines in order, so a lane with many lines
// holds the others back by one line at most.
func TestLanesTakeTurns(t *testing.T) {
	t.Parallel()
	w := newGatedWriter()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	a, b := c.NewLane(), c.NewLane()
	a.Write([]byte("x0\n"))
	await(t, w.entered, "the first write")
	for _, l := range []struct {
		lane *Lane
		line string
	}{{a, "a1"}, {a, "a2"}, {a, "a3"}, {b, "b1"}, {b, "b2"}, {&c.lane, "c1"}} {
		if err := l.lane.Write([]byte(l.line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	close(w.release)
	c.WaitWrites(0)
	var got []string
	for _, r := range w.rec.recorded() {
		got = append(got, strings.TrimSuffix(string(r), "\n"))
	}
	if want := "x0 a1 b1 c1 a2 b2 a3"; strings.Join(got, " ") != want {
		t.Errorf("written %q, want %q", strings.Join(got, " "), want)
	}
}

// TestWaitRoom: WaitRoom returns once the lane's own lines are written
// down to the limit, whatever other lanes hold; at once when its lane has
// room; and when stop closes.
func TestWaitRoom(t *testing.T) {
	t.Parallel()
	w := newGatedWriter()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	flooder, other := c.NewLane(), c.NewLane()
	flooder.Write([]byte("first\n"))
	await(t, w.entered, "the first write")
	flooder.Write([]byte(strings.Repeat("f", 100) + "\n"))
	other.Write([]byte(strings.Repeat("o", 1000) + "\n"))

	other2 := c.NewLane()
	returned := make(chan struct{})
	go func() { other2.WaitRoom(10, nil); close(returned) }()
	await(t, returned, "WaitRoom of an empty lane")

	stop := make(chan struct{})
	stopped := make(chan struct{})
	go func() { other.WaitRoom(10, stop); close(stopped) }()
	close(stop)
	await(t, stopped, "WaitRoom after stop")

	waited := make(chan struct{})
	go func() { flooder.WaitRoom(50, nil); close(waited) }()
	select {
	case <-waited:
		t.Fatal("WaitRoom returned while 100 bytes of its lane were waiting")
	default:
	}
	close(w.release)
	await(t, waited, "WaitRoom once its lane was written")
	c.WaitWrites(0)
}

// TestWriteQueuesPartsWhereTheyLie: a line written in parts waits in the
// queue as those parts: a large payload is not copied.
func TestWriteQueuesPartsWhereTheyLie(t *testing.T) {
	t.Parallel()
	w := newGatedWriter()
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	c.Write([]byte("first\n"))
	await(t, w.entered, "the first write")
	result := []byte(`{"big":"` + strings.Repeat("x", 1<<16) + `"}`)
	parts := ResultParts([]byte("1"), result)
	if err := c.WriteParts(parts[:]...); err != nil {
		t.Fatal(err)
	}
	c.wmu.Lock()
	queued := c.lane.lines.lines[c.lane.lines.head].parts[1]
	c.wmu.Unlock()
	if !aliases(result, queued) {
		t.Error("the queued result is a copy")
	}
	close(w.release)
	c.WaitWrites(0)
	rec := w.rec.recorded()
	if got := string(rec[len(rec)-3]) + string(rec[len(rec)-2]) + string(rec[len(rec)-1]); got != string(AppendResult(nil, []byte("1"), result)) {
		t.Errorf("the line written from parts differs: %.80q", got)
	}
}

// TestWrittenToldOfEachLine: with Queue, Options.Written is told the size
// of each line once it is written, in order, parts counted whole.
func TestWrittenToldOfEachLine(t *testing.T) {
	t.Parallel()
	sizes := make(chan int, 10)
	var rec recordingWriter
	c := NewConn(strings.NewReader(""), &rec, Options{Queue: true, Written: func(n int) {
		if len(rec.recorded()) == 0 {
			t.Error("Written was told before the line was written")
		}
		sizes <- n
	}})
	c.Write([]byte("{}\n"))
	parts := ResultParts([]byte("7"), []byte(`"abc"`))
	c.WriteParts(parts[:]...)
	c.WaitWrites(0)
	close(sizes)
	var got []int
	for n := range sizes {
		got = append(got, n)
	}
	want := []int{3, len(AppendResult(nil, []byte("7"), []byte(`"abc"`)))}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Written told %v, want %v", got, want)
	}
}

// TestPushFront: a line pushed to the front comes out before every line
// that waits, whether the array has room before its head or not.
func TestPushFront(t *testing.T) {
	t.Parallel()
	var q lineQueue
	for i := int64(1); i <= 3; i++ {
		q.push(queuedLine{id: i})
	}
	q.pushFront(queuedLine{id: 10}) // no room before the head
	q.pop()                         // 10
	q.pop()                         // 1
	q.pushFront(queuedLine{id: 20}) // room before the head
	var got []int64
	for l, ok := q.pop(); ok; l, ok = q.pop() {
		got = append(got, l.id)
	}
	if want := []int64{20, 2, 3}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("popped %v, want %v", got, want)
	}
}

// TestRequestsNeverSentEndWithTheWriteError: when a queued write fails,
// the requests still waiting in the queue (and the one being written) are
// ended with that error at once, not left pending until the connection
// closes.
func TestRequestsNeverSentEndWithTheWriteError(t *testing.T) {
	t.Parallel()
	w := &blockedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	c := NewConn(strings.NewReader(""), w, Options{Queue: true})
	errs := make(chan error, 2)
	for range 2 {
		if _, err := c.Go("m", nil, func(_ *Message, err error) { errs <- err }); err != nil {
			t.Fatal(err)
		}
	}
	await(t, w.entered, "the first write")
	close(w.release) // it fails
	for range 2 {
		if err := await(t, errs, "a request's end"); !errors.Is(err, errBoom) {
			t.Errorf("a request never sent ended with %v, want the write's error", err)
		}
	}
}

// TestCancelThroughALane: a request sent through a lane other than the
// Conn's own is taken back from that lane's queue, and a cancel of one
// written already is told with that lane, so that a notice written there
// follows the request.
func TestCancelThroughALane(t *testing.T) {
	t.Parallel()
	w := newGatedWriter()
	vias := make(chan *Lane, 2)
	c := NewConn(strings.NewReader(""), w, Options{Queue: true, Cancelled: func(via *Lane, _ json.RawMessage, _ error) { vias <- via }})
	l := c.NewLane()
	l.Write([]byte("x0\n"))
	await(t, w.entered, "the first write")
	queued, err := l.GoParts("queued", AnswerFunc(func(*Message, error) { t.Error("the queued request's Waiter was called") }))
	if err != nil {
		t.Fatal(err)
	}
	if !l.Cancel(queued, nil) {
		t.Fatal("the lane did not take back its queued request")
	}
	close(w.release)
	c.WaitWrites(0)
	if got := len(w.rec.recorded()); got != 1 {
		t.Errorf("%d lines written, want only x0", got)
	}
	written, _ := l.GoParts("written", AnswerFunc(func(*Message, error) {}))
	c.WaitWrites(0)
	if !l.Cancel(written, nil) {
		t.Fatal("the lane did not take back its written request")
	}
	if via := await(t, vias, "Cancelled"); via != l {
		t.Error("Cancelled was told another lane than the request's")
	}
}
