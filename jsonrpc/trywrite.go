package jsonrpc

import (
	"errors"
	"io"
	"os"
	"time"
)

// deadlineWriter is a writer with write deadlines: a pipe or socket that
// Go's poller watches (an *os.File from os.Pipe on unix, or made pollable:
// stdio.Pollable; a net.Conn).
type deadlineWriter interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}

// tryWriteFor bounds the writes a queued Conn makes at once, on the
// writer's goroutine, while nothing waits in its queue: a peer that reads
// keeps up, and the line is written with no goroutine handing it on; from
// a peer that does not, the caller waits this long at most, and what is
// left of the line waits in the queue for the queue's goroutine. One
// deadline serves every such write until it has passed (a deadline per
// write would set a timer, and wake the poller, per line).
const tryWriteFor = time.Millisecond

// boundedWriter writes to a deadlineWriter within tryWriteFor.
type boundedWriter struct {
	w     deadlineWriter
	until time.Time // the deadline set on w; zero: none
}

// write writes what w takes of b before the deadline; err wraps
// os.ErrDeadlineExceeded when time ran out first, and is
// errors.ErrUnsupported when w has no deadlines after all.
func (bw *boundedWriter) write(b []byte) (int, error) {
	if now := time.Now(); !now.Before(bw.until) {
		bw.until = now.Add(tryWriteFor)
		if err := bw.w.SetWriteDeadline(bw.until); err != nil {
			return 0, errors.ErrUnsupported // a file Go's poller does not watch
		}
	}
	return bw.w.Write(b)
}

// unbound lifts the deadline, for the queue's goroutine, whose writes wait
// as long as the peer makes them.
func (bw *boundedWriter) unbound() {
	if !bw.until.IsZero() {
		bw.w.SetWriteDeadline(time.Time{})
		bw.until = time.Time{}
	}
}

// newBoundedWriter returns a boundedWriter for w, or nil when w has no
// write deadlines.
func newBoundedWriter(w io.Writer) *boundedWriter {
	if dw, ok := w.(deadlineWriter); ok {
		return &boundedWriter{w: dw}
	}
	return nil
}

// tryWrite writes what it can of the line at once, without c.wmu (see
// writeAtOnce), and reports how many bytes it wrote and whether it wrote
// them all, leaving in l what is left to write; err is an error of the
// writer (the peer is gone), or errors.ErrUnsupported when it has no
// deadlines after all.
func (c *Conn) tryWrite(l *queuedLine) (written int, all bool, err error) {
	retried := false
	for i, p := range l.parts {
		for len(p) > 0 {
			n, werr := c.bounded.write(p)
			written += n
			p = p[n:]
			switch {
			case werr == nil:
				continue
			case errors.Is(werr, os.ErrDeadlineExceeded) && written == 0 && !retried:
				retried = true // the deadline passed before the write: once more, under a new one
				continue
			case errors.Is(werr, os.ErrDeadlineExceeded):
			default:
				l.parts[i] = p
				return written, false, werr // errors.ErrUnsupported: see writeAtOnce
			}
			l.parts[i] = p
			return written, false, nil
		}
		l.parts[i] = nil
	}
	return written, true, nil
}
