package share

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// The session side: a shared server as the aggregator sees it, a started
// process ([stdio.Started]) whose stdin and stdout are a connection to
// the holder.
//
// It reads every line it passes, once, into what it must know: the
// requests in flight, and what the server must have seen (the
// initialize request and notifications/initialized, or the
// server/discover probe; the log level; the subscriptions). If the
// connection ends without the holder's ClosingMethod (the holder died),
// every request in flight is answered with an error at once, and the next
// line the aggregator writes connects anew (starting a new holder, or, if
// that fails, the server itself: said once in the log), replays what the
// server must have seen, swallowing the answers, and then goes. The
// aggregator above never sees a crash.

// DialOptions configure Dial.
type DialOptions struct {
	Dir    string // the socket directory
	Header Header
	// StartHolder starts a holder (detached) and returns once it listens
	// or has found another holder running.
	StartHolder func() error
	// StartLocal starts the server in the session itself, when no holder
	// can be reached after the first one ended.
	StartLocal func() (stdio.Started, error)
	// Logf logs one line.
	Logf func(format string, args ...any)
	// Wait bounds the whole connect, the holder's start included; 0
	// means 10 s.
	Wait time.Duration
	// ReplayWait bounds the wait for the answers to what is replayed;
	// 0 means 60 s.
	ReplayWait time.Duration
}

// HolderPid is the pid of the holder a dialled connection reached.
type HolderPid interface{ HolderPid() int }

// Dial connects to the holder for the server opts.Header names, starting
// the holder if none listens.
func Dial(opts DialOptions) (*Client, error) {
	if opts.Wait <= 0 {
		opts.Wait = 10 * time.Second
	}
	if opts.ReplayWait <= 0 {
		opts.ReplayWait = 60 * time.Second
	}
	opts.Header.V = HeaderVersion
	c := &Client{opts: opts, done: make(chan struct{}), inflight: map[string]flight{}, replays: map[string]chan *jsonrpc.Message{}, subs: map[string][]byte{}}
	c.outR, c.outW = io.Pipe()
	b, err := c.connect()
	if err != nil {
		return nil, err
	}
	c.cur = b
	go c.read(b)
	return c, nil
}

// Client is a shared server as the aggregator sees it.
type Client struct {
	opts     DialOptions
	outR     *io.PipeReader // the aggregator's stdout
	outW     *io.PipeWriter // written by the backend's reader
	done     chan struct{}
	doneOnce sync.Once
	err      error // how it ended; set before done closes

	wmu sync.Mutex // held by a write to the backend, and a reconnect
	buf []byte     // a line not yet whole; under wmu

	mu       sync.Mutex                       // protects the fields below
	cur      *backend                         // nil: ended, connect on the next write
	inflight map[string]flight                // the aggregator's requests in flight, by the key of the id
	replays  map[string]chan *jsonrpc.Message // replayed requests: key of the id -> where the answer goes
	asked    map[string]bool                  // the server's requests of this backend (by key of id)
	initReq  []byte                           // the aggregator's initialize line
	inited   bool                             // notifications/initialized was sent
	probe    []byte                           // the aggregator's server/discover line, when modern
	modern   bool                             // its probe was answered with a DiscoverResult
	probeID  string                           // key of the probe's id
	level    []byte                           // the params of the last logging/setLevel
	subs     map[string][]byte                // subscribed URIs -> the raw uri
	seq      int                              // replay ids
	told     bool                             // the local fallback was logged
	stopping bool
}

// flight is a request of the aggregator in flight: its id, and the
// backend it went to (whose end fails it).
type flight struct {
	id []byte
	b  *backend
}

// backend is one connection to the holder, or a server run locally.
type backend struct {
	r     io.Reader
	w     io.Writer
	close func()
	pid   int // the holder's
	local stdio.Started
	// Under Client.mu: leaving, the client left it (its roots changed);
	// over, it ended and what was in flight on it was answered.
	leaving, over bool
}

// HolderPid is the pid of the holder the client is connected to, 0 when none.
func (c *Client) HolderPid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return 0
	}
	return c.cur.pid
}

// connect connects to the holder, starting one when none listens, and
// exchanges header and ack.
func (c *Client) connect() (*backend, error) {
	if err := PrepareDir(c.opts.Dir); err != nil {
		return nil, err
	}
	sock := filepath.Join(c.opts.Dir, SocketName)
	deadline := time.Now().Add(c.opts.Wait)
	pause := 5 * time.Millisecond
	var lastErr error
	for started := 0; ; {
		nc, err := net.Dial("unix", sock)
		if err == nil {
			b, err := c.handshake(nc)
			if err == nil || !errors.Is(err, errHolderGone) {
				return b, err
			}
			lastErr = err
		} else {
			lastErr = err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("share: no holder at %s: %w", sock, lastErr)
		}
		if started < 3 && c.opts.StartHolder != nil {
			// Returns once the new holder listens, or found the lock
			// taken (another is starting or exiting: retried below).
			started++
			if err := c.opts.StartHolder(); err != nil {
				return nil, fmt.Errorf("share: start the holder: %w", err)
			}
			continue
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// errHolderGone: the holder closed the connection before its ack (it was
// exiting).
var errHolderGone = errors.New("the holder closed the connection")

// handshake writes the header and reads the ack.
func (c *Client) handshake(nc net.Conn) (*backend, error) {
	nc.SetDeadline(time.Now().Add(c.opts.Wait))
	if err := writeLine(nc, &c.opts.Header); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %v", errHolderGone, err)
	}
	br := bufio.NewReader(nc)
	var ack Ack
	if err := readLine(br, &ack); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %v", errHolderGone, err)
	}
	nc.SetDeadline(time.Time{})
	if ack.Error != "" {
		nc.Close()
		return nil, fmt.Errorf("share: the holder (pid %d): %s", ack.Pid, ack.Error)
	}
	return &backend{r: br, w: nc, close: func() { nc.Close() }, pid: ack.Pid}, nil
}

// read passes the backend's lines to the aggregator until it ends.
func (c *Client) read(b *backend) {
	br := bufio.NewReaderSize(b.r, 64<<10)
	var ended *closing
	var rerr error
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if cl := c.fromServer(b, line); cl != nil {
				ended = cl
			}
		}
		if err != nil {
			rerr = err
			break
		}
	}
	b.close()
	c.mu.Lock()
	if c.cur == b {
		c.cur = nil
	}
	stopping := c.stopping
	leaving := b.leaving
	b.over = true
	var owed [][]byte
	for k, f := range c.inflight {
		if f.b == b {
			owed = append(owed, f.id)
			delete(c.inflight, k)
		}
	}
	for k, ch := range c.replays {
		close(ch)
		delete(c.replays, k)
	}
	c.mu.Unlock()
	if stopping {
		return
	}
	why := "the holder of shared servers ended"
	switch {
	case ended != nil && ended.ServerEnded:
		c.end(fmt.Errorf("server %q: %s", c.opts.Header.Key, ended.Reason))
		return
	case ended != nil:
		why = "the holder closed the connection: " + ended.Reason
	case leaving:
		why = "the session's roots changed: it left the process it shared"
	case b.local != nil:
		why = "the server ended"
		c.end(fmt.Errorf("server %q: %s", c.opts.Header.Key, b.local.Err()))
		return
	case rerr != nil && rerr != io.EOF:
		why += ": " + rerr.Error()
	}
	if ended == nil && !leaving {
		c.opts.Logf("server %q: %s (pid %d); connecting anew on the next request", c.opts.Header.Key, why, b.pid)
	}
	for _, id := range owed {
		c.outW.Write(jsonrpc.AppendError(nil, id, errObj(codeInternal, why+"; try again")))
	}
}

// fromServer takes a line of the backend: answers to replays are
// swallowed, the holder's closing taken in, the rest passed on.
func (c *Client) fromServer(b *backend, line []byte) *closing {
	m, err := jsonrpc.Parse(line)
	if err == nil {
		switch {
		case m.IsResponse():
			k := jsonrpc.Key(m.ID)
			c.mu.Lock()
			ch, replayed := c.replays[k]
			delete(c.replays, k)
			if c.inflight[k].b == b {
				delete(c.inflight, k)
			}
			if k == c.probeID && m.Error == nil {
				if _, ok := jsonrpc.Member(m.Result, "supportedVersions"); ok {
					c.modern = true
				}
			}
			c.mu.Unlock()
			if replayed {
				ch <- &jsonrpc.Message{Error: clone(m.Error), Result: clone(m.Result)}
				return nil
			}
		case m.Method == ClosingMethod:
			var cl closing
			if json.Unmarshal(m.Params, &cl) == nil {
				return &cl
			}
			return &closing{Reason: "closed"}
		case m.IsRequest():
			c.mu.Lock()
			if c.asked == nil {
				c.asked = map[string]bool{}
			}
			c.asked[jsonrpc.Key(m.ID)] = true
			c.mu.Unlock()
		}
	}
	c.outW.Write(line)
	return nil
}

// end ends the client: the process as the aggregator sees it ended.
func (c *Client) end(err error) {
	c.doneOnce.Do(func() {
		c.err = err
		c.outW.CloseWithError(io.EOF)
		close(c.done)
	})
}

// write takes a line of the aggregator: noted, and written to the
// backend (connecting anew first if it ended).
func (c *Client) write(line []byte) error {
	m, perr := jsonrpc.Parse(line)
	if taken, left, err := c.note(line, m, perr); taken {
		if left != nil {
			left.close()
		}
		return err
	}
	return c.send(line, m, perr)
}

// note records what the line m (parsed with perr) tells of what the server
// must have seen and of what is in flight; taken: the line goes no
// further (the client stopped, an answer to a server's request the new
// backend never made, or the session leaving its process as its roots
// changed: left is the backend it left, for write to close), and err is
// write's.
func (c *Client) note(line []byte, m *jsonrpc.Message, perr error) (taken bool, left *backend, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return true, nil, os.ErrClosed
	}
	if perr == nil {
		switch {
		case m.IsResponse():
			if !c.asked[jsonrpc.Key(m.ID)] {
				return true, nil, nil // for a backend that has ended: the new server never asked
			}
			delete(c.asked, jsonrpc.Key(m.ID))
		case m.IsRequest():
			switch m.Method {
			case "initialize":
				c.initReq = clone(line)
			case "server/discover":
				if c.initReq == nil {
					c.probe, c.probeID = clone(line), jsonrpc.Key(m.ID)
				}
			case "logging/setLevel":
				c.level = clone(m.Params)
			case "resources/subscribe", "resources/unsubscribe":
				uri, _ := jsonrpc.Member(m.Params, "uri")
				if m.Method == "resources/subscribe" {
					c.subs[jsonrpc.Key(uri)] = clone(uri)
				} else {
					delete(c.subs, jsonrpc.Key(uri))
				}
			}
		case m.Method == "notifications/initialized":
			c.inited = true
		case m.Method == "notifications/roots/list_changed":
			// Its roots changed: the process it shares is keyed by the old
			// ones. It leaves it: the next line connects anew, keyed by
			// the new roots (the holder asks them). What it had in flight
			// gets an error.
			b := c.cur
			if b != nil && b.pid != 0 {
				b.leaving = true
				c.cur = nil
				return true, b, nil
			}
		case m.Method == "notifications/cancelled":
			id, _ := jsonrpc.Member(m.Params, "requestId")
			delete(c.inflight, jsonrpc.Key(id))
		}
	}
	return false, nil, nil
}

// send writes the line m (parsed with perr) to the backend, connecting
// anew when it has ended, three times at most; a request that cannot go
// is answered with an error.
func (c *Client) send(line []byte, m *jsonrpc.Message, perr error) error {
	var b *backend
	for try := 0; ; try++ {
		c.mu.Lock()
		b = c.cur
		c.mu.Unlock()
		if b == nil {
			var err error
			if try == 3 {
				err = errors.New("the connection ended at once, three times")
			} else {
				b, err = c.reconnect()
			}
			if err != nil {
				if perr == nil && m.IsRequest() {
					c.outW.Write(jsonrpc.AppendError(nil, m.ID, errObj(codeInternal, "the holder of shared servers ended, and the server could not be reached again: "+err.Error())))
				}
				return nil
			}
		}
		c.mu.Lock()
		if b.over { // it ended meanwhile, its debts paid: connect anew
			c.mu.Unlock()
			continue
		}
		var key string
		if perr == nil && m.IsRequest() {
			key = jsonrpc.Key(m.ID)
			c.inflight[key] = flight{clone(m.ID), b}
		}
		c.mu.Unlock()
		if _, err := b.w.Write(line); err == nil {
			return nil
		}
		// The connection has ended: the line did not reach the holder.
		// Unless the backend's reader has answered it already, it goes
		// again, on a new connection.
		c.mu.Lock()
		again := true
		if key != "" {
			f, ok := c.inflight[key]
			again = ok && f.b == b
			if again {
				delete(c.inflight, key)
			}
		}
		if c.cur == b {
			c.cur = nil
		}
		c.mu.Unlock()
		b.close()
		if !again {
			return nil
		}
	}
}
