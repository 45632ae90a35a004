package jsonrpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrClosed is wrapped by the error of every call on a closed connection.
var ErrClosed = errors.New("connection closed")

// Conn is a JSON-RPC connection over a reader and a writer carrying one
// message per line.
type Conn struct {
	r    io.Reader
	opts Options

	wmu       sync.Mutex // protects w, the lanes' queues, turns, queued, flushDone, werr and writing
	w         io.Writer
	lane      Lane           // the Conn's own lane (Write, Notify, requests)
	turns     []*Lane        // with Options.Queue: the lanes with lines waiting, in the order they are served
	queued    int            // with Options.Queue: bytes accepted, not yet written, of every lane
	flushDone chan struct{}  // while a flusher goroutine writes the queue: closed when it stops
	werr      error          // with Options.Queue: the error that stopped writing
	bounded   *boundedWriter // with Options.Queue: writes bounded in time, nil if w has none
	writing   bool           // a write at once (writeAtOnce) is under way, without wmu
	atOnce    chan struct{}  // while writing, if WaitWrites waits for it: closed when it ends

	lastID atomic.Int64

	mu      sync.Mutex       // protects pending and err
	pending map[int64]Waiter // calls awaiting an answer, by id
	err     error            // why the connection closed; nil while open

	done chan struct{} // closed by Close
}

// NewConn returns a connection reading r and writing w. Call Run to start
// reading.
func NewConn(r io.Reader, w io.Writer, opts Options) *Conn {
	c := &Conn{r: r, w: w, opts: opts, pending: make(map[int64]Waiter), done: make(chan struct{})}
	c.lane.c = c
	if opts.Queue {
		c.bounded = newBoundedWriter(w)
	}
	return c
}

// Run reads lines until the reader ends, dispatching each, and then closes
// the connection with the reader's error (io.EOF at a clean end). A line
// over Options.MaxLineSize is not dispatched but told to
// Options.Oversized, which may end Run with an error wrapping
// ErrLineTooLong; without a MaxLineSize, a line may be of any length.
func (c *Conn) Run() error {
	lines := newLineReader(c.r, c.opts.MaxLineSize)
	for {
		line, long, err := lines.next()
		if long != nil {
			if lerr := c.tooLong(long); lerr != nil {
				err = lerr
			}
		} else if len(line) > 0 {
			answered := c.dispatch(line, lines.plainPieces())
			if c.opts.Pace != nil {
				c.opts.Pace(answered)
			}
		}
		if err != nil {
			c.Close(err)
			return err
		}
	}
}

// tooLong tells Options.Oversized about a line over the limit and returns
// the error that ends Run, or nil to go on.
func (c *Conn) tooLong(long *longLine) error {
	var hookErr error
	if c.opts.Oversized != nil {
		if hookErr = c.opts.Oversized(long.head, long.size); hookErr == nil {
			return nil
		}
	}
	err := fmt.Errorf("%w: %d bytes, over MaxLineSize %d", ErrLineTooLong, long.size, c.opts.MaxLineSize)
	if hookErr != nil {
		err = fmt.Errorf("%w: %w", err, hookErr)
	}
	return err
}

// dispatch hands one line to the hook it is for, and reports whether it
// was the answer to a pending call. A line with invalid UTF-8 is rewritten
// first (see ToValidUTF8), so that the hooks only ever see valid UTF-8;
// only a line in which the scanner met a byte >= 0x80, or that it refused,
// is checked at all. p (maybe nil) says which pieces of the line are plain.
func (c *Conn) dispatch(line []byte, p *plainPieces) (answered bool) {
	line = trimSpace(line)
	if len(line) == 0 {
		return false
	}
	if line[0] == '[' && c.opts.Batch != nil {
		nonASCII, ok := validate(line)
		if nonASCII || !ok {
			line = ToValidUTF8(line) // still the same JSON, or still not JSON
		}
		if !ok {
			c.invalid(line, nil, notJSON(line))
			return false
		}
		elems, err := Elements(line)
		if err != nil {
			c.invalid(line, nil, fmt.Errorf("%w: %v", ErrInvalid, err))
			return false
		}
		c.opts.Batch(elems)
		return false
	}
	m, nonASCII, err := parse(line, p)
	if nonASCII || err != nil {
		// A refused line was maybe not scanned to its end: check it all.
		if fixed, changed := toValidUTF8(line); changed {
			line = fixed
			m, _, err = parse(line, nil) // another line: p is not of it
		}
	}
	if err == nil && c.opts.CheckDuplicates {
		if key, dup := DuplicateMember(line); dup {
			if m.IsResponse() {
				m.Duplicate = key
			} else {
				err = fmt.Errorf("%w: %q", ErrDuplicateMember, key)
			}
		}
	}
	if err != nil {
		c.Broken(m, err)
		c.invalid(line, m, err)
		return false
	}
	if m.IsResponse() {
		return c.Deliver(m)
	}
	if c.opts.Handle != nil {
		c.opts.Handle(m)
	}
	return false
}

func (c *Conn) invalid(line []byte, m *Message, err error) {
	if c.opts.Invalid != nil {
		c.opts.Invalid(line, m, err)
	}
}

// Deliver hands a response to the call waiting for it and reports whether
// one was; an unmatched response goes to Options.Unmatched. Run calls it for
// every response line; a caller that reads responses elsewhere (inside a
// batch) calls it too.
func (c *Conn) Deliver(m *Message) bool {
	w, ok := c.take(m.ID)
	if ok {
		w.Answered(m, nil)
	} else if c.opts.Unmatched != nil {
		c.opts.Unmatched(m)
	}
	return ok
}

// Waiter receives the answer to a call made with Go or GoParts. Answered is
// called exactly once, with the answer (on the reader goroutine) or with
// the error that closed the connection (on the goroutine closing it),
// unless Forget takes the call back first; it must not block.
type Waiter interface {
	Answered(resp *Message, err error)
}

// AnswerFunc is a function that is a Waiter.
type AnswerFunc func(resp *Message, err error)

// Answered calls f.
func (f AnswerFunc) Answered(resp *Message, err error) { f(resp, err) }

// Broken takes a message that Parse refused with err (m as Parse returned
// it): a broken answer to a pending call still ends that call, with an
// error saying why. Run calls it for every line; a caller that parses
// messages elsewhere (inside a batch) calls it too.
func (c *Conn) Broken(m *Message, err error) {
	if m == nil || m.Method != "" || m.ID == nil {
		return
	}
	if w, ok := c.take(m.ID); ok {
		w.Answered(nil, fmt.Errorf("invalid answer to request %s: %w", m.ID, err))
	}
}

// Go sends a request with a fresh id and returns the id; done gets the
// answer as Waiter.Answered says. When Go fails, done is not called, and
// when it succeeds done is called exactly once.
func (c *Conn) Go(method string, params []byte, done func(*Message, error)) ([]byte, error) {
	return c.GoParts(method, AnswerFunc(done), params)
}

// GoParts is Go with a Waiter (an object the caller has already: no
// closure to allocate per call) and params given as parts to join (a
// member of the caller's params replaced, say), so that they are copied
// once, straight into the line. One part of inPlacePart bytes or more
// is not copied at all: it is written from where it lies, so the caller
// must not change the parts once it has given them.
func (c *Conn) GoParts(method string, w Waiter, params ...[]byte) ([]byte, error) {
	return c.lane.GoParts(method, w, params...)
}

// GoParts is Conn.GoParts with the request written through the lane.
func (l *Lane) GoParts(method string, w Waiter, params ...[]byte) ([]byte, error) {
	c := l.c
	size := len(requestPrefix) + len(method) + 40
	for _, p := range params {
		size += len(p)
	}
	// The id is written into the line and kept as a sub-slice of it: one
	// allocation for both.
	big := inPlace(params)
	if big >= 0 {
		size -= len(params[big])
	}
	line := make([]byte, 0, size)
	line = append(line, requestPrefix...)
	n := c.lastID.Add(1)
	line = strconv.AppendInt(line, n, 10)
	id := line[len(requestPrefix):len(line):len(line)]
	q := queuedLine{id: n}
	if big < 0 {
		q.parts[0] = appendMethodParams(line, method, params...)
	} else { // the line around the large part, and the part as it lies
		head := AppendString(append(line, `,"method":`...), method)
		head = appendJoined(append(head, `,"params":`...), params[:big]...)
		tail := appendJoined(nil, params[big+1:]...)
		q.parts = [3][]byte{head, params[big], append(tail, "}\n"...)}
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[n] = w
	c.mu.Unlock()
	if err := c.write(q, l); err != nil && c.Forget(id) {
		return nil, err
	}
	// Sent, or the connection closed while it was written and has given
	// w its error already: either way w is told, once.
	return id, nil
}

// inPlacePart is the size from which a part of a request's params is
// written from where it lies rather than copied into the line (GoParts):
// the copy of a huge request would cost the reader of the line that
// carried it, and whatever is queued behind it, tens of milliseconds.
const inPlacePart = 1 << 20

// inPlace is the index of the one part of params that is written from
// where it lies, or -1 when none is that large (or more than one is: the
// line has three parts).
func inPlace(params [][]byte) int {
	big := -1
	for i, p := range params {
		if len(p) >= inPlacePart {
			if big >= 0 {
				return -1
			}
			big = i
		}
	}
	return big
}

// appendJoined appends parts to b.
func appendJoined(b []byte, parts ...[]byte) []byte {
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// Forget takes back a call made with Go, so that its done is never called,
// and reports whether it was still pending. A late answer to it goes to
// Options.Unmatched.
func (c *Conn) Forget(id []byte) bool {
	_, ok := c.take(id)
	return ok
}

// take removes the pending call id and returns its Waiter.
func (c *Conn) take(id []byte) (Waiter, bool) {
	n, ok := ownID(id)
	if !ok {
		return nil, false // not an id this connection sends
	}
	return c.takeN(n)
}

// takeN is take for the id n.
func (c *Conn) takeN(n int64) (Waiter, bool) {
	c.mu.Lock()
	w, ok := c.pending[n]
	delete(c.pending, n)
	c.mu.Unlock()
	return w, ok
}

// ownID reads an id of the kind Go sends, a positive decimal integer, as
// a JSON value (Key): a peer that writes 7 as 7.0 or 7e0 answers the call
// 7; the string "7" is another id.
func ownID(id []byte) (int64, bool) {
	if n, ok := plainOwnID(id); ok {
		return n, true
	}
	k, ok := numberKey(trimSpace(id))
	if !ok {
		return 0, false
	}
	return plainOwnID([]byte(k[1:])) // "n7"
}

// plainOwnID reads an id of the kind Go sends written as Go writes it.
func plainOwnID(id []byte) (int64, bool) {
	if len(id) == 0 || len(id) > 18 || id[0] < '1' || id[0] > '9' {
		return 0, false
	}
	var n int64
	for _, c := range id {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

type answer struct {
	m   *Message
	err error
}

// Call sends a request with a fresh id and waits for its answer: a response
// message whose Result or Error is set. It fails when the connection closes
// first, and when ctx ends first, taken back by Lane.Cancel.
func (c *Conn) Call(ctx context.Context, method string, params []byte) (*Message, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err // never sent, so nothing to cancel
	}
	ch := make(chan answer, 1)
	id, err := c.Go(method, params, func(m *Message, err error) { ch <- answer{m, err} })
	if err != nil {
		return nil, err
	}
	select {
	case a := <-ch:
		return a.m, a.err
	case <-ctx.Done():
		if !c.Cancel(id, context.Cause(ctx)) {
			a := <-ch // the answer won the race
			return a.m, a.err
		}
		return nil, context.Cause(ctx)
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params []byte) error {
	return c.Write(AppendNotification(nil, method, params))
}

// Reply answers the request id with a raw result.
func (c *Conn) Reply(id, result []byte) error {
	return c.Write(AppendResult(nil, id, result))
}

// ReplyError answers the request id with a raw error object.
func (c *Conn) ReplyError(id, errObj []byte) error {
	return c.Write(AppendError(nil, id, errObj))
}

// Close closes the connection because of cause: pending and later calls fail
// with an error wrapping ErrClosed and cause. It does not close the reader
// or the writer, which belong to the caller. Only the first cause counts.
func (c *Conn) Close(cause error) {
	if cause == nil {
		cause = io.EOF
	}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = fmt.Errorf("%w: %w", ErrClosed, cause)
	err, pending := c.err, c.pending
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	for _, w := range pending {
		w.Answered(nil, err)
	}
}

// Done is closed when the connection closes.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection closed, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
