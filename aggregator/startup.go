package aggregator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/lifetime"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// startup starts the servers when the client's requests need them, bounds
// how long a request waits for servers still starting, and announces the
// servers that come up after a list was answered without them. Its
// methods are in this file; the method table says which of its waits
// (awaitLists, awaitNamed, awaitURI, awaitListen, awaitCompletion) each
// request takes.
//
// Nothing starts before the client's session begins (begin), and
// initialize (or server/discover) starts nothing: a probe that closes its
// input at once costs no process. The first request that needs every
// server's lists (tools/list, prompts/list, resources, logging/setLevel)
// starts them all and waits for them as the client's budget allows
// (listWait); a call by name starts only the server the name belongs to
// and waits for it (its start is bounded by the start-up timeout); a call
// by URI starts them all and waits until the URI's owner is known.
//
// It knows of the session the servers (the set a reload replaces), the
// catalog (whose names a call may wait for), and, of the client, only
// whether it hears of a list changed and how it is told.
type startup struct {
	opts    *Options
	log     *Logger
	life    *lifetime.Session
	servers func() *[]*child         // the configured set, which a reload replaces
	catalog *catalog                 // which server a name belongs to; whether it is listed
	hears   func(method string) bool // whether the client would hear now that a list changed
	tell    func(method string)      // tells the client a list changed

	plan        atomic.Pointer[server.Plan] // how servers' sessions are opened, once the client's began; nil before
	readyFor    atomic.Pointer[[]*child]    // the set of servers seen all started or failed: see allUp
	allDemanded atomic.Bool                 // a request needed every server: each was started
	allOnce     sync.Once                   // every server is demanded once (demandAll)
	readyOnce   sync.Once                   // reports the names once every server is ready
	listedSoon  atomic.Bool                 // a list was answered before every server was ready
	waitOnce    sync.Once                   // the first lists' wait begins once
	lists       <-chan struct{}             // closed once lists may wait no longer; set by waitOnce
}

// begin lets servers start, when a request needs them, with plan: the
// client's session began.
func (st *startup) begin(plan server.Plan) { st.plan.Store(&plan) }

// children are the configured servers, in config order.
func (st *startup) children() []*child { return *st.servers() }

// demand starts the children in cs that have not started, each once, as
// the client's session began (begin); before it began, nothing starts.
func (st *startup) demand(cs []*child) {
	plan := st.plan.Load()
	if plan == nil {
		return
	}
	for _, c := range cs {
		c.Launch(*plan)
	}
}

// demandAll starts every child: a request needs all their lists. The first
// time, the names are reported once every child is up.
func (st *startup) demandAll() {
	if st.plan.Load() == nil {
		return
	}
	st.listsDone() // the first lists' wait begins
	st.allOnce.Do(func() {
		st.allDemanded.Store(true)
		st.life.Go(st.awaitAllReady)
	})
	st.demand(st.children())
}

// listsDone is closed once the client's first lists may wait no longer
// for servers still starting (Options.listWait). The wait begins, once for
// the session, with the first request that needs what servers declare or
// list, which calls it; the channel is set before any call returns.
func (st *startup) listsDone() <-chan struct{} {
	st.waitOnce.Do(func() {
		if st.opts.listDeadline != nil {
			st.lists = st.opts.listDeadline(st, st.catalog.clientsName())
		} else {
			st.lists = st.closeAfter(st.firstListWait())
		}
	})
	return st.lists
}

// firstListWait is how long the client's first lists wait for servers
// still starting (Options.listWait): a client known to fetch lists again
// hears of a change only if its era lets it now (a 2026-07-28 client: on
// an open subscriptions/listen stream that asked for it); else it is
// served as one that lists once.
func (st *startup) firstListWait() time.Duration {
	refetches, budget := naming.Startup(st.catalog.clientsName())
	refetches = refetches && st.hears("notifications/tools/list_changed")
	return st.opts.listWaitFor(refetches, budget)
}

// closeAfter returns a channel closed after d, or at shutdown.
func (st *startup) closeAfter(d time.Duration) chan struct{} {
	ch := make(chan struct{})
	started := st.life.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-st.life.Context().Done():
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
func (st *startup) awaitLists(ctx context.Context, _ *call) bool {
	if st.allUp() {
		return true
	}
	st.demandAll()
	servers := st.servers()
	var awaited []*child
	for _, c := range *servers {
		if _, ok := c.standIn(c.Status()); !ok {
			awaited = append(awaited, c)
		}
	}
	waitEach(ctx, awaited, st.listsDone())
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
	st.allReady(servers)
	return true
}

// awaitNamed starts the server a call's tool or prompt name belongs to and
// waits until it runs or has failed (bounded by the start-up timeout):
// "not found" never stands for "not started yet". A name no configured
// server's prefix begins waits for nobody.
func (st *startup) awaitNamed(ctx context.Context, c *call) bool {
	name, ok := c.name()
	if !ok || st.catalog.listed(c) {
		return true
	}
	if owners, ok := st.catalog.compoundOwners(c, string(name)); ok {
		return st.awaitChildren(ctx, owners)
	}
	return st.awaitChildren(ctx, st.catalog.ownersOf(string(name)))
}

// awaitChildren starts cs and waits until each runs or has failed; false
// when ctx ended first.
func (st *startup) awaitChildren(ctx context.Context, cs []*child) bool {
	st.demand(cs)
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
func (st *startup) awaitURI(ctx context.Context, c *call) bool {
	uri, ok := c.uriString()
	if !ok {
		return true
	}
	return st.awaitOwnerOf(ctx, []string{uri})
}

// awaitOwnerOf starts every child and waits until each of uris is listed
// by a running child, or every child runs or has failed; false when ctx
// ended first. It looks again each time a child comes up or fails, in
// whatever order they do: a slow server does not hold up another's URI.
func (st *startup) awaitOwnerOf(ctx context.Context, uris []string) bool {
	if len(uris) == 0 || st.allUp() {
		return true
	}
	st.demandAll()
	var pending []*child
	for _, ch := range st.children() {
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
		if st.allListed(uris) {
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
func (st *startup) allListed(uris []string) bool {
	cs := st.children()
	for _, uri := range uris {
		found := false
		for _, c := range cs {
			if c.running() && c.capabilities().Resources && c.hasResource(uri) {
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
func (st *startup) awaitListen(ctx context.Context, c *call) bool {
	return st.awaitOwnerOf(ctx, readListFilter(c.params).uris)
}

// awaitCompletion waits as completion/complete's ref says: a prompt's
// server by its name, a resource template's owner by URI.
func (st *startup) awaitCompletion(ctx context.Context, c *call) bool {
	kind, _ := jsonrpc.StringMember(c.p.ref, "type")
	switch kind {
	case "ref/prompt":
		name, _ := jsonrpc.StringMember(c.p.ref, "name")
		if r, listed := st.catalog.registry().prompts[name]; listed && !r.remembered {
			return true
		}
		return st.awaitChildren(ctx, st.catalog.ownersOf(name))
	case "ref/resource":
		uri, _ := jsonrpc.StringMember(c.p.ref, "uri")
		return st.awaitOwnerOf(ctx, []string{uri})
	}
	return true
}

// awaitAllReady waits until every child runs or has failed, whatever the
// client's waits, then reports the names.
func (st *startup) awaitAllReady() {
	servers := st.servers()
	for _, c := range *servers {
		select {
		case <-c.Ready():
		case <-st.life.Context().Done():
			return
		}
	}
	st.allReady(servers)
}

// allReady marks the set of servers seen all started or failed, having
// reported the names once. The mark holds only while that set is the
// configured one (allUp): a reload publishes a new set, whose servers may
// still be starting, and a late mark of an older set marks nothing.
func (st *startup) allReady(servers *[]*child) {
	st.readyOnce.Do(st.catalog.reportNames)
	if servers == st.servers() { // a late mark of an older set marks nothing
		st.readyFor.Store(servers)
	}
}

// allUp reports whether every configured server has started or failed,
// so that no request need wait for one.
func (st *startup) allUp() bool {
	s := st.readyFor.Load()
	return s != nil && s == st.servers()
}

// listing notes that a list is being answered: one answered before every
// child is ready makes each child that comes up later announced (childUp).
// It is called before the list is read, so that a child coming up meanwhile
// is either in the list or announced.
func (st *startup) listing() {
	if !st.allUp() {
		st.listedSoon.Store(true)
	}
}

// childUp tells the client, once a child is up and in the registry, that
// its lists changed, when the client may have been answered a list
// without it (tools, and prompts and resources when it has them), or,
// when what it listed when it last ran was listed for it, with those of
// its lists that differ now (changedSince, which logs what changed).
func (st *startup) childUp(c *child) {
	if r, ok := c.recalled(); ok && !r.Failed {
		changed := c.changedSince(r)
		if c.quiet.Load() || !st.listedSoon.Load() {
			return
		}
		for _, method := range changed {
			st.tell(method)
		}
		return
	}
	if c.quiet.Load() || !st.listedSoon.Load() {
		return
	}
	st.log.Debugf("server %q: up after the client was answered a list; telling it the lists changed", c.key)
	announceLists(c.capabilities(), st.tell)
}

// awaitDeclarations starts the children nothing is known of and waits
// until each is up or has failed, or the client's first lists may wait no
// longer (the budget begins here, once for the session), so that a legacy
// client's initialize answer says what they declared, exactly. Those
// still unknown are logged: the answer offers them as any server.
func (st *startup) awaitDeclarations(ctx context.Context) {
	var unknown []*child
	for _, c := range st.children() {
		if c.unknown() {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) == 0 {
		return
	}
	done := st.listsDone()
	st.demand(unknown)
	waitEach(ctx, unknown, done)
	for _, c := range unknown {
		if c.unknown() {
			st.log.Warnf("server %q: not up within the client's first-list budget (%v), and nothing is remembered of it: initialize offers for it whatever the aggregator can relay; what it declares is offered exactly from the next session on",
				c.key, st.firstListWait())
		}
	}
}

// waitEach waits until each of cs is ready (up or failed), or done or ctx
// ends.
func waitEach(ctx context.Context, cs []*child, done <-chan struct{}) {
	for _, c := range cs {
		select {
		case <-c.Ready():
		case <-done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// startAdded starts the children a reload added to a session being
// served, as the client's session started the others, when the client has
// needed every server's lists (until then, they start as every other,
// when a request needs them, and are announced as every other). A changed
// server's new process starts once its old one has stopped (child.after).
// It returns the children it started: Reload announces their lists, once
// for all.
func (st *startup) startAdded(added []*child) []*child {
	if !st.allDemanded.Load() {
		return nil
	}
	for _, c := range added {
		c.quiet.Store(true)
	}
	st.demand(added)
	return added
}

// markUp marks next, the set of servers a reload is about to publish, as
// all started or failed: the reload only stops servers, and those it
// keeps were up (allUp).
func (st *startup) markUp(next *[]*child) { st.readyFor.Store(next) }
