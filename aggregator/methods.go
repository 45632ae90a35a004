package aggregator

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// forward sends the client's request m to c with params and answers with
// the child's raw answer under the client's id.
func (a *Aggregator) forward(ctx context.Context, c *child, m *jsonrpc.Message, params []byte) []byte {
	resp, err := c.conn.Call(ctx, m.Method, params)
	if err != nil {
		if ctx.Err() != nil {
			return nil // cancelled by the client, or shutting down
		}
		return errorLine(m.ID, jsonrpc.CodeInternalError, c.lost(err).Error())
	}
	return responseLine(m.ID, resp)
}

// noCursor refuses a cursor: merged lists come whole, in one page.
func noCursor(m *jsonrpc.Message) []byte {
	if c, ok := jsonrpc.Member(m.Params, "cursor"); ok && string(c) != "null" {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor (this server lists everything in one page)")
	}
	return nil
}

func (a *Aggregator) listTools(_ context.Context, m *jsonrpc.Message) []byte {
	if bad := noCursor(m); bad != nil {
		return bad
	}
	return jsonrpc.AppendResult(nil, m.ID, a.reg.Load().toolsResult)
}

func (a *Aggregator) listPrompts(_ context.Context, m *jsonrpc.Message) []byte {
	if bad := noCursor(m); bad != nil {
		return bad
	}
	return jsonrpc.AppendResult(nil, m.ID, a.reg.Load().promptsResult)
}

// callTool routes tools/call by the exact prefixed name and hands the child
// its own name with every other byte of params untouched.
func (a *Aggregator) callTool(ctx context.Context, m *jsonrpc.Message) []byte {
	return a.forwardNamed(ctx, m, "Tool", a.reg.Load().tools, jsonrpc.CodeMethodNotFound)
}

// getPrompt routes prompts/get like tools/call; an unknown prompt is -32602,
// as the specification asks.
func (a *Aggregator) getPrompt(ctx context.Context, m *jsonrpc.Message) []byte {
	return a.forwardNamed(ctx, m, "Prompt", a.reg.Load().prompts, jsonrpc.CodeInvalidParams)
}

// forwardNamed looks params.name up in index and forwards m to its child
// under the child's own name.
func (a *Aggregator) forwardNamed(ctx context.Context, m *jsonrpc.Message, kind string, index map[string]route, notFound int) []byte {
	name, ok := uniqueString(m.Params, "name")
	if !ok {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+m.Method+" needs one params.name (a string)")
	}
	if !strings.Contains(name, a.opts.Separator) {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, kind+" name must be prefixed with server key: "+name)
	}
	r, ok := index[name]
	if !ok {
		return errorLine(m.ID, notFound, kind+" not found: "+name)
	}
	params, err := jsonrpc.ReplaceMember(m.Params, "name", r.rawName)
	if err != nil {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	return a.forward(ctx, r.child, m, params)
}

// resourceChildren are the running children that declared resources.
func (a *Aggregator) resourceChildren() []*child {
	var cs []*child
	for _, c := range a.children {
		if c.running() && c.capabilities().resources {
			cs = append(cs, c)
		}
	}
	return cs
}

// refreshEach runs refresh on every child in parallel; a child that fails
// keeps its previous list.
func (a *Aggregator) refreshEach(ctx context.Context, cs []*child, what string, refresh func(*child, context.Context) error) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := refresh(c, ctx); err != nil && ctx.Err() == nil {
				a.log.Warnf("server %q: %s: %v (using its previous list)", c.key, what, err)
			}
		}()
	}
	wg.Wait()
}

// listResources merges the children's current resource lists, each drained
// of its pages, URIs untouched.
func (a *Aggregator) listResources(ctx context.Context, m *jsonrpc.Message) []byte {
	return a.mergeResourceLists(ctx, m, "resources", (*child).refreshResources, func(c *child) [][]byte {
		return c.resourceList
	})
}

func (a *Aggregator) listResourceTemplates(ctx context.Context, m *jsonrpc.Message) []byte {
	return a.mergeResourceLists(ctx, m, "resourceTemplates", (*child).refreshTemplates, func(c *child) [][]byte {
		var raw [][]byte
		for _, t := range c.templates {
			raw = append(raw, t.raw)
		}
		return raw
	})
}

// mergeResourceLists refreshes a list of every child with resources and
// answers with their entries (entries runs with c.mu held) in config order.
func (a *Aggregator) mergeResourceLists(ctx context.Context, m *jsonrpc.Message, field string, refresh func(*child, context.Context) error, entries func(*child) [][]byte) []byte {
	if bad := noCursor(m); bad != nil {
		return bad
	}
	cs := a.resourceChildren()
	a.refreshEach(ctx, cs, m.Method, refresh)
	if ctx.Err() != nil {
		return nil
	}
	var all [][]byte
	for _, c := range cs {
		c.mu.Lock()
		all = append(all, entries(c)...)
		c.mu.Unlock()
	}
	return jsonrpc.AppendResult(nil, m.ID, listResult(field, all))
}

// resourceOwner finds the child serving uri: the first that listed it, else
// the first whose template matches it. On a miss it refreshes the lists once,
// for resources that appeared since.
func (a *Aggregator) resourceOwner(ctx context.Context, uri string) *child {
	if c := a.lookupResource(uri); c != nil {
		return c
	}
	cs := a.resourceChildren()
	a.refreshEach(ctx, cs, "resources/list", (*child).refreshResources)
	return a.lookupResource(uri)
}

func (a *Aggregator) lookupResource(uri string) *child {
	cs := a.resourceChildren()
	for _, c := range cs {
		c.mu.Lock()
		_, ok := c.resources[uri]
		c.mu.Unlock()
		if ok {
			return c
		}
	}
	for _, c := range cs {
		c.mu.Lock()
		for _, t := range c.templates {
			if t.match.MatchString(uri) {
				c.mu.Unlock()
				return c
			}
		}
		c.mu.Unlock()
	}
	return nil
}

// routeByURI serves resources/read, subscribe and unsubscribe.
func (a *Aggregator) routeByURI(ctx context.Context, m *jsonrpc.Message) []byte {
	uri, ok := uniqueString(m.Params, "uri")
	if !ok {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+m.Method+" needs one params.uri (a string)")
	}
	c := a.resourceOwner(ctx, uri)
	if c == nil {
		if ctx.Err() != nil {
			return nil
		}
		data := jsonrpc.AppendString([]byte(`{"uri":`), uri)
		return errorDataLine(m.ID, jsonrpc.CodeResourceNotFound, "Resource not found: "+uri, append(data, '}'))
	}
	return a.forward(ctx, c, m, m.Params)
}

// complete routes completion/complete: ref/prompt by prefixed prompt name,
// ref/resource by the child owning the template.
func (a *Aggregator) complete(ctx context.Context, m *jsonrpc.Message) []byte {
	ref, ok := jsonrpc.Member(m.Params, "ref")
	kind, _ := jsonrpc.StringMember(ref, "type")
	if !ok {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: completion/complete needs params.ref")
	}
	switch kind {
	case "ref/prompt":
		name, _ := jsonrpc.StringMember(ref, "name")
		r, ok := a.reg.Load().prompts[name]
		if !ok {
			return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Prompt not found: "+name)
		}
		newRef, err := jsonrpc.ReplaceMember(ref, "name", r.rawName)
		if err == nil {
			var params []byte
			if params, err = jsonrpc.ReplaceMember(m.Params, "ref", newRef); err == nil {
				return a.forward(ctx, r.child, m, params)
			}
		}
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: "+err.Error())
	case "ref/resource":
		uri, _ := jsonrpc.StringMember(ref, "uri")
		if c := a.templateOwner(uri); c != nil {
			return a.forward(ctx, c, m, m.Params)
		}
		if c := a.resourceOwner(ctx, uri); c != nil {
			return a.forward(ctx, c, m, m.Params)
		}
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Resource template not found: "+uri)
	}
	return errorLine(m.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: params.ref.type must be \"ref/prompt\" or \"ref/resource\", not %q", kind))
}

// templateOwner is the first child that listed exactly this URI template.
func (a *Aggregator) templateOwner(uriTemplate string) *child {
	for _, c := range a.resourceChildren() {
		c.mu.Lock()
		for _, t := range c.templates {
			if t.uriTemplate == uriTemplate {
				c.mu.Unlock()
				return c
			}
		}
		c.mu.Unlock()
	}
	return nil
}

// setLevel passes logging/setLevel to every child that declared logging.
func (a *Aggregator) setLevel(ctx context.Context, m *jsonrpc.Message) []byte {
	if _, ok := jsonrpc.StringMember(m.Params, "level"); !ok {
		return errorLine(m.ID, jsonrpc.CodeInvalidParams, "Invalid params: logging/setLevel needs params.level (a string)")
	}
	var wg sync.WaitGroup
	for _, c := range a.children {
		if !c.running() || !c.capabilities().logging {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.conn.Call(ctx, m.Method, m.Params)
			if err == nil && resp.Error != nil {
				err = errorObject(resp.Error)
			}
			if err != nil && ctx.Err() == nil {
				a.log.Warnf("server %q: logging/setLevel: %v", c.key, err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return jsonrpc.AppendResult(nil, m.ID, []byte("{}"))
}

// uniqueString returns the string member key of obj when there is exactly
// one: with two, the aggregator and the child could read different ones
// (first or last wins), and route to one name but run another.
func uniqueString(obj []byte, key string) (string, bool) {
	start, end, ok := jsonrpc.UniqueMember(obj, key)
	if !ok {
		return "", false
	}
	return jsonrpc.String(obj[start:end])
}
