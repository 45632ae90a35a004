package jsonrpc

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// ErrQueueFull is wrapped by the error of a write refused because the
// write queue holds Options.MaxQueued bytes already.
var ErrQueueFull = errors.New("write queue full")

// Lane is one source of lines into a Conn. With Options.Queue, the
// goroutine that writes the queue serves the lanes that have lines waiting
// in turn, one line of each: a source that writes a lot delays the lines
// of the others by at most one of its own, and the lines of one lane keep
// their order. Without Options.Queue a lane's lines are written at once,
// as the Conn's are. The Conn's own Write, Notify, Reply and requests go
// through its first lane; NewLane makes more. A Lane's methods are safe
// for concurrent use.
type Lane struct {
	c      *Conn
	lines  lineQueue     // guarded by c.wmu
	queued int           // bytes of its lines accepted, not yet written; guarded by c.wmu
	inTurn bool          // it is in c.turns; guarded by c.wmu
	room   chan struct{} // while WaitRoom waits: closed when a line of it is written; guarded by c.wmu
}

// Lane returns the Conn's own lane.
func (c *Conn) Lane() *Lane { return &c.lane }

// NewLane returns a new lane into c.
func (c *Conn) NewLane() *Lane { return &Lane{c: c} }

// Write writes one complete line (ending in a newline) in a single Write,
// or, with Options.Queue, without blocking. With Options.MaxQueued, a line
// the queue has no room for is refused with an error wrapping
// ErrQueueFull.
func (c *Conn) Write(line []byte) error { return c.lane.Write(line) }

// WriteParts writes one line made of parts, the last ending in a newline,
// as Write does; see Lane.WriteParts.
func (c *Conn) WriteParts(parts ...[]byte) error { return c.lane.WriteParts(parts...) }

// Write writes one complete line (ending in a newline) through the lane,
// as Conn.Write does.
func (l *Lane) Write(line []byte) error {
	return l.c.write(queuedLine{parts: [3][]byte{line}}, l)
}

// WriteParts writes one line made of up to three parts, the last ending in
// a newline, each from where it lies: a large payload is never copied into
// a line, and waits in the queue as the parts it is. No other line comes
// between the parts.
func (l *Lane) WriteParts(parts ...[]byte) error {
	var q queuedLine
	if len(parts) > len(q.parts) {
		return fmt.Errorf("jsonrpc: a line of %d parts, more than %d", len(parts), len(q.parts))
	}
	copy(q.parts[:], parts)
	return l.c.write(q, l)
}

// Notify sends a notification through the lane.
func (l *Lane) Notify(method string, params []byte) error {
	return l.Write(AppendNotification(nil, method, params))
}

// WaitRoom is Lane.WaitRoom for the Conn's own lane.
func (c *Conn) WaitRoom(limit int, stop <-chan struct{}) { c.lane.WaitRoom(limit, stop) }

// WaitRoom waits until fewer than limit bytes of the lane's lines wait to
// be written, writing has failed, or stop is closed. It is flow control
// for a source that reads what it writes from a stream of its own: it
// waits only for its own lines, never for another lane's.
func (l *Lane) WaitRoom(limit int, stop <-chan struct{}) {
	c := l.c
	for {
		c.wmu.Lock()
		if l.queued < limit || c.werr != nil {
			c.wmu.Unlock()
			return
		}
		if l.room == nil {
			l.room = make(chan struct{})
		}
		room := l.room
		c.wmu.Unlock()
		select {
		case <-room:
		case <-stop:
			return
		}
	}
}

// write writes or queues the line l of lane. While nothing is queued, the
// line is written at once, on the caller's goroutine, as far as the peer
// takes it within tryWriteFor; that write is made without c.wmu, so that
// the other lanes' lines are queued meanwhile instead of waiting for it,
// and whoever made it starts the queue's goroutine if lines are left.
func (c *Conn) write(l queuedLine, lane *Lane) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.opts.Queue {
		return l.writeTo(c.w)
	}
	if c.werr != nil {
		return c.werr
	}
	if c.flushDone == nil && !c.writing && c.bounded != nil {
		return c.writeAtOnce(l, lane)
	}
	size := l.size()
	if limit := c.opts.MaxQueued; limit > 0 && c.queued > 0 && c.queued+size > limit {
		return fmt.Errorf("%w: %d bytes queued, a line of %d, limit %d", ErrQueueFull, c.queued, size, limit)
	}
	c.enqueue(l, lane, false)
	if c.flushDone == nil && !c.writing { // a write at once under way starts it when it ends
		c.startFlush()
	}
	return nil
}

// writeAtOnce is write's bounded write, called and returning with c.wmu
// held, which it lets go while it writes.
func (c *Conn) writeAtOnce(l queuedLine, lane *Lane) error {
	c.writing = true
	c.wmu.Unlock()
	written, all, err := c.tryWrite(&l) // the only writer now: see c.writing
	c.wmu.Lock()
	c.writing = false
	if c.atOnce != nil {
		close(c.atOnce)
		c.atOnce = nil
	}
	if errors.Is(err, errors.ErrUnsupported) {
		c.bounded, err = nil, nil // never again: the queue's goroutine writes
	}
	if err != nil {
		c.werr = err
		c.dropQueued(err) // what was queued meanwhile will never be written
		return err
	}
	if !all {
		if written > 0 {
			l.id = 0 // partly written: no longer to be withdrawn
		}
		c.enqueue(l, lane, true) // its rest goes out before anything else
	}
	if len(c.turns) > 0 {
		c.startFlush()
	}
	return nil
}

// enqueue adds l to lane's queue, at its back, or, first, at the front of
// the queue, with c.wmu held.
func (c *Conn) enqueue(l queuedLine, lane *Lane, first bool) {
	size := l.size()
	lane.queued += size
	c.queued += size
	if !first {
		lane.lines.push(l)
		if !lane.inTurn {
			lane.inTurn = true
			c.turns = append(c.turns, lane)
		}
		return
	}
	lane.lines.pushFront(l)
	if lane.inTurn {
		c.turns = slices.DeleteFunc(c.turns, func(x *Lane) bool { return x == lane })
	}
	lane.inTurn = true
	c.turns = slices.Insert(c.turns, 0, lane)
}

// startFlush starts the queue's goroutine, with c.wmu held.
func (c *Conn) startFlush() {
	c.flushDone = make(chan struct{})
	if c.bounded != nil {
		c.bounded.unbound()
	}
	go c.flush()
}

// dropQueued empties every lane after a failed write, with c.wmu held.
// The requests among the lines dropped end with err, on a goroutine of
// their own (their Waiters are not called with the lock held).
func (c *Conn) dropQueued(err error) {
	var requests []int64
	for _, lane := range c.turns {
		for l, ok := lane.lines.pop(); ok; l, ok = lane.lines.pop() {
			if l.id != 0 {
				requests = append(requests, l.id)
			}
		}
		lane.queued, lane.inTurn = 0, false
		lane.wake()
	}
	clear(c.turns)
	c.turns = c.turns[:0]
	c.queued = 0
	c.failRequests(requests, err)
}

// failRequests ends the requests n, which will never be sent, with err, on
// a goroutine of its own: their Waiters are not called with c.wmu held.
func (c *Conn) failRequests(ns []int64, err error) {
	if len(ns) == 0 {
		return
	}
	go func() {
		for _, n := range ns {
			if w, ok := c.takeN(n); ok {
				w.Answered(nil, fmt.Errorf("not sent: %w", err))
			}
		}
	}()
}

// flush writes the queue until it is empty or a write fails: one line of
// each lane with lines waiting in turn. It takes one line at a time: the
// others stay in their lanes, where Cancel can still find them.
func (c *Conn) flush() {
	c.wmu.Lock()
	for c.werr == nil && len(c.turns) > 0 {
		lane := c.turns[0]
		next, ok := lane.lines.pop()
		c.turns = append(c.turns[:0], c.turns[1:]...)
		if lane.lines.len() > 0 {
			c.turns = append(c.turns, lane)
		} else {
			lane.inTurn = false
		}
		if !ok { // emptied by Cancel
			continue
		}
		c.wmu.Unlock()
		err := next.writeTo(c.w)
		size, id := next.size(), next.id
		next = queuedLine{} // let a large line go before the next is written
		if c.opts.Written != nil {
			c.opts.Written(size)
		}
		c.wmu.Lock()
		lane.queued -= size
		c.queued -= size
		lane.wake()
		if err != nil {
			c.werr = err
			if id != 0 { // (a partly written line has none)
				c.failRequests([]int64{id}, err)
			}
		}
	}
	c.dropQueued(c.werr) // after a failed write: never to be written
	close(c.flushDone)
	c.flushDone = nil
	c.wmu.Unlock()
}

// wake ends a WaitRoom's wait, with c.wmu held.
func (l *Lane) wake() {
	if l.room != nil {
		close(l.room)
		l.room = nil
	}
}

// WaitWrites waits until the goroutine that writes queued lines (with
// Options.Queue), and a write at once, if one is writing, have stopped,
// because the queue is empty or a write failed, and reports true; or for limit at most (0: no
// limit), and then reports false. Closing the writer ends a write that
// waits.
func (c *Conn) WaitWrites(limit time.Duration) bool {
	var timeout <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit)
		defer t.Stop()
		timeout = t.C
	}
	for {
		c.wmu.Lock()
		wait := c.flushDone
		if wait == nil && c.writing { // a write at once, which may leave lines for the queue
			if c.atOnce == nil {
				c.atOnce = make(chan struct{})
			}
			wait = c.atOnce
		}
		c.wmu.Unlock()
		if wait == nil {
			return true
		}
		select {
		case <-wait:
		case <-timeout:
			return false
		}
	}
}

// Cancel is Lane.Cancel for a request sent through the Conn's own lane.
func (c *Conn) Cancel(id []byte, cause error) bool { return c.lane.Cancel(id, cause) }

// Cancel takes back the request sent through the lane (by Go, GoParts or
// Call) under id: the one way a request is cancelled. While the request
// waits whole in the queue (Options.Queue) it is removed, and the peer
// never sees it; once it may have reached the peer it is forgotten, and
// Options.Cancelled is told, to tell the peer. Either way its Waiter is
// never called. Cancel reports whether the request was still owed an
// answer; when it was not (answered, failed with the connection, or taken
// back already), it does nothing: the Waiter has or will have its answer.
func (l *Lane) Cancel(id []byte, cause error) bool {
	c := l.c
	if l.withdraw(id) {
		return true
	}
	if !c.Forget(id) {
		return false
	}
	if c.opts.Cancelled != nil {
		c.opts.Cancelled(l, id, cause)
	}
	return true
}

// withdraw takes the request id out of the lane's queue while it waits
// there whole, and forgets it; it reports whether it did.
func (l *Lane) withdraw(id []byte) bool {
	n, ok := ownID(id)
	if !ok {
		return false
	}
	c := l.c
	c.wmu.Lock()
	line, found := l.lines.remove(n)
	if found {
		size := line.size()
		l.queued -= size
		c.queued -= size
	}
	c.wmu.Unlock()
	return found && c.Forget(id)
}

// writeTo writes the line's parts to w, in order.
func (l *queuedLine) writeTo(w io.Writer) error {
	for _, p := range l.parts {
		if len(p) == 0 {
			continue
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// size is the line's length in bytes.
func (l *queuedLine) size() int {
	return len(l.parts[0]) + len(l.parts[1]) + len(l.parts[2])
}
