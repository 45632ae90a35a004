package aggregator

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the lists the aggregator answers itself by merging its
// servers' (resources, resource templates), and logging/setLevel, which
// goes to every server that declared logging.

// noCursor refuses a cursor: merged lists come whole, in one page.
func noCursor(c *call) []byte {
	if c.p.cursor != nil && string(c.p.cursor) != "null" {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: unknown cursor (this server lists everything in one page)")
	}
	return nil
}

// refreshResources and refreshTemplates fetch a child's resource lists
// anew.
func refreshResources(c *child, ctx context.Context) error {
	return c.Refresh(ctx, &server.Kinds[server.KindResources].Lists[0])
}

func refreshTemplates(c *child, ctx context.Context) error {
	return c.Refresh(ctx, &server.Kinds[server.KindResources].Lists[1])
}

// listResources merges the children's current resource lists, each fetched
// whole, URIs untouched.
func (a *Aggregator) listResources(ctx context.Context, c *call) []byte {
	return a.mergeResourceLists(ctx, c, "resources", refreshResources, (*child).resourceEntries,
		func(h *server.Hints) eras.Hint { return h.Resources })
}

func (a *Aggregator) listResourceTemplates(ctx context.Context, c *call) []byte {
	return a.mergeResourceLists(ctx, c, "resourceTemplates", refreshTemplates, (*child).templateEntries,
		func(h *server.Hints) eras.Hint { return h.Templates })
}

// mergeResourceLists refreshes a list of every running child with
// resources and answers with their entries in config order, and those a
// child not up yet listed when it last ran (memory.go).
func (a *Aggregator) mergeResourceLists(ctx context.Context, c *call, field string, refresh func(*child, context.Context) error, entries func(*child) [][]byte, hint func(*server.Hints) eras.Hint) []byte {
	if bad := noCursor(c); bad != nil {
		return bad
	}
	a.start.listing()
	cs := a.resourceChildren()
	a.refreshEach(ctx, cs, c.method, refresh)
	if ctx.Err() != nil {
		return nil
	}
	var all [][]byte
	var hs []eras.Hint
	owners := make(map[string]string) // what identifies an entry -> the key of the server that listed it first
	for _, ch := range a.children() {
		if _, lists := ch.listsResources(); !lists {
			continue
		}
		for _, e := range entries(ch) {
			if a.shadowed(field, e, ch.key, owners) {
				continue
			}
			all = append(all, e)
		}
		hs = append(hs, ch.hint(hint))
	}
	return c.listAnswer(listResult(field, all), func() eras.Hint { return eras.MergeHints(hs, time.Now()) })
}

// shadowed reports whether entry e of server key, in the list field, is a
// resource URI (or URI template) that a server before it in config order
// listed too: reads go to that one, so e is left out, with a warning once.
func (a *Aggregator) shadowed(field string, e []byte, key string, owners map[string]string) bool {
	member := "uri"
	if field == "resourceTemplates" {
		member = "uriTemplate"
	}
	id, ok := jsonrpc.StringMember(e, member)
	if !ok {
		return false
	}
	owner, taken := owners[id]
	if !taken {
		owners[id] = key
		return false
	}
	if owner != key {
		a.catalog.warn(member+"\x00"+id+"\x00"+key, "resource %s %q of server %q is left out: server %q lists it too, and gets its reads (the first in the config)", member, id, key, owner)
		return true
	}
	return false
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
//
// Modern children have no logging/setLevel: the level goes in the _meta of
// each request they get from the client (childMeta).
func (a *Aggregator) setLevel(ctx context.Context, c *call) []byte {
	level, ok := jsonrpc.StringMember(c.params, "level")
	if !ok || !eras.IsLogLevel(level) {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: logging/setLevel needs params.level, one of "+strings.Join(eras.LogLevels, ", "))
	}
	a.client.setLogLevel(level)
	var wg sync.WaitGroup
	for _, ch := range a.children() {
		if !ch.takesSetLevel() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ch.Conn().Call(ctx, c.method, c.params)
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

// serveRegistered is the serve of a kind's list in the registry (tools/list,
// prompts/list): the registry's answer, in one page, with the children's
// caching hints merged for a modern client.
func serveRegistered(kind int) func(*Aggregator, context.Context, *call) []byte {
	k := &listKinds[kind]
	return func(a *Aggregator, _ context.Context, c *call) []byte {
		if bad := noCursor(c); bad != nil {
			return bad
		}
		a.start.listing()
		return c.listAnswer(k.registered(a.catalog.registry()), func() eras.Hint {
			var hs []eras.Hint // of the children that serve the list
			for _, ch := range a.children() {
				if ch.running() && k.Offered(ch.capabilities()) {
					hs = append(hs, ch.hint(k.Lists[0].Hint))
				}
			}
			return eras.MergeHints(hs, time.Now())
		})
	}
}
