package aggregator

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the route of a client's request, top to bottom: admit (read
// it into a call, in the in-flight table), route (served here, or routed
// to one server by its method's entry), adapt to the server's era, send.
// The server's answer comes back on its reader to answer.go, which adapts
// it to the client's era and writes it (call.go). What a method does on
// the way is in its entry (client_methods.go); how a request is sent and taken
// back, in send.go. Below the route: how the server a routed call goes to
// is found, by prefixed name (tools, prompts, compound tools) or by URI
// (resources, completions), and what the client is told when that server
// is down.

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
	s := a.client.settled()
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
	needsNone := c.spec.await == nil || a.start.allUp()
	if c.spec.quick && (needsNone || a.catalog.listed(c)) {
		a.run(a.life.Context(), c)
		return
	}
	ctx, release := c.local(a.life.Context())
	served := a.life.Go(func() {
		defer release()
		if needsNone || c.spec.await(a.start, ctx, c) {
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

// routeTool routes tools/call by the exact listed name and hands the child
// its own name, with every other byte of params untouched. A tool its
// server's entry hides is refused here, by the name it would have had. A name nobody
// listed goes, as it is, to the one child serving MCP Apps with a tool of
// that name: an app's UI calls its server's tools by their own names.
func (a *Aggregator) routeTool(_ context.Context, c *call) (target, []byte) {
	r := a.catalog.registry()
	if name, ok := c.name(); ok && r.compounds[string(name)] != nil {
		return r.compounds[string(name)].route(c)
	}
	if name, ok := c.name(); ok && r.hiddenTools[string(name)] != "" && r.tools[string(name)].child == nil {
		return target{}, errorLine(c.id, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Tool not available: %s is hidden by the aggregator's config (server %q)", name, r.hiddenTools[string(name)]))
	}
	return a.routeByName(c, "Tool", r.tools, r.naming.Sep, jsonrpc.CodeMethodNotFound,
		func(name string) *child { return a.appTool(name, r.naming) })
}

// appTool is the one running child that serves MCP Apps and has a tool
// named name, or nil when there is none or more than one. A name that
// begins with a configured server's key and the separator (as n forms
// it) is that server's, whether it runs or not, and never an app's: a
// server cannot take the calls of one that is down.
func (a *Aggregator) appTool(name string, n naming.Scheme) *child {
	for _, c := range a.children() {
		if strings.HasPrefix(name, c.key+n.Sep) || n.Strict && strings.HasPrefix(name, naming.StrictChars(c.key)+n.Sep) {
			return nil
		}
	}
	var found *child
	for _, c := range a.children() {
		if c.servesApp(name) {
			if found != nil {
				return nil
			}
			found = c
		}
	}
	return found
}

// routePrompt routes prompts/get like tools/call; an unknown prompt is
// -32602, as the specification asks.
func (a *Aggregator) routePrompt(_ context.Context, c *call) (target, []byte) {
	r := a.catalog.registry()
	return a.routeByName(c, "Prompt", r.prompts, r.naming.Sep, jsonrpc.CodeInvalidParams, nil)
}

// routeByName looks the one params.name up in index and splices the
// child's own name into the params in its place, as parts that GoParts
// joins straight into the line: params are copied once.
//
// A name not in index goes, as it is, to the child that unlisted finds.
func (a *Aggregator) routeByName(c *call, kind string, index map[string]route, sep string, notFound int, unlisted func(string) *child) (target, []byte) {
	name, ok := c.name()
	if !ok {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+c.method+" needs one params.name (a string)")
	}
	if r, ok := index[string(name)]; ok && !r.remembered {
		return target{child: r.child, parts: [3][]byte{c.params[:c.p.nameStart], r.rawName, c.params[c.p.nameEnd:]}}, nil
	}
	if unlisted != nil {
		if owner := unlisted(string(name)); owner != nil {
			return to(owner, c.params), nil
		}
	}
	if !bytes.Contains(name, []byte(sep)) {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, kind+" name must be prefixed with server key: "+string(name))
	}
	if down := a.downOwner(string(name)); down != nil {
		return target{}, errorLine(c.id, notFound, fmt.Sprintf("%s not found: %s: server %q %s (the aggregator's log says why)", kind, name, down.key, down.downState()))
	}
	if key, ok := a.catalog.registry().formerly[kind+"\x00"+string(name)]; ok {
		return target{}, errorLine(c.id, notFound, fmt.Sprintf("%s not found: %s: server %q no longer offers it (it was listed from what the server offered when it last ran)", kind, name, key))
	}
	return target{}, errorLine(c.id, notFound, kind+" not found: "+string(name))
}

// downOwner is the configured server a name not listed belongs to, when
// that server is not running (it failed, or was stopped): its tools left
// the lists, and a call of one is "not found" as any unlisted name
// (-32601; a prompt's -32602), with the server named and how it ended.
// The server's own words (its stderr, the failure's detail) stay in the
// log: a model reads this error.
func (a *Aggregator) downOwner(name string) *child {
	for _, c := range a.catalog.ownersOf(name) {
		if c.dropped() {
			return c
		}
	}
	return nil
}

// downState says, for an error, how a server that is not running ended.
func (c *child) downState() string {
	switch st := c.Status(); {
	case st.State == server.Stopped:
		return "was stopped"
	case st.Startup == 0:
		return "failed to start"
	}
	return "stopped working and was dropped"
}

// routeByURI routes resources/read, subscribe and unsubscribe to the
// server that owns the URI (owners.go); a URI whose owner is down gets an
// error naming it.
func (a *Aggregator) routeByURI(ctx context.Context, c *call) (target, []byte) {
	uri, ok := c.uriString()
	if !ok {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+c.method+" needs one params.uri (a string)")
	}
	owner := a.resourceOwners(ctx, []string{uri})[0]
	switch {
	case owner == nil && ctx.Err() != nil:
		return target{}, nil
	case owner == nil:
		return target{}, c.resourceNotFound(uri)
	case !owner.running():
		return target{}, c.unavailable(uri, owner)
	}
	return to(owner, c.params), nil
}

// routeCompletion routes completion/complete: ref/prompt by prefixed
// prompt name (the child gets its own name in the ref), ref/resource by the
// child owning the template.
func (a *Aggregator) routeCompletion(ctx context.Context, c *call) (target, []byte) {
	t, bad := a.completionTarget(ctx, c)
	if t.child != nil && !t.child.capabilities().Completions {
		// Offered before the server started (capabilities.Pending): it
		// never hears of what it did not declare.
		return target{}, errorLine(c.id, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: server %q does not offer completion/complete", t.child.key))
	}
	return t, bad
}

// completionTarget is routeCompletion's target, or its error.
func (a *Aggregator) completionTarget(ctx context.Context, c *call) (target, []byte) {
	ref := c.p.ref
	if ref == nil || c.p.refs > 1 {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: completion/complete needs one params.ref")
	}
	if key, dup := jsonrpc.DuplicateMember(ref); dup {
		// The aggregator and the server could read different copies.
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: params.ref has the member %q twice", key))
	}
	kind, _ := jsonrpc.StringMember(ref, "type")
	switch kind {
	case "ref/prompt":
		name, _ := jsonrpc.StringMember(ref, "name")
		r, ok := a.catalog.registry().prompts[name]
		if !ok || r.remembered { // a remembered one's server did not come up
			return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Prompt not found: "+name)
		}
		newRef, err := jsonrpc.ReplaceMember(ref, "name", r.rawName)
		if err == nil {
			var params []byte
			if params, err = jsonrpc.ReplaceMember(c.params, "ref", newRef); err == nil {
				return to(r.child, params), nil
			}
		}
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	case "ref/resource":
		uri, _ := jsonrpc.StringMember(ref, "uri")
		owner := a.templateOwner(uri)
		if owner == nil {
			owner = a.resourceOwners(ctx, []string{uri})[0]
		}
		if owner != nil && !owner.running() {
			return target{}, c.unavailable(uri, owner)
		}
		if owner != nil {
			return to(owner, c.params), nil
		}
		if ctx.Err() != nil {
			return target{}, nil
		}
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, "Resource template not found: "+uri)
	}
	return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: params.ref.type must be \"ref/prompt\" or \"ref/resource\", not %q", kind))
}

// templateOwner is the first server, running or down, that listed exactly
// this URI template.
func (a *Aggregator) templateOwner(uriTemplate string) *child {
	for _, c := range a.children() {
		if c.settled() && c.templateFor(uriTemplate) {
			return c
		}
	}
	return nil
}

// unavailable is the error for a request about uri, whose owner is down.
func (c *call) unavailable(uri string, owner *child) []byte {
	return errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("Resource %s is unavailable: server %q %s (the aggregator's log says why)", uri, owner.key, owner.downState()))
}
