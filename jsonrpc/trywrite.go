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

// tryWrite writes what it can of the line at once, with c.wmu held and
// nothing queued, and reports how many bytes it wrote and whether it
// wrote them all; err is an error of the writer (the peer is gone).
func (c *Conn) tryWrite(l *queuedLine) (written int, all bool, err error) {
	for i, p := range l.parts {
		for len(p) > 0 {
			n, werr := c.bounded.write(p)
			written += n
			p = p[n:]
			switch {
			case werr == nil:
			case errors.Is(werr, errors.ErrUnsupported):
				c.bounded = nil // never again: the queue's goroutine writes
				return written, false, nil
			case errors.Is(werr, os.ErrDeadlineExceeded):
				if n == 0 && written == 0 && i == 0 {
					// The deadline passed between the check and the
					// write: one more try, under a new one.
					if n, werr = c.bounded.write(p); werr == nil {
						written += n
						p = p[n:]
						continue
					}
					written += n
				}
				l.parts[i] = p
				return written, false, nil
			default:
				return written, false, werr
			}
		}
		l.parts[i] = nil
	}
	return written, true, nil
}
