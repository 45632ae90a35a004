package aggregator

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// rawError is an error object a peer sent, for logs.
type rawError []byte

func (e rawError) Error() string { return string(e) }

func errorObject(raw []byte) error { return rawError(raw) }

// progressRoute leads a progress token the aggregator gave the client back to
// the child whose request carried it, and to the child's own token.
type progressRoute struct {
	child *child
	token []byte
}

// childRequestCapability is the client capability each relayed child
// request needs ("" for none).
var childRequestCapability = map[string]string{
	"ping":                   "",
	"sampling/createMessage": "sampling",
	"elicitation/create":     "elicitation",
	"roots/list":             "roots",
}

// initialized reports whether the child has answered initialize and is not
// gone.
func (c *child) initialized() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version != "" && (c.state == stateStarting || c.state == stateRunning)
}

// handle receives each request and notification of the child, on its reader
// goroutine.
func (c *child) handle(m *jsonrpc.Message) {
	if c.agg.hold(c, m) {
		return
	}
	c.dispatch(m)
}

// heldMessage is a child's request or notification kept until the client
// is initialized.
type heldMessage struct {
	child *child
	m     *jsonrpc.Message
}

// hold keeps a child's message while the client has not sent
// notifications/initialized: before that a server should send it nothing
// but pings and logs, and the aggregator's own initialize answer must come
// first. List changes are not held: they refresh the registry at once and
// tellClient keeps the notification.
func (a *Aggregator) hold(c *child, m *jsonrpc.Message) bool {
	if a.upConn() == nil || strings.HasSuffix(m.Method, "/list_changed") {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clientReady {
		return false
	}
	a.held = append(a.held, heldMessage{c, m})
	return true
}

// dispatch handles a child's request or notification.
func (c *child) dispatch(m *jsonrpc.Message) {
	a := c.agg
	if m.IsRequest() {
		c.relayRequest(m)
		return
	}
	switch m.Method {
	case "notifications/cancelled":
		cancelFrom(m.Params, &c.mu, c.incoming)
	case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
		a.goServe(func() { c.listChanged(m.Method) })
	default:
		// progress, message, resources/updated, elicitation/complete and
		// anything newer: the params go up untouched.
		if up := a.upConn(); up != nil {
			up.Notify(m.Method, m.Params)
		}
	}
}

// relayRequest sends a child's request to the client under a fresh id; the
// client's answer goes back under the child's id from the client's reader.
// It runs on the child's reader goroutine, so it registers the request
// before a cancel right behind it can be read; writes to the child are
// queued, so a child that is not reading cannot block its own reader.
func (c *child) relayRequest(m *jsonrpc.Message) {
	a := c.agg
	reply := func(line []byte) { c.conn.Write(line) } // queued: never blocks
	need, known := childRequestCapability[m.Method]
	up := a.upConn()
	a.mu.Lock()
	caps := a.clientCaps
	a.mu.Unlock()
	declared := map[string]bool{"": true, "sampling": caps.sampling, "elicitation": caps.elicitation, "roots": caps.roots}
	switch {
	case !known:
		reply(errorLine(m.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
		return
	case up == nil || !declared[need]:
		reply(errorLine(m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %s (the client did not declare the %s capability)", m.Method, need)))
		return
	}

	params, token := a.remapProgressToken(c, m.Params)
	key := string(m.ID)
	var upID []byte // guarded by c.mu
	finish := func() bool {
		c.mu.Lock()
		_, pending := c.incoming[key]
		delete(c.incoming, key)
		c.mu.Unlock()
		if token != "" {
			a.mu.Lock()
			delete(a.progress, token)
			a.mu.Unlock()
		}
		return pending
	}
	c.mu.Lock()
	if c.state == stateFailed || c.state == stateStopped {
		c.mu.Unlock()
		return
	}
	c.incoming[key] = cancelFunc(func(cause error) {
		c.mu.Lock()
		id := upID
		c.mu.Unlock()
		if id != nil && up.Forget(id) {
			finish()
			sendCancelled(up, id, cause)
		}
	})
	c.mu.Unlock()
	answered := func(resp *jsonrpc.Message, err error) {
		if !finish() {
			return // the child cancelled it, or is gone
		}
		if err != nil {
			reply(errorLine(m.ID, jsonrpc.CodeInternalError, "the client did not answer: "+err.Error()))
			return
		}
		c.conn.Write(responseLine(m.ID, resp))
	}
	id, err := up.Go(m.Method, params, answered)
	if err != nil {
		answered(nil, err)
		return
	}
	c.mu.Lock()
	upID = id
	c.mu.Unlock()
}

// remapProgressToken gives a child request's progress token a fresh name
// towards the client (two children may use the same token) and remembers
// the way back. It returns params unchanged when there is no token.
func (a *Aggregator) remapProgressToken(c *child, params []byte) ([]byte, string) {
	meta, ok := jsonrpc.Member(params, "_meta")
	if !ok {
		return params, ""
	}
	token, ok := jsonrpc.Member(meta, "progressToken")
	if !ok {
		return params, ""
	}
	ours := jsonrpc.AppendString(nil, "mcp-simple-aggregator/"+strconv.FormatInt(a.tokens.Add(1), 10))
	newMeta, err := jsonrpc.ReplaceMember(meta, "progressToken", ours)
	if err != nil {
		return params, ""
	}
	newParams, err := jsonrpc.ReplaceMember(params, "_meta", newMeta)
	if err != nil {
		return params, ""
	}
	a.mu.Lock()
	a.progress[string(ours)] = progressRoute{child: c, token: token}
	a.mu.Unlock()
	return newParams, string(ours)
}

// progressFromClient passes the client's progress on a child's request back
// to that child under the child's own token.
func (a *Aggregator) progressFromClient(params []byte) {
	token, ok := jsonrpc.Member(params, "progressToken")
	if !ok {
		return
	}
	a.mu.Lock()
	r, ok := a.progress[string(token)]
	a.mu.Unlock()
	if !ok {
		a.log.Debugf("client progress for unknown token %s dropped", token)
		return
	}
	if p, err := jsonrpc.ReplaceMember(params, "progressToken", r.token); err == nil {
		r.child.conn.Notify("notifications/progress", p)
	}
}

// listChanged refreshes the list a child says has changed and tells the
// client once.
func (c *child) listChanged(method string) {
	if !c.initialized() {
		return
	}
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	ctx, cancel := context.WithTimeout(c.agg.ctx, c.agg.opts.StartupTimeout)
	defer cancel()
	var err error
	switch method {
	case "notifications/tools/list_changed":
		err = c.refreshTools(ctx)
	case "notifications/prompts/list_changed":
		err = c.refreshPrompts(ctx)
	case "notifications/resources/list_changed":
		if err = c.refreshResources(ctx); err == nil {
			err = c.refreshTemplates(ctx)
		}
	}
	if err != nil {
		if ctx.Err() == nil || c.agg.ctx.Err() == nil {
			c.agg.log.Warnf("server %q: refreshing after %s: %v", c.key, method, err)
		}
		return
	}
	c.agg.rebuild()
	if c.initialized() {
		c.agg.tellClient(method)
	}
}
