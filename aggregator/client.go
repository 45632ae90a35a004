package aggregator

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientSession is the client's side of the conversation: its connection,
// what it negotiated and declared, its requests in flight and the gate its
// children's early messages wait at.
type clientSession struct {
	conn     *jsonrpc.Conn // set in Serve before any child starts; nil in Check
	inflight idTable[*call]
	gate     clientGate

	mu   sync.Mutex // protects init
	init clientInit
}

// clientInit is what the start of the session settled: the client's
// initialize (legacy era) or its first modern request.
type clientInit struct {
	received bool   // the session has begun
	era      era    // eraUnknown until it has
	version  string // the protocol version agreed
	caps     clientCapabilities
	info     []byte // the client's clientInfo, raw; nil when it gave none
	logLevel string // the level of the client's last logging/setLevel
}

// begin records the start of the session; it reports false when it began
// already.
func (s *clientSession) begin(init clientInit) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.init.received {
		return false
	}
	init.received = true
	s.init = init
	return true
}

// isModern reports whether the session is in the modern era.
func (s *clientSession) isModern() bool {
	return s.state().era == eraModern
}

// setLogLevel records the level a legacy client asked for, which modern
// children get in the _meta of its requests.
func (s *clientSession) setLogLevel(level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init.logLevel = level
}

// state returns what the start of the session settled (the zero value
// before it began).
func (s *clientSession) state() clientInit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}

// clientMessage receives each request and notification of the client, on
// the reader goroutine.
func (a *Aggregator) clientMessage(m *jsonrpc.Message) {
	if m.IsNotification() {
		a.clientNotification(m)
		return
	}
	a.clientRequest(m)
}

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

// serve has the call served by its method: on the reader goroutine when
// the method is quick (and the children are ready, or the call's server
// is), else on a goroutine of its own, which the client's cancel can stop.
func (a *Aggregator) serve(c *call) {
	if c.batch != nil && c.isCancelled() { // by a notification later in its batch
		c.answer(nil)
		return
	}
	if c.spec.quick && (c.spec.early || a.ready.Load() || a.listed(c)) {
		a.run(a.ctx, c)
		return
	}
	ctx, release := c.local(a.ctx)
	served := a.goServe(func() {
		defer release()
		if c.spec.early || a.waitReady(ctx) {
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

// refuse answers what needs no child: unknown methods, params that are not
// an object, initialize in a batch, and requests before the session began.
// A modern request is checked (and the first one begins the session).
func (a *Aggregator) refuse(c *call) []byte {
	s := a.client.state()
	switch {
	case c.spec == nil && (s.era != eraModern || removedInModern[c.method] == ""):
		return errorLine(c.id, jsonrpc.CodeMethodNotFound, "Method not found: "+c.method)
	case s.era == eraLegacy && onlyModern[c.method]:
		return errorLine(c.id, jsonrpc.CodeMethodNotFound, "Method not found: "+c.method+" (it belongs to protocol "+ModernVersion+"; this connection was initialized with "+s.version+")")
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

// clientInvalid answers a line of the client that is not a valid message.
func (a *Aggregator) clientInvalid(line []byte, m *jsonrpc.Message, err error) {
	if reply := a.invalidReply(line, m, err); reply != nil {
		a.client.conn.Write(reply)
	}
}

// clientOversized answers a client line longer than MaxMessageSize, which
// was not read, with -32600 under its id when its head shows one, and
// goes on reading.
func (a *Aggregator) clientOversized(head []byte, size int64) error {
	id, _ := jsonrpc.HeadID(head) // nil: null
	a.log.Warnf("client sent a message of %d bytes, more than the limit of %d (--max-message-size); discarded: %s", size, a.opts.MaxMessageSize, clipLine(head))
	a.client.conn.Write(errorLine(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"Invalid Request: a message of %d bytes, more than mcp-simple-aggregator's limit of %d bytes (--max-message-size)", size, a.opts.MaxMessageSize)))
	return nil
}

// invalidReply logs a message of the client that is not valid (on a line
// of its own or in a batch) and returns its answer; nil for a broken
// answer (which the client's connection has taken: Conn.Broken) or a
// broken notification, which get none.
func (a *Aggregator) invalidReply(msg []byte, m *jsonrpc.Message, err error) []byte {
	a.log.Warnf("client sent a line that is not a valid JSON-RPC message (%v): %s", err, clipLine(msg))
	if m != nil && (m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil) || isBrokenNotification(msg, m)) {
		return nil
	}
	return invalidLine(m, err)
}

// isBrokenNotification reports whether an invalid message was meant as a
// notification: a method and no id member at all.
func isBrokenNotification(line []byte, m *jsonrpc.Message) bool {
	_, hasID := jsonrpc.Member(line, "id")
	return m.Method != "" && !hasID
}

// clientNotification handles a notification of the client.
func (a *Aggregator) clientNotification(m *jsonrpc.Message) {
	if do, ok := clientNotifications[m.Method]; ok {
		do(a, m.Params)
		return
	}
	a.log.Debugf("client notification %s not relayed", m.Method)
}

// clientCancelled cancels the client request that notifications/cancelled
// names; an unknown id is ignored.
func (a *Aggregator) clientCancelled(params []byte) {
	id, reason, ok := cancelParams(params)
	if !ok {
		return
	}
	if c, ok := a.client.inflight.get(idKey(id)); ok {
		c.cancel(&cancelReason{reason: reason})
	}
}

// rootsChanged passes the client's roots/list_changed to every legacy
// child.
func (a *Aggregator) rootsChanged(params []byte) {
	for _, c := range a.children {
		if c.initialized() && !c.modern.Load() { // the modern era has no such notification
			c.conn.Notify("notifications/roots/list_changed", params)
		}
	}
}

func invalidLine(m *jsonrpc.Message, err error) []byte {
	if errors.Is(err, jsonrpc.ErrParse) {
		return errorLine(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	}
	var id []byte
	if m != nil {
		id = m.ID
	}
	return errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
}

func errorLine(id []byte, code int, message string) []byte {
	e := jsonrpc.Error{Code: code, Message: message}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

func errorDataLine(id []byte, code int, message string, data []byte) []byte {
	e := jsonrpc.Error{Code: code, Message: message, Data: data}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

// responseLine answers id with a child's or the client's raw answer.
func responseLine(id []byte, resp *jsonrpc.Message) []byte {
	if resp.Error != nil {
		return jsonrpc.AppendError(nil, id, resp.Error)
	}
	return jsonrpc.AppendResult(nil, id, resp.Result)
}
