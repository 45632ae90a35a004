package aggregator

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

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

	modern      bool      // a request of the modern era (its _meta checked)
	logLevel    string    // the modern request's logLevel, if any
	exchange    *exchange // a modern call to a legacy child that may take input
	progressAt  []byte    // a retry of an exchange: the token the child's progress carries (the first call's)...
	progressAs  []byte    // ...and the retry's own, which the client gets instead
	childParams []byte    // a legacy call's params as a modern child got them

	child *child // the child serving it; set before it is sent there
	// via is child's lane into the client's queue, where its answer goes:
	// set with child, and read by the shutdown too, on another goroutine.
	via  atomic.Pointer[jsonrpc.Lane]
	task *task // for tasks/get, tasks/result, tasks/cancel: the task

	sendState // its id at the child, the client's cancel

	localMu   sync.Mutex              // protects stopLocal and localGen
	stopLocal context.CancelCauseFunc // while it is routed or served here
	localGen  int                     // counts the contexts local made
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

// newCall reads a request of the client at the border.
func newCall(a *Aggregator, m *jsonrpc.Message, b *batch, slot int) *call {
	return &call{
		a: a, id: m.ID, key: jsonrpc.Key(m.ID), method: m.Method, spec: clientMethods[m.Method],
		params: m.Params, p: readParams(m.Params), batch: b, slot: slot,
	}
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

// forgetProgress ends the progress the call's child may send: its token
// leaves the child's table.
func (c *call) forgetProgress() {
	switch {
	case c.child == nil:
	case c.progressAs != nil:
		c.child.progress.remove(jsonrpc.Key(c.progressAt), c)
	case c.p.progressTo != nil:
		c.child.progress.remove(jsonrpc.Key(c.p.progressTo), c)
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

// cancel is the client's notifications/cancelled for this call. A call
// served here stops; a call sent to a child is forgotten and the child is
// told, under its own id; a call being sent is cancelled as soon as it is.
func (c *call) cancel(cause error) {
	// Recorded first: a call served here that stops on it must find
	// itself cancelled, and so answer nothing.
	via, id := c.sendState.cancel(cause)
	c.localMu.Lock()
	stop := c.stopLocal
	c.localMu.Unlock()
	if stop != nil {
		stop(cause)
	}
	if id != nil {
		c.takeBack(via, id, cause)
	}
}

// takeBack takes back the call sent to the child through via under id
// (jsonrpc.Lane.Cancel): when the answer has not come yet, the call ends
// without one. A call waiting for an exchange ends with it.
func (c *call) takeBack(via *jsonrpc.Lane, id []byte, cause error) {
	if c.exchange != nil {
		c.exchange.cancel(c, via, id, cause)
		return
	}
	if via.Cancel(id, cause) && c.settle() {
		c.write(nil)
	}
}
