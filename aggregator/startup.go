// This file starts the servers when the client's requests need them, bounds
// how long a request waits for servers still starting, and announces the
// servers that come up after a list was answered without them.
//
// Nothing starts before the client's session begins, and initialize (or
// server/discover) starts nothing: a probe that closes its input at once
// costs no process. The first request that needs every server's lists
// (tools/list, prompts/list, resources, logging/setLevel) starts them all
// and waits for them as the client's budget allows (listWait); a call by
// name starts only the server the name belongs to and waits for it (its
// start is bounded by the start-up timeout); a call by URI starts them all
// and waits until the URI's owner is known.

package aggregator

import (
	"context"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// beginClient begins the client's session with the plan its children are
// started with: names are formed for the client it names, and the lists
// hold what the servers listed when they last ran (memory.go). Nothing
// starts yet: see demand.
func (a *Aggregator) beginClient(clientName string, plan server.Plan) {
	a.catalog.setNaming(clientName, a.opts.namingFor(clientName))
	a.plan.Store(&plan)
	a.catalog.rebuild()
	a.log.Debugf("client %q: its first lists wait up to %v for servers not remembered and still starting", clientName, a.opts.listWait(clientName))
}

// demand starts the children in cs that have not started, each once, as
// the client's session began (a.plan); before it began, nothing starts.
func (a *Aggregator) demand(cs []*child) {
	plan := a.plan.Load()
	if plan == nil {
		return
	}
	for _, c := range cs {
		c.Launch(*plan)
	}
}

// demandAll starts every child: a request needs all their lists. The first
// time, the names are reported once every child is up.
func (a *Aggregator) demandAll() {
	if a.plan.Load() == nil {
		return
	}
	a.beginListWait()
	a.waits.all.Do(func() {
		a.allDemanded.Store(true)
		a.life.Go(a.awaitAllReady)
	})
	a.demand(a.children())
}

// beginListWait begins, once for the session, the client's first lists'
// wait for servers still starting (Options.listWait): from the first
// request that needs what servers declare or list.
func (a *Aggregator) beginListWait() {
	a.waits.once.Do(func() {
		var done <-chan struct{}
		if a.opts.listDeadline != nil {
			done = a.opts.listDeadline(a, a.catalog.clientsName())
		} else {
			done = a.closeAfter(a.firstListWait())
		}
		a.waits.mu.Lock()
		a.waits.lists = done
		a.waits.mu.Unlock()
	})
}

// firstListWait is how long the client's first lists wait for servers
// still starting (Options.listWait): a client known to fetch lists again
// hears of a change only if its era lets it now (a 2026-07-28 client: on
// an open subscriptions/listen stream that asked for it); else it is
// served as one that lists once.
func (a *Aggregator) firstListWait() time.Duration {
	refetches, budget := naming.Startup(a.catalog.clientsName())
	refetches = refetches && a.clientHears("notifications/tools/list_changed")
	return a.opts.listWaitFor(refetches, budget)
}

// closeAfter returns a channel closed after d, or at shutdown.
func (a *Aggregator) closeAfter(d time.Duration) chan struct{} {
	ch := make(chan struct{})
	started := a.life.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-a.life.Context().Done():
		}
		close(ch)
	})
	if !started {
		close(ch)
	}
	return ch
}

// awaitLists starts every child and waits until each that is not
// remembered runs or has failed, or the lists may wait no longer (then
// what is up is served, and the rest announced as it comes: childUp);
// false when ctx ended first. A remembered child is waited for by nobody:
// what it listed when it last ran is served until it is up (memory.go).
// When every child is ready, it reports the names, the first time, before
// any waiter goes on.
func (a *Aggregator) awaitLists(ctx context.Context, _ *call) bool {
	if a.allUp() {
		return true
	}
	a.demandAll()
	servers := a.servers.Load()
	var awaited []*child
	for _, c := range *servers {
		if _, ok := c.standIn(c.Status()); !ok {
			awaited = append(awaited, c)
		}
	}
	waitEach(ctx, awaited, a.waits.listsDone())
	if ctx.Err() != nil {
		return false
	}
	for _, c := range *servers {
		select {
		case <-c.Ready():
		default:
			return true // served as it is; awaitAllReady reports the names
		}
	}
	a.allReady(servers)
	return true
}

// awaitNamed starts the server a call's tool or prompt name belongs to and
// waits until it runs or has failed (bounded by the start-up timeout):
// "not found" never stands for "not started yet". A name no configured
// server's prefix begins waits for nobody.
func (a *Aggregator) awaitNamed(ctx context.Context, c *call) bool {
	name, ok := c.name()
	if !ok || a.catalog.listed(c) {
		return true
	}
	if owners, ok := a.catalog.compoundOwners(c, string(name)); ok {
		return a.awaitChildren(ctx, owners)
	}
	return a.awaitChildren(ctx, a.catalog.ownersOf(string(name)))
}

// awaitChildren starts cs and waits until each runs or has failed; false
// when ctx ended first.
func (a *Aggregator) awaitChildren(ctx context.Context, cs []*child) bool {
	a.demand(cs)
	for _, c := range cs {
		select {
		case <-c.Ready():
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// awaitURI starts every child and waits until one lists the call's URI,
// or every child runs or has failed (a URI template's owner is known only
// then); false when ctx ended first.
func (a *Aggregator) awaitURI(ctx context.Context, c *call) bool {
	uri, ok := c.uriString()
	if !ok {
		return true
	}
	return a.awaitOwnerOf(ctx, []string{uri})
}

// awaitOwnerOf starts every child and waits until each of uris is listed
// by a running child, or every child runs or has failed; false when ctx
// ended first. It looks again each time a child comes up or fails, in
// whatever order they do: a slow server does not hold up another's URI.
func (a *Aggregator) awaitOwnerOf(ctx context.Context, uris []string) bool {
	if len(uris) == 0 || a.allUp() {
		return true
	}
	a.demandAll()
	var pending []*child
	for _, ch := range a.children() {
		select {
		case <-ch.Ready():
		default:
			pending = append(pending, ch)
		}
	}
	settled := make(chan struct{}, len(pending))
	stop := make(chan struct{})
	defer close(stop)
	for _, ch := range pending {
		go func() {
			select {
			case <-ch.Ready():
				settled <- struct{}{}
			case <-stop:
			}
		}()
	}
	for range pending {
		if a.allListed(uris) {
			return true
		}
		select {
		case <-settled:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// allListed reports whether a running child lists each of uris.
func (a *Aggregator) allListed(uris []string) bool {
	cs := a.resourceChildren()
	for _, uri := range uris {
		found := false
		for _, c := range cs {
			if c.hasResource(uri) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// awaitListen waits for the owners of the URIs a subscriptions/listen
// stream asks to be told of; a stream without URIs needs no server.
func (a *Aggregator) awaitListen(ctx context.Context, c *call) bool {
	return a.awaitOwnerOf(ctx, readListFilter(c.params).uris)
}

// awaitCompletion waits as completion/complete's ref says: a prompt's
// server by its name, a resource template's owner by URI.
func (a *Aggregator) awaitCompletion(ctx context.Context, c *call) bool {
	kind, _ := jsonrpc.StringMember(c.p.ref, "type")
	switch kind {
	case "ref/prompt":
		name, _ := jsonrpc.StringMember(c.p.ref, "name")
		if r, listed := a.catalog.registry().prompts[name]; listed && !r.remembered {
			return true
		}
		return a.awaitChildren(ctx, a.catalog.ownersOf(name))
	case "ref/resource":
		uri, _ := jsonrpc.StringMember(c.p.ref, "uri")
		return a.awaitOwnerOf(ctx, []string{uri})
	}
	return true
}

// awaitAllReady waits until every child runs or has failed, whatever the
// client's waits, then reports the names.
func (a *Aggregator) awaitAllReady() {
	servers := a.servers.Load()
	for _, c := range *servers {
		select {
		case <-c.Ready():
		case <-a.life.Context().Done():
			return
		}
	}
	a.allReady(servers)
}

// allReady marks the set of servers seen all started or failed, having
// reported the names once. The mark holds only while that set is the
// configured one (allUp): a reload publishes a new set, whose servers may
// still be starting, and a late mark of an older set marks nothing.
func (a *Aggregator) allReady(servers *[]*child) {
	a.readyOnce.Do(a.catalog.reportNames)
	if servers == a.servers.Load() { // a late mark of an older set marks nothing
		a.readyFor.Store(servers)
	}
}

// allUp reports whether every configured server has started or failed,
// so that no request need wait for one.
func (a *Aggregator) allUp() bool {
	s := a.readyFor.Load()
	return s != nil && s == a.servers.Load()
}

// listing notes that a list is being answered: one answered before every
// child is ready makes each child that comes up later announced (childUp).
// It is called before the list is read, so that a child coming up meanwhile
// is either in the list or announced.
func (a *Aggregator) listing() {
	if !a.allUp() {
		a.listedSoon.Store(true)
	}
}

// childUp tells the client, once a child is up and in the registry, that
// its lists changed, when the client may have been answered a list
// without it (tools, and prompts and resources when it has them), or,
// when what it listed when it last ran was listed for it, with those of
// its lists that differ now (changedSince, which logs what changed).
func (a *Aggregator) childUp(c *child) {
	if r, ok := c.recalled(); ok && !r.Failed {
		changed := c.changedSince(r)
		if c.quiet.Load() || !a.listedSoon.Load() {
			return
		}
		for _, method := range changed {
			a.tellClient(method)
		}
		return
	}
	if c.quiet.Load() || !a.listedSoon.Load() {
		return
	}
	a.log.Debugf("server %q: up after the client was answered a list; telling it the lists changed", c.key)
	announceLists(c.capabilities(), a.tellClient)
}
