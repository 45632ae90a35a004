// Package output is the client's end of the session's output: a writer
// whose first failed write (a client that went away, closing the pipe)
// starts the shutdown, that passes write deadlines on to a pipe that has
// them, and gives the memory of a large line back once it is written; and
// how much one source (a server, the aggregator's own answers) may have
// waiting in the client's queue (the client's jsonrpc.Conn, a lane per
// source) in front of it.
package output

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// Writer is the client's end of the output.
type Writer struct {
	w      io.Writer
	once   sync.Once
	err    error         // the first write error; set before broken closes
	broken chan struct{} // closed at the first write error
}

// New returns the client's end of an output that writes to w.
func New(w io.Writer) *Writer {
	return &Writer{w: w, broken: make(chan struct{})}
}

func (o *Writer) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) { // a write bounded in time is no failure
		o.once.Do(func() {
			o.err = err
			close(o.broken)
		})
	}
	return n, err
}

// Broken is closed at the first failed write.
func (o *Writer) Broken() <-chan struct{} { return o.broken }

// Err is the first failed write's error, once Broken is closed.
func (o *Writer) Err() error {
	select {
	case <-o.broken:
		return o.err
	default:
		return nil
	}
}

// SetWriteDeadline sets the write deadline of the client's output, when it
// has deadlines (a pipe or socket Go's poller watches: stdio.Pollable), so
// that a line to the client is written at once when the client keeps up
// (jsonrpc.Options.Queue).
func (o *Writer) SetWriteDeadline(t time.Time) error {
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}

// LargeLine is the size from which a line written to the client is given
// back to the system at once (ReleaseLarge).
const LargeLine = 16 << 20

// ReleaseLarge collects the garbage once a line of LargeLine bytes or more
// has been written to the client (jsonrpc.Options.Written): Go's collector
// would let the heap grow to twice what was live before it took back a
// buffer that large, and a server's next large result, read meanwhile,
// would come on top. (Three 100 MiB results in a row peaked at 407 MiB
// without it.)
func ReleaseLarge(size int) {
	if size >= LargeLine {
		runtime.GC()
	}
}

// LaneRoom is how many bytes of one source's lines (a child's, or the
// aggregator's own answers to the client's requests) may wait in the
// client's queue before that source's reader waits for them to be
// written: a server that floods the client is slowed down to the pace at
// which the client reads, and holds no more than this, or its one last
// message, in memory. The queue serves the sources in turn, a line each,
// so a flood delays another server's answer by one line at most.
const LaneRoom = 1 << 20

// ClientRoom is LaneRoom for the aggregator's own answers to the client's
// requests: past it, the client's requests are read no more until it
// reads its answers. It is larger, so that a client that sends many
// requests (tools/list answers are large) before it reads is seldom held;
// one that never reads its answers ends up waiting on its own writes.
const ClientRoom = 16 << 20
