package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrQueueFull is wrapped by the error of a write refused because the
// write queue holds Options.MaxQueued bytes already.
var ErrQueueFull = errors.New("write queue full")

// Write writes one complete line (ending in a newline) in a single Write,
// or, with Options.Queue, without blocking. With Options.MaxQueued, a line
// the queue has no room for is refused with an error wrapping
// ErrQueueFull.
func (c *Conn) Write(line []byte) error {
	return c.write(line, 0)
}

// WriteParts writes one line made of parts, the last ending in a newline,
// as Write does, but each part from where it lies: a large payload is not
// copied into a line. No other line comes between the parts. With
// Options.Queue the parts are joined into one line first.
func (c *Conn) WriteParts(parts ...[]byte) error {
	if c.opts.Queue {
		return c.Write(bytes.Join(parts, nil))
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for _, p := range parts {
		if _, err := c.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// write is Write for the request id (0 for any other line), so that a
// queued request can be withdrawn.
func (c *Conn) write(line []byte, id int64) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if !c.opts.Queue {
		_, err := c.w.Write(line)
		return err
	}
	if c.werr != nil {
		return c.werr
	}
	if c.flushDone == nil { // nothing queued
		if c.direct != nil {
			n, err := c.direct(line)
			if err != nil {
				c.werr = err
				return err
			}
			if n == len(line) {
				return nil
			}
			if n > 0 {
				line, id = line[n:], 0 // partly written: no longer to be withdrawn
			}
		}
		c.flushDone = make(chan struct{})
		go c.flush()
	} else if limit := c.opts.MaxQueued; limit > 0 && c.queued > 0 && c.queued+len(line) > limit {
		return fmt.Errorf("%w: %d bytes queued, a line of %d, limit %d", ErrQueueFull, c.queued, len(line), limit)
	}
	c.queue.push(queuedLine{line, id})
	c.queued += len(line)
	return nil
}

// flush writes the queue, oldest line first, until it is empty or a write
// fails. It takes one line at a time: the others stay in the queue, where
// Withdraw can still find them.
func (c *Conn) flush() {
	c.wmu.Lock()
	for c.werr == nil {
		next, ok := c.queue.pop()
		if !ok {
			break
		}
		c.wmu.Unlock()
		_, err := c.w.Write(next.line)
		c.wmu.Lock()
		c.queued -= len(next.line)
		if err != nil {
			c.werr = err
		}
	}
	c.queue.clear() // after a failed write: never to be written
	c.queued = 0
	close(c.flushDone)
	c.flushDone = nil
	c.wmu.Unlock()
}

// WaitWrites waits until the goroutine that writes queued lines (with
// Options.Queue), if one is writing, has stopped: because the queue is
// empty or a write failed. Closing the writer ends a write that waits.
func (c *Conn) WaitWrites() {
	c.wmu.Lock()
	done := c.flushDone
	c.wmu.Unlock()
	if done != nil {
		<-done
	}
}

// Withdraw takes back a request sent by Go or GoParts under id while it
// waits whole in the write queue (Options.Queue): the line is removed, so
// the peer never gets it, and the call is forgotten, so its Waiter is
// never called. It reports whether it did so. It does nothing and returns
// false when the line is written, being written or partly written, or was
// never queued; and returns false too when the connection closed first
// (the Waiter then has its error).
func (c *Conn) Withdraw(id []byte) bool {
	n, ok := ownID(id)
	if !ok {
		return false
	}
	c.wmu.Lock()
	line, found := c.queue.remove(n)
	if found {
		c.queued -= len(line.line)
	}
	c.wmu.Unlock()
	return found && c.Forget(id)
}
