package aggregator

import (
	"context"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the route of a client's request, top to bottom: admit (read
// it into a call, in the in-flight table), route (served here, or routed
// to one server by its method's entry), adapt to the server's era, send.
// The server's answer comes back on its reader to answer.go, which adapts
// it to the client's era and writes it (call.go). What a method does on
// the way is in its entry (methods.go); how a request is sent and taken
// back, in send.go.

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
	if b != nil && !b.claim(c.key) || !a.client.calls.Add(c.key, c) {
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
	s := a.client.began.Load()
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
	if c.batch != nil && c.IsCancelled() { // by a notification later in its batch
		c.answer(nil)
		return
	}
	needsNone := c.spec.await == nil || a.allUp()
	if c.spec.quick && (needsNone || a.listed(c)) {
		a.run(a.life.Context(), c)
		return
	}
	ctx, release := c.local(a.life.Context())
	served := a.life.Go(func() {
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
	if c.p.progressTo != nil && !t.child.progress.Add(jsonrpc.Key(c.p.progressTo), c) {
		// The client reused the token of a call still in flight to this
		// child: that call's entry lets the progress up, and only it may
		// remove the entry.
		c.p.progressTo = nil
	}
	via := t.child.Conn().Lane()
	id, cancelled, err := c.Send(via, c.method, c, params...)
	if err != nil {
		c.Answered(nil, err)
		return
	}
	if cancelled != nil {
		c.takeBack(via, id, cancelled)
	}
}

// newCall reads a request of the client at the border.
func newCall(a *Aggregator, m *jsonrpc.Message, b *batch, slot int) *call {
	return &call{
		a: a, id: m.ID, key: jsonrpc.Key(m.ID), method: m.Method, spec: clientMethods[m.Method],
		params: m.Params, p: readParams(m.Params), batch: b, slot: slot,
	}
}
