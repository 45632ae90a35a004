package share

import "io"

// The Client as the aggregator sees it: a started process (stdio.Started)
// whose stdin takes whole lines (write) and whose stdout is what the
// backend's reader passes on.

// Stdin takes the aggregator's lines.
func (c *Client) Stdin() io.WriteCloser { return clientStdin{c} }

// Stdout gives the server's lines.
func (c *Client) Stdout() io.Reader     { return c.outR }
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says how it ended; valid after Done.
func (c *Client) Err() error {
	<-c.done
	return c.err
}

// Stop ends the connection (the holder keeps the server for others, or
// for its idle time) and waits for nothing more.
func (c *Client) Stop() error {
	c.mu.Lock()
	c.stopping = true
	b := c.cur
	c.cur = nil
	c.mu.Unlock()
	if b != nil {
		b.close()
	}
	c.end(nil)
	return nil
}

// Terminate is Stop: the server is the holder's to end.
func (c *Client) Terminate() error { return c.Stop() }

type clientStdin struct{ c *Client }

// Write takes whole lines; a part of a line waits for its end.
func (i clientStdin) Write(p []byte) (int, error) {
	c := i.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.buf = append(c.buf, p...)
	for {
		n := indexNL(c.buf)
		if n < 0 {
			break
		}
		line := c.buf[:n+1]
		if err := c.write(line); err != nil {
			return 0, err
		}
		c.buf = c.buf[n+1:]
	}
	if len(c.buf) == 0 {
		c.buf = nil
	} else {
		c.buf = bytesClone(c.buf)
	}
	return len(p), nil
}

func (i clientStdin) Close() error { return i.c.Stop() }

func indexNL(b []byte) int {
	for i, x := range b {
		if x == '\n' {
			return i
		}
	}
	return -1
}

func bytesClone(b []byte) []byte { return append([]byte(nil), b...) }
