package aggregator

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// What goes to the client: one queue in front of its stdout (the client's
// jsonrpc.Conn, with a lane per source), how much one source may have
// waiting there, and the end of the session's output.

// clientOutput is the client's end of the output: its first failed write
// (a client that went away, closing the pipe) starts a shutdown.
type clientOutput struct {
	w      io.Writer
	once   sync.Once
	err    error         // the first write error; set before broken closes
	broken chan struct{} // closed at the first write error
}

func (o *clientOutput) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) { // a write bounded in time is no failure
		o.once.Do(func() {
			o.err = err
			close(o.broken)
		})
	}
	return n, err
}

// SetWriteDeadline sets the write deadline of the client's output, when it
// has deadlines (a pipe or socket Go's poller watches: stdio.Pollable), so
// that a line to the client is written at once when the client keeps up
// (jsonrpc.Options.Queue).
func (o *clientOutput) SetWriteDeadline(t time.Time) error {
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}

// largeLine is the size from which a line written to the client is given
// back to the system at once (releaseLarge).
const largeLine = 16 << 20

// releaseLarge collects the garbage once a line of largeLine bytes or more
// has been written to the client: Go's collector would let the heap grow
// to twice what was live before it took back a buffer that large, and a
// server's next large result, read meanwhile, would come on top. (Three
// 100 MiB results in a row peaked at 407 MiB without it.)
func releaseLarge(size int) {
	if size >= largeLine {
		runtime.GC()
	}
}

// laneRoom is how many bytes of one source's lines (a child's, or the
// aggregator's own answers to the client's requests) may wait in the
// client's queue before that source's reader waits for them to be
// written: a server that floods the client is slowed down to the pace at
// which the client reads, and holds no more than this, or its one last
// message, in memory. The queue serves the sources in turn, a line each,
// so a flood delays another server's answer by one line at most.
const laneRoom = 1 << 20

// clientRoom is laneRoom for the aggregator's own answers to the client's
// requests: past it, the client's requests are read no more until it
// reads its answers. It is larger, so that a client that sends many
// requests (tools/list answers are large) before it reads is seldom held;
// one that never reads its answers ends up waiting on its own writes.
const clientRoom = 16 << 20
