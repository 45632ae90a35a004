package aggregator

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientCapabilities are the client capabilities the aggregator can relay to
// children.
type clientCapabilities struct {
	sampling, elicitation, roots bool
	forChildren                  []byte // the relayable members, raw
}

// relayedClientCapabilities are the client capabilities passed to children:
// the ones whose requests the aggregator relays from children to the client.
var relayedClientCapabilities = []string{"sampling", "elicitation", "roots"}

func parseClientCapabilities(raw []byte) clientCapabilities {
	var caps clientCapabilities
	b := []byte{'{'}
	ms, _ := jsonrpc.Members(raw)
	for _, m := range ms {
		relayed := false
		for _, name := range relayedClientCapabilities {
			relayed = relayed || m.Key == name
		}
		if !relayed || string(m.Value) == "null" {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, m.Key)
		b = append(b, ':')
		b = append(b, m.Value...)
		switch m.Key {
		case "sampling":
			caps.sampling = true
		case "elicitation":
			caps.elicitation = true
		case "roots":
			caps.roots = true
		}
	}
	caps.forChildren = append(b, '}')
	return caps
}

// cancelReason is the cause of a request cancelled by a peer's
// notifications/cancelled; reason is the raw "reason" member, if any.
type cancelReason struct{ reason []byte }

func (*cancelReason) Error() string { return "cancelled by the peer" }

// canceler is a request in flight that the peer that sent it may cancel.
type canceler interface{ cancel(cause error) }

// cancelFunc is a canceler made of a function.
type cancelFunc func(cause error)

func (f cancelFunc) cancel(cause error) { f(cause) }

// cancelFrom runs the cancel that table (guarded by mu) holds for the
// requestId of a notifications/cancelled; an unknown id is ignored.
func cancelFrom(params []byte, mu *sync.Mutex, table map[string]canceler) {
	id, ok := jsonrpc.Member(params, "requestId")
	if !ok {
		return
	}
	reason, _ := jsonrpc.Member(params, "reason")
	mu.Lock()
	c := table[string(id)]
	mu.Unlock()
	if c != nil {
		c.cancel(&cancelReason{reason: reason})
	}
}

// sendCancelled tells conn's peer that the request id is cancelled.
func sendCancelled(conn *jsonrpc.Conn, id []byte, cause error) {
	if conn == nil {
		return
	}
	b := append([]byte(`{"requestId":`), id...)
	var cr *cancelReason
	if errors.As(cause, &cr) {
		if cr.reason != nil {
			b = append(append(b, `,"reason":`...), cr.reason...)
		}
	} else if cause != nil {
		b = jsonrpc.AppendString(append(b, `,"reason":`...), cause.Error())
	}
	conn.Notify("notifications/cancelled", append(b, '}'))
}

// clientMessage receives each request and notification of the client, on
// the reader goroutine. Requests are served concurrently.
func (a *Aggregator) clientMessage(m *jsonrpc.Message) {
	if m.IsNotification() {
		a.clientNotification(m)
		return
	}
	if m.Method == "tools/call" && a.forwardNow(m) {
		return
	}
	if a.inUse(string(m.ID)) {
		a.upConn().Write(errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(m.ID)+" is already used by a request in flight"))
		return
	}
	if early := a.beforeInitialize(m); early != nil {
		a.upConn().Write(early)
		return
	}
	serve := a.serveRequest
	if m.Method == "initialize" {
		// Negotiate here, on the reader goroutine, so that the requests read
		// after initialize find it received.
		version, bad := a.acceptInitialize(m)
		serve = func(ctx context.Context, m *jsonrpc.Message) []byte {
			if bad != nil {
				return bad
			}
			return a.finishInitialize(ctx, m, version)
		}
	}
	ctx, done := a.track(m.ID)
	a.goServe(func() {
		defer done()
		if line := serve(ctx, m); line != nil {
			a.upConn().Write(line)
		}
	})
}

// forwardNow forwards a tools/call for a known tool on the reader
// goroutine, once every child is ready, and lets the child's reader write
// the answer: no goroutine and no hand-off per call, which is what keeps
// the aggregator's cost per call near a bare byte relay's. It reports false
// when the request needs the general path (not ready yet, or an error to
// answer), which also checks what it skips: that initialize came first (a
// tool is only registered after it), that params is an object and that the
// id is not in use.
func (a *Aggregator) forwardNow(m *jsonrpc.Message) bool {
	if !a.ready.Load() {
		return false
	}
	start, end, ok := jsonrpc.UniqueMember(m.Params, "name")
	if !ok {
		return false
	}
	name, ok := jsonrpc.StringBytes(m.Params[start:end])
	if !ok {
		return false
	}
	r, ok := a.reg.Load().tools[string(name)]
	if !ok {
		return false
	}
	f := &fastCall{a: a, child: r.child, id: m.ID, key: string(m.ID)}
	a.mu.Lock()
	if _, dup := a.inflight[f.key]; dup {
		a.mu.Unlock()
		return false
	}
	a.inflight[f.key] = f
	a.mu.Unlock()
	// The child's own name goes in place of ours, straight into the line.
	callID, err := r.child.conn.GoParts(m.Method, f.answer, m.Params[:start], r.rawName, m.Params[end:])
	if err != nil {
		f.answer(nil, err)
		return true
	}
	a.mu.Lock() // a cancel inside a batch runs on another goroutine
	f.callID = callID
	a.mu.Unlock()
	return true
}

// fastCall is a tools/call that forwardNow sent to a child: one object
// for its whole life.
type fastCall struct {
	a      *Aggregator
	child  *child
	id     []byte // the client's id
	key    string // string(id), its key in a.inflight
	callID []byte // its id on the child's connection, once sent; guarded by a.mu
}

// cancel is the client's notifications/cancelled: on the reader goroutine,
// or on a batch's goroutine. A call not sent yet cannot be cancelled; it
// will be answered.
func (f *fastCall) cancel(cause error) {
	f.a.mu.Lock()
	callID := f.callID
	f.a.mu.Unlock()
	conn := f.child.conn
	if callID != nil && conn.Forget(callID) {
		f.a.untrack(f.key)
		sendCancelled(conn, callID, cause)
	}
}

// answer writes the child's answer to the client under the client's id,
// or, when the child is gone, an error that names it.
func (f *fastCall) answer(resp *jsonrpc.Message, err error) {
	a := f.a
	if !a.untrack(f.key) {
		return
	}
	if err != nil {
		// lost waits for the child's end to be known: not here.
		a.goServe(func() { a.upConn().Write(errorLine(f.id, jsonrpc.CodeInternalError, f.child.lost(err).Error())) })
		return
	}
	a.upConn().Write(responseLine(f.id, resp))
}

// untrack removes a client request from the in-flight set and reports
// whether it was there.
func (a *Aggregator) untrack(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.inflight[key]
	a.removeInflight(key)
	return ok
}

// removeInflight deletes key and tells drain when nothing is left; called
// with a.mu held.
func (a *Aggregator) removeInflight(key string) {
	delete(a.inflight, key)
	if len(a.inflight) == 0 && a.idle != nil {
		close(a.idle)
		a.idle = nil
	}
}

// inUse reports whether a client request with this id is in flight.
func (a *Aggregator) inUse(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.inflight[key]
	return ok
}

// track registers a client request so that the client can cancel it.
func (a *Aggregator) track(id []byte) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(a.ctx)
	key := string(id)
	a.mu.Lock()
	a.inflight[key] = cancelFunc(cancel)
	a.mu.Unlock()
	return ctx, func() {
		a.mu.Lock()
		a.removeInflight(key)
		a.mu.Unlock()
		cancel(nil)
	}
}

// clientBatch serves a JSON-RPC batch and answers with one batch.
func (a *Aggregator) clientBatch(elems [][]byte) {
	up := a.upConn()
	if len(elems) == 0 {
		up.Write(errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch"))
		return
	}
	a.goServe(func() {
		replies := make([][]byte, len(elems))
		var wg sync.WaitGroup
		for i, e := range elems {
			m, err := jsonrpc.Parse(e)
			switch {
			case err != nil:
				replies[i] = invalidLine(m, err)
			case m.IsResponse():
				up.Deliver(m)
			case m.IsNotification():
				a.clientNotification(m)
			default:
				if early := a.beforeInitialize(m); early != nil {
					replies[i] = early
					continue
				}
				ctx, done := a.track(m.ID)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer done()
					replies[i] = a.serveRequest(ctx, m)
				}()
			}
		}
		wg.Wait()
		var b []byte
		for _, r := range replies {
			if r == nil {
				continue
			}
			if b == nil {
				b = append(b, '[')
			} else {
				b = append(b, ',')
			}
			b = append(b, r[:len(r)-1]...) // without its newline
		}
		if b != nil {
			up.Write(append(b, "]\n"...))
		}
	})
}

// clientInvalid answers a line of the client that is not a valid message.
func (a *Aggregator) clientInvalid(line []byte, m *jsonrpc.Message, err error) {
	a.log.Warnf("client sent a line that is not a valid JSON-RPC message (%v): %s", err, clipLine(line))
	if m != nil && (m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil) || isBrokenNotification(line, m)) {
		return // a broken answer or a broken notification: nothing to answer
	}
	a.upConn().Write(invalidLine(m, err))
}

// isBrokenNotification reports whether an invalid message was meant as a
// notification: a method and no id member at all.
func isBrokenNotification(line []byte, m *jsonrpc.Message) bool {
	_, hasID := jsonrpc.Member(line, "id")
	return m.Method != "" && !hasID
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

// serveRequest answers one client request that beforeInitialize let
// through; nil means no answer is due (the client cancelled it, or the
// aggregator is shutting down).
func (a *Aggregator) serveRequest(ctx context.Context, m *jsonrpc.Message) []byte {
	switch m.Method {
	case "initialize":
		return errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize must not be part of a batch")
	case "ping":
		return jsonrpc.AppendResult(nil, m.ID, []byte("{}"))
	}
	serve := clientMethods[m.Method]
	if !a.waitReady(ctx) {
		return nil
	}
	if a.isStopping() {
		return errorLine(m.ID, jsonrpc.CodeInternalError, "mcp-simple-aggregator is shutting down")
	}
	return serve(a, ctx, m)
}

// beforeInitialize answers, on the reader goroutine so that the order of
// lines decides, what needs no child: unknown methods, bad params and
// requests that come before initialize. nil means the request goes on.
func (a *Aggregator) beforeInitialize(m *jsonrpc.Message) []byte {
	if m.Method == "initialize" || m.Method == "ping" {
		return nil
	}
	if _, known := clientMethods[m.Method]; !known {
		return errorLine(m.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method)
	}
	if m.Params != nil && m.Params[0] != '{' {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: params must be an object")
	}
	if !a.initializeReceived() {
		return errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: "+m.Method+" before initialize")
	}
	return nil
}

// clientMethods are the client requests served after initialize.
var clientMethods map[string]func(*Aggregator, context.Context, *jsonrpc.Message) []byte

func init() {
	clientMethods = map[string]func(*Aggregator, context.Context, *jsonrpc.Message) []byte{
		"tools/list":               (*Aggregator).listTools,
		"tools/call":               (*Aggregator).callTool,
		"prompts/list":             (*Aggregator).listPrompts,
		"prompts/get":              (*Aggregator).getPrompt,
		"resources/list":           (*Aggregator).listResources,
		"resources/templates/list": (*Aggregator).listResourceTemplates,
		"resources/read":           (*Aggregator).routeByURI,
		"resources/subscribe":      (*Aggregator).routeByURI,
		"resources/unsubscribe":    (*Aggregator).routeByURI,
		"completion/complete":      (*Aggregator).complete,
		"logging/setLevel":         (*Aggregator).setLevel,
	}
}

// waitReady waits until every child runs or has failed.
func (a *Aggregator) waitReady(ctx context.Context) bool {
	if a.ready.Load() {
		return true
	}
	for _, c := range a.children {
		select {
		case <-c.ready:
		case <-ctx.Done():
			return false
		}
	}
	a.ready.Store(true)
	return true
}

func (a *Aggregator) initializeReceived() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.initStarted
}

func (a *Aggregator) negotiated() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.version
}

// acceptInitialize negotiates the protocol version with the client and
// takes its capabilities; bad is the answer when initialize is refused.
func (a *Aggregator) acceptInitialize(m *jsonrpc.Message) (version string, bad []byte) {
	requested, ok := jsonrpc.StringMember(m.Params, "protocolVersion")
	if !ok {
		return "", errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: initialize needs params.protocolVersion (a string)")
	}
	version = requested
	if !isSupported(version) {
		version = LatestVersion
	}
	caps, _ := jsonrpc.Member(m.Params, "capabilities")
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.initStarted {
		return "", errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize was already received")
	}
	a.initStarted = true
	a.version = version
	a.clientCaps = parseClientCapabilities(caps)
	a.log.Debugf("client asked for protocol version %s; serving %s", requested, version)
	return version, nil
}

// finishInitialize initializes every child with the agreed version and the
// client's relayable capabilities, and answers the client once every child
// has answered its initialize (or failed, or timed out).
func (a *Aggregator) finishInitialize(ctx context.Context, m *jsonrpc.Message, version string) []byte {
	clientInfo, ok := jsonrpc.Member(m.Params, "clientInfo")
	if !ok {
		clientInfo = a.serverInfo()
	}
	a.mu.Lock()
	childCaps := a.clientCaps.forChildren
	a.mu.Unlock()
	a.startAll(childInitParams(version, childCaps, clientInfo))
	for _, c := range a.children {
		select {
		case <-c.inited:
		case <-ctx.Done():
			return nil
		}
	}
	return jsonrpc.AppendResult(nil, m.ID, a.initializeResult(version))
}

func childInitParams(version string, caps, clientInfo []byte) []byte {
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, version)
	b = append(append(b, `,"capabilities":`...), caps...)
	b = append(append(b, `,"clientInfo":`...), clientInfo...)
	return append(b, '}')
}

// startAll initializes every child in parallel.
func (a *Aggregator) startAll(params []byte) {
	for _, c := range a.children {
		a.goServe(func() { c.start(params) })
	}
}

func (a *Aggregator) serverInfo() []byte {
	b := []byte(`{"name":`)
	b = jsonrpc.AppendString(b, a.opts.Name)
	b = jsonrpc.AppendString(append(b, `,"version":`...), a.opts.Version)
	return append(b, '}')
}

// initializeResult advertises what at least one initialized child offers,
// and joins the children's instructions under their keys.
func (a *Aggregator) initializeResult(version string) []byte {
	var any childCapabilities
	var instructions []string
	for _, c := range a.children {
		c.mu.Lock()
		if c.version != "" && c.state != stateFailed {
			any.prompts = any.prompts || c.caps.prompts
			any.resources = any.resources || c.caps.resources
			any.subscribe = any.subscribe || c.caps.subscribe
			any.logging = any.logging || c.caps.logging
			any.completions = any.completions || c.caps.completions
			if c.instructions != "" {
				instructions = append(instructions, "## "+c.key+"\n\n"+c.instructions)
			}
		}
		c.mu.Unlock()
	}
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, version)
	b = append(b, `,"capabilities":{"tools":{"listChanged":true}`...)
	if any.prompts {
		b = append(b, `,"prompts":{"listChanged":true}`...)
	}
	if any.resources {
		b = append(b, `,"resources":{"listChanged":true`...)
		if any.subscribe {
			b = append(b, `,"subscribe":true`...)
		}
		b = append(b, '}')
	}
	if any.logging {
		b = append(b, `,"logging":{}`...)
	}
	if any.completions {
		b = append(b, `,"completions":{}`...)
	}
	b = append(append(b, `},"serverInfo":`...), a.serverInfo()...)
	if len(instructions) > 0 {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), strings.Join(instructions, "\n\n"))
	}
	return append(b, '}')
}

// clientNotification handles a notification of the client.
func (a *Aggregator) clientNotification(m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/initialized":
		a.clientIsInitialized()
		a.log.Debugf("client initialized")
	case "notifications/cancelled":
		cancelFrom(m.Params, &a.mu, a.inflight)
	case "notifications/progress":
		a.progressFromClient(m.Params)
	case "notifications/roots/list_changed":
		for _, c := range a.children {
			if c.initialized() {
				c.conn.Notify(m.Method, m.Params)
			}
		}
	default:
		a.log.Debugf("client notification %s not relayed", m.Method)
	}
}
