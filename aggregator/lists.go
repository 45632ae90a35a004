package aggregator

import (
	"context"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// rawError is an error object a peer sent, for logs.
type rawError []byte

func (e rawError) Error() string { return string(e) }

// noCursor refuses a cursor: merged lists come whole, in one page.
func noCursor(c *call) []byte {
	if c.p.cursor != nil && string(c.p.cursor) != "null" {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor (this server lists everything in one page)")
	}
	return nil
}

func (a *Aggregator) listTools(_ context.Context, c *call) []byte {
	if bad := noCursor(c); bad != nil {
		return bad
	}
	return jsonrpc.AppendResult(nil, c.id, a.reg.Load().toolsResult)
}

func (a *Aggregator) listPrompts(_ context.Context, c *call) []byte {
	if bad := noCursor(c); bad != nil {
		return bad
	}
	return jsonrpc.AppendResult(nil, c.id, a.reg.Load().promptsResult)
}

// listResources merges the children's current resource lists, each fetched
// whole, URIs untouched.
func (a *Aggregator) listResources(ctx context.Context, c *call) []byte {
	return a.mergeResourceLists(ctx, c, "resources", (*child).refreshResources, (*child).resourceEntries)
}

func (a *Aggregator) listResourceTemplates(ctx context.Context, c *call) []byte {
	return a.mergeResourceLists(ctx, c, "resourceTemplates", (*child).refreshTemplates, (*child).templateEntries)
}

// mergeResourceLists refreshes a list of every child with resources and
// answers with their entries in config order.
func (a *Aggregator) mergeResourceLists(ctx context.Context, c *call, field string, refresh func(*child, context.Context) error, entries func(*child) [][]byte) []byte {
	if bad := noCursor(c); bad != nil {
		return bad
	}
	cs := a.resourceChildren()
	a.refreshEach(ctx, cs, c.method, refresh)
	if ctx.Err() != nil {
		return nil
	}
	var all [][]byte
	for _, ch := range cs {
		all = append(all, entries(ch)...)
	}
	return jsonrpc.AppendResult(nil, c.id, listResult(field, all))
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

// setLevel passes logging/setLevel to every child that declared logging.
func (a *Aggregator) setLevel(ctx context.Context, c *call) []byte {
	if _, ok := jsonrpc.StringMember(c.params, "level"); !ok {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: logging/setLevel needs params.level (a string)")
	}
	var wg sync.WaitGroup
	for _, ch := range a.children {
		if !ch.running() || !ch.capabilities().logging {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ch.conn.Call(ctx, c.method, c.params)
			if err == nil && resp.Error != nil {
				err = rawError(resp.Error)
			}
			if err != nil && ctx.Err() == nil {
				a.log.Warnf("server %q: logging/setLevel: %v", ch.key, err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return jsonrpc.AppendResult(nil, c.id, []byte("{}"))
}
