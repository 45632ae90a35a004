package aggregator

import (
	"context"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/shape"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the route of a client's request, top to bottom: admit (read
// it into a call, in the in-flight table), route (served here, or routed
// to one server by its method's entry), adapt to the server's era, send,
// answer (the server's, on its reader), adapt to the client's era, write.
// What a method does on the way is in its entry (methods.go); how a
// request is sent and taken back, in send.go.

// clientRequest takes a request read on a line of its own.
func (a *Aggregator) clientRequest(m *jsonrpc.Message) {
	if c := a.admit(m, nil, 0); c != nil {
		a.serve(c)
	}
}

// admit reads a request of the client (on its own, b nil, or element slot
// of a batch) into a call and enters it in the in-flight table, on the
// reader goroutine, so that the order of lines decides. It answers at once,
// and returns nil, an id in use and what needs no child.
func (a *Aggregator) admit(m *jsonrpc.Message, b *batch, slot int) *call {
	c := newCall(a, m, b, slot)
	if b != nil && !b.claim(c.key) || !a.client.inflight.add(c.key, c) {
		c.write(errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(m.ID)+" is already used by a request in flight"))
		return nil
	}
	bad := a.refuse(c)
	if bad == nil && c.spec.accept != nil {
		bad = c.spec.accept(a, c)
	}
	if bad != nil {
		c.answer(bad)
		return nil
	}
	return c
}

// refuse answers what needs no child: unknown methods, params that are not
// an object, initialize in a batch, and requests before the session began.
// A modern request is checked (and the first one begins the session).
func (a *Aggregator) refuse(c *call) []byte {
	s := a.client.state()
	switch {
	case c.spec == nil && (s.era != eraModern || eras.RemovedInModern[c.method] == ""):
		return errorLine(c.id, jsonrpc.CodeMethodNotFound, "Method not found: "+c.method)
	case s.era == eraLegacy && eras.OnlyModern[c.method]:
		return errorLine(c.id, jsonrpc.CodeMethodNotFound, "Method not found: "+c.method+" (it belongs to protocol "+eras.ModernVersion+"; this connection was initialized with "+s.version+")")
	case c.batch != nil && c.method == "initialize":
		return errorLine(c.id, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch")
	case s.era == eraModern, s.era == eraUnknown && c.method != "initialize" && (c.method == "server/discover" || isModern(&c.p)):
		return a.acceptModern(c, s)
	case c.spec.early:
		return nil
	case !s.received:
		return errorLine(c.id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+c.method+" before initialize")
	case !c.p.object:
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params must be an object")
	}
	return nil
}

// serve has the call served by its method, once the servers it needs are
// up (its method's await starts them and waits): on the reader goroutine
// when the method is quick and they are up already, else on a goroutine
// of its own, which the client's cancel can stop.
func (a *Aggregator) serve(c *call) {
	if c.batch != nil && c.isCancelled() { // by a notification later in its batch
		c.answer(nil)
		return
	}
	needsNone := c.spec.await == nil || a.allUp()
	if c.spec.quick && (needsNone || a.listed(c)) {
		a.run(a.life.ctx, c)
		return
	}
	ctx, release := c.local(a.life.ctx)
	served := a.life.goServe(func() {
		defer release()
		if needsNone || c.spec.await(a, ctx, c) {
			a.run(ctx, c)
			return
		}
		c.answer(nil)
	})
	if !served {
		release()
		c.answer(nil)
	}
}

// listed reports whether a call routed by name names a tool or prompt
// that a running server listed: a call to a server that is up is served
// without waiting for the others to start. (What is not listed yet waits,
// and is then looked up again.)
func (a *Aggregator) listed(c *call) bool {
	name, ok := c.name()
	if !ok {
		return false
	}
	r := a.reg.Load()
	switch c.method {
	case "tools/call":
		_, ok = r.tools[string(name)]
	case "prompts/get":
		_, ok = r.prompts[string(name)]
	default:
		ok = false
	}
	return ok
}

// run serves a call: answers it here, or routes it to its child and
// forwards it there.
func (a *Aggregator) run(ctx context.Context, c *call) {
	if c.spec.serve != nil {
		c.answer(c.spec.serve(a, ctx, c))
		return
	}
	t, bad := c.spec.route(a, ctx, c)
	if t.child == nil {
		c.answer(bad)
		return
	}
	a.forward(c, t)
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

// forward sends the call to its target under a fresh id of the child's
// connection: the one path of every routed client request (the
// aggregator's own requests, fan-outs and input rounds reach a server's
// connection directly; docs/architecture.md lists them). The
// answer comes back to Answered on the child's reader goroutine.
func (a *Aggregator) forward(c *call, t target) {
	c.child = t.child
	if t.child.up != nil {
		c.via.Store(t.child.up)
	}
	params, send := a.toServerEra(c, t)
	if !send {
		return
	}
	if c.p.progressTo != nil && !t.child.progress.add(jsonrpc.Key(c.p.progressTo), c) {
		// The client reused the token of a call still in flight to this
		// child: that call's entry lets the progress up, and only it may
		// remove the entry.
		c.p.progressTo = nil
	}
	via := t.child.Conn().Lane()
	id, cancelled, err := c.send(via, c.method, c, params...)
	if err != nil {
		c.Answered(nil, err)
		return
	}
	if cancelled != nil {
		c.takeBack(via, id, cancelled)
	}
}

// Answered is the child's answer (or the error that ended the child's
// connection), on the goroutine that received it. An answer with a member
// twice, or one a client could not read (package shape), becomes an error
// naming the child. The answer to an
// exchange goes to the call waiting for it, if any (input_modern.go).
func (c *call) Answered(resp *jsonrpc.Message, err error) {
	if resp != nil && resp.Duplicate != "" {
		resp, err = nil, c.child.DuplicateAnswer(resp.Duplicate)
	} else if resp != nil {
		if problem := shape.Answer(resp); problem != "" {
			resp, err = nil, c.child.MalformedAnswer(problem)
		}
	}
	if x := c.exchange; x != nil {
		if w := x.finish(resp, err); w != nil {
			w.deliver(resp, err)
		}
		return
	}
	c.deliver(resp, err)
}

// deliver sends the child's answer to the client under the client's id,
// adapted to the client's era and through the method's modifyResponse hook
// if it has one. A child that is gone is named in the error.
func (c *call) deliver(resp *jsonrpc.Message, err error) {
	if err != nil {
		c.child.Explain(err, func(err error) {
			c.answer(errorLine(c.id, jsonrpc.CodeInternalError, err.Error()))
		})
		return
	}
	resp, ok := c.toClientEra(resp)
	if !ok {
		return
	}
	if resp.Error != nil {
		c.child.noteRequiredElicitations(resp.Error)
	} else {
		// Its task ties, if any, are its own tasks' (under the ids the
		// client knows), or taken out.
		if tied := c.a.relay.tiesToClient(c.child, resp.Result); !sameSlice(tied, resp.Result) {
			own := *resp
			own.Result = tied
			resp = &own
		}
	}
	modify := c.spec.modifyResponse
	if c.p.augmented && c.spec.taskCreated != nil {
		modify = c.spec.taskCreated
	}
	if modify != nil {
		if line := modify(c, resp); line != nil {
			c.answer(line)
			if c.task != nil { // statuses the child sent before this answer
				c.child.releaseStatuses(c.task)
			}
			return
		}
	}
	if resp.Error == nil && len(resp.Result) >= largeResult {
		c.answerLarge(resp.Result)
		return
	}
	c.answer(responseLine(c.id, resp))
}

// answer takes the call out of the in-flight table and, if it was still
// there, writes line. nil means no answer is due from the caller: a call
// the client cancelled gets none, any other the shutdown error.
func (c *call) answer(line []byte) {
	if !c.settle() {
		return
	}
	if line == nil && !c.isCancelled() {
		line = errorLine(c.id, jsonrpc.CodeInternalError, errShuttingDown.Error())
	}
	c.write(line)
}

// largeResult is the size from which a child's result is written to the
// client from where it lies (answerLarge) rather than copied into an
// answer line: the copy would double the aggregator's memory for it.
const largeResult = 64 << 10

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

// settle takes the call out of the in-flight table and ends its progress,
// and reports whether it was still there: whether the answer is the
// caller's to write.
func (c *call) settle() bool {
	if !c.a.client.inflight.remove(c.key, c) {
		return false
	}
	c.forgetProgress()
	if c.logLevel != "" && c.child != nil && c.child.era().logsFollowCalls() {
		c.child.logging.Add(-1)
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
