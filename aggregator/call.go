package aggregator

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is a client's request in flight (call): what routing reads of
// it once (paramsView), its method's row in the method table (method,
// client_methods.go), its target server (target), and how its one answer is
// written (answer, settle, write). It holds state and what works on that
// state alone: the paths that route and answer a call are route.go and
// answer.go.

// call is one client request from the moment it is read until it is
// answered: one object for its whole life. While it is owed an answer it
// sits in the client's in-flight table; whoever takes it out writes its one
// answer (write), or none when the client cancelled it.
type call struct {
	a      *Aggregator
	id     []byte // the client's id, as it wrote it
	key    string // jsonrpc.Key(id), its key in the in-flight table
	method string
	spec   *method // nil for a method nobody serves
	params []byte  // as the client sent them; nil when absent
	p      paramsView
	batch  *batch // nil: answered on a line of its own
	slot   int    // its place in batch

	modern   bool   // a request of the modern era (its _meta checked)
	logLevel string // the modern request's logLevel, if any
	// countedIn is the legacy child whose logging the call counts in
	// (toServerEra): settle uncounts it there, once.
	countedIn   atomic.Pointer[child]
	exchange    *exchange // a modern call to a legacy child that may take input
	progressAt  []byte    // a retry of an exchange: the token the child's progress carries (the first call's)...
	progressAs  []byte    // ...and the retry's own, which the client gets instead
	childParams []byte    // a legacy call's params as a modern child got them

	child *child // the child serving it; set before it is sent there
	// via is child's lane into the client's queue, where its answer goes:
	// set with child, and read by the shutdown too, on another goroutine.
	via  atomic.Pointer[jsonrpc.Lane]
	task *task // for tasks/get, tasks/result, tasks/cancel: the task

	inflight.Request // its id at the child, the client's cancel

	localMu   sync.Mutex              // protects stopLocal and localGen
	stopLocal context.CancelCauseFunc // while it is routed or served here
	localGen  int                     // counts the contexts local made
}

// method says how the aggregator serves one client request. Exactly one of
// serve and route is set.
type method struct {
	// early: may come before initialize.
	early bool
	// await starts the servers the request needs and waits for them
	// (startup.go), before it is served; false when the client cancelled
	// or the aggregator is shutting down. nil: it needs none.
	await func(*startup, context.Context, *call) bool
	// quick: never blocks once the servers it needs are up, so it is then
	// served on the client's reader goroutine, with no goroutine or
	// hand-off.
	quick bool
	// accept runs on the reader goroutine before the request is served, so
	// that the requests read after it see its effect (initialize).
	accept func(*Aggregator, *call) []byte
	// input: the server may ask the client for input while it serves the
	// request (childRequests' input), which a modern client answers
	// through input_required (input_modern.go).
	input bool

	// serve answers here: locally, or by asking several children and
	// merging their answers. nil means no answer is due (the client
	// cancelled, or the aggregator is shutting down).
	serve func(*Aggregator, context.Context, *call) []byte
	// route picks the one child that serves the request and the params it
	// gets (a target with a child); or it returns the error to answer.
	// Neither: the client cancelled, or the aggregator is shutting down.
	route func(*Aggregator, context.Context, *call) (target, []byte)

	// modifyResponse, the hook of forward in the manner of
	// httputil.ReverseProxy, may rewrite the child's answer: it returns
	// the line to send the client, or nil to send the answer as it is
	// (nil, the common case: the answer is spliced under the client's id).
	modifyResponse func(c *call, resp *jsonrpc.Message) []byte
	// taskCreated is modifyResponse for a request the client augmented
	// with a task ("task" in its params): only such a call's answer may
	// create one, and only its answer goes through the task tables.
	taskCreated func(c *call, resp *jsonrpc.Message) []byte
}

// target is where a route sends a request: the child, and the params it
// gets as parts to join (the client's params with the child's own name
// spliced in, say), so that they are copied once, straight into the line.
type target struct {
	child *child
	parts [3][]byte
}

// to returns a target sending params to c unchanged.
func to(c *child, params []byte) target {
	return target{child: c, parts: [3][]byte{params}}
}

// paramsView is what routing needs from a request's params, read in one
// pass when the request is read: where the name and the URI are, and the
// members the methods look into.
type paramsView struct {
	object     bool // params is absent or an object
	augmented  bool // it has "task": the client asks for a task
	names      int  // how many "name" members
	nameStart  int  // the offsets of the first one's value in params
	nameEnd    int
	uris       int // how many "uri" members
	uri        []byte
	cursor     []byte
	ref        []byte
	refs       int    // how many "ref" members
	state      []byte // requestState
	meta       []byte // _meta
	progressTo []byte // _meta.progressToken
}

func readParams(params []byte) paramsView {
	p := paramsView{object: params == nil || params[0] == '{'}
	if params == nil || !p.object {
		return p
	}
	jsonrpc.EachMember(params, func(key []byte, start, end int) bool {
		switch string(key) {
		case "name":
			if p.names == 0 {
				p.nameStart, p.nameEnd = start, end
			}
			p.names++
		case "uri":
			if p.uris == 0 {
				p.uri = params[start:end]
			}
			p.uris++
		case "cursor":
			p.cursor = params[start:end]
		case "ref":
			if p.refs == 0 {
				p.ref = params[start:end]
			}
			p.refs++
		case "_meta":
			p.meta = params[start:end]
		case "task":
			p.augmented = true
		case "requestState":
			p.state = params[start:end]
		}
		return true
	})
	if p.meta != nil {
		p.progressTo, _ = jsonrpc.Member(p.meta, "progressToken")
	}
	return p
}

// name returns the request's one params.name, decoded, without copying
// when it is plain ASCII.
func (c *call) name() ([]byte, bool) {
	if c.p.names != 1 {
		return nil, false
	}
	return jsonrpc.StringBytes(c.params[c.p.nameStart:c.p.nameEnd])
}

// uriString returns the request's one params.uri.
func (c *call) uriString() (string, bool) {
	if c.p.uris != 1 {
		return "", false
	}
	return jsonrpc.String(c.p.uri)
}

// answer takes the call out of the in-flight table and, if it was still
// there, writes line. nil means no answer is due from the caller: a call
// the client cancelled gets none, any other the shutdown error.
func (c *call) answer(line []byte) {
	if !c.settle() {
		return
	}
	if line == nil && !c.IsCancelled() {
		line = errorLine(c.id, jsonrpc.CodeInternalError, errShuttingDown.Error())
	}
	c.write(line)
}

// answerLarge is answer with a child's large result, written under the
// client's id without being copied; in a batch, whose answer is one line,
// it is copied as any other.
func (c *call) answerLarge(result []byte) {
	if c.batch != nil {
		c.answer(jsonrpc.AppendResult(nil, c.id, result))
		return
	}
	if !c.settle() {
		return
	}
	parts := jsonrpc.ResultParts(c.id, result)
	c.lane().WriteParts(parts[:]...)
}

// largeResult is the size from which a child's result is written to the
// client from where it lies (answerLarge) rather than copied into an
// answer line: the copy would double the aggregator's memory for it.
const largeResult = 64 << 10

// settle takes the call out of the in-flight table and ends its progress,
// and reports whether it was still there: whether the answer is the
// caller's to write.
func (c *call) settle() bool {
	if !c.a.client.calls.Remove(c.key, c) {
		return false
	}
	c.forgetProgress()
	if counted := c.countedIn.Swap(nil); counted != nil {
		counted.logging.Add(-1)
	}
	return true
}

// write sends the call's one answer, once it is out of the in-flight
// table: on a line of its own, or into its batch (nil: nothing to say).
func (c *call) write(line []byte) {
	if c.batch != nil {
		c.batch.put(c.slot, line)
		return
	}
	if line != nil {
		c.lane().Write(line)
	}
}

// lane is where the call's answer goes into the client's queue: its
// child's lane once it was sent to one, else the aggregator's own.
func (c *call) lane() *jsonrpc.Lane {
	if l := c.via.Load(); l != nil {
		return l
	}
	return c.a.client.conn.Lane()
}

// sameSlice reports whether a and b are the same bytes in memory (not a
// copy).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// forgetProgress ends the progress the call's child may send: its token
// leaves the child's table.
func (c *call) forgetProgress() {
	switch {
	case c.child == nil:
	case c.progressAs != nil:
		c.child.progress.Remove(jsonrpc.Key(c.progressAt), c)
	case c.p.progressTo != nil:
		c.child.progress.Remove(jsonrpc.Key(c.p.progressTo), c)
	}
}

// local makes the context of a call routed or served here, which the
// client's cancel ends, and returns it with the function that releases it.
func (c *call) local(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	c.localMu.Lock()
	c.stopLocal = cancel
	c.localGen++
	gen := c.localGen
	c.localMu.Unlock()
	return ctx, func() {
		c.localMu.Lock()
		if c.localGen == gen { // not a later context's (input rounds after routing)
			c.stopLocal = nil
		}
		c.localMu.Unlock()
		cancel(nil)
	}
}
