package share

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The session side's way back after the holder ended: connect anew (or
// start the server here) and replay what the server must have seen.

// reconnect connects anew (or starts the server here) and replays what
// the server must have seen; under wmu.
func (c *Client) reconnect() (*backend, error) {
	b, err := c.connect()
	if err != nil {
		if c.opts.StartLocal == nil {
			return nil, err
		}
		p, lerr := c.opts.StartLocal()
		if lerr != nil {
			return nil, fmt.Errorf("%v; started here: %w", err, lerr)
		}
		c.mu.Lock()
		if !c.told {
			c.told = true
			c.opts.Logf("server %q: no holder of shared servers (%v): running it in this session", c.opts.Header.Key, err)
		}
		c.mu.Unlock()
		b = &backend{r: p.Stdout(), w: p.Stdin(), close: func() { p.Stop() }, local: p}
	}
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		b.close()
		return nil, os.ErrClosed
	}
	c.cur = b
	c.asked = nil
	initReq, inited, probe, modern, level := c.initReq, c.inited, c.probe, c.modern, c.level
	var subs [][]byte
	for _, u := range c.subs {
		subs = append(subs, u)
	}
	c.mu.Unlock()
	go c.read(b)
	if b.pid != 0 {
		c.opts.Logf("server %q: connected anew to the holder (pid %d)", c.opts.Header.Key, b.pid)
	}
	switch {
	case initReq != nil:
		if err := c.replay(b, initReq, true); err != nil {
			return nil, err
		}
		if inited {
			b.w.Write(jsonrpc.AppendNotification(nil, "notifications/initialized", nil))
		}
	case probe != nil && modern:
		if err := c.replay(b, probe, true); err != nil {
			return nil, err
		}
	}
	if level != nil {
		c.replay(b, jsonrpc.AppendNotification(nil, "logging/setLevel", level), false)
	}
	for _, u := range subs {
		p := append(append([]byte(`{"uri":`), u...), '}')
		c.replay(b, jsonrpc.AppendNotification(nil, "resources/subscribe", p), false)
	}
	return b, nil
}

// replay writes the request line (its id replaced by one of the
// client's own) and swallows its answer; wait: and waits for it.
func (c *Client) replay(b *backend, line []byte, wait bool) error {
	c.mu.Lock()
	c.seq++
	id := jsonrpc.AppendString(nil, "share-replay-"+strconv.Itoa(c.seq))
	ch := make(chan *jsonrpc.Message, 1)
	c.replays[jsonrpc.Key(id)] = ch
	c.mu.Unlock()
	line = bytesTrimNL(line)
	out, err := jsonrpc.ReplaceMember(line, "id", id)
	if err != nil {
		return err
	}
	if _, err := b.w.Write(append(out, '\n')); err != nil {
		return err
	}
	if !wait {
		return nil
	}
	t := time.NewTimer(c.opts.ReplayWait)
	defer t.Stop()
	select {
	case resp, ok := <-ch:
		if !ok {
			return errors.New("the connection ended during the replay")
		}
		if resp.Error != nil {
			return fmt.Errorf("replayed request refused: %s", resp.Error)
		}
		return nil
	case <-t.C:
		return errors.New("no answer to the replayed initialize in time")
	}
}

func bytesTrimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
