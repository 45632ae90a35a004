// This file bounds how long the client waits for servers still starting,
// and announces the servers that come up after it was answered.

package aggregator

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
)

// DefaultInitializeWait is the default of Options.InitializeWait: the
// client's initialize is answered within it whatever the servers do (a
// cold `npx -y` server takes 15-25 s), with the servers up by then; the
// others go on starting, and their tools follow with
// notifications/tools/list_changed. Clients do not wait long for a server
// before their first model request (measured: Claude Code 2.1.197 in
// print mode about 2 s, codex exec 0.169 about 1 s), so the tools of the
// servers that are up must be listed well within that.
const DefaultInitializeWait = time.Second

// startWaits bound how long the client waits for children still starting:
// its initialize (or server/discover) answer, and its first lists, both
// counted from the beginning of its session. Before the session begins
// (--check), waits are not bounded.
type startWaits struct {
	mu    sync.Mutex    // protects init and lists
	init  chan struct{} // closed once initialize may wait no longer
	lists chan struct{} // closed once lists may wait no longer
}

// initDone is closed once the initialize answer may wait no longer; nil
// (never ready) before the session began.
func (w *startWaits) initDone() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.init
}

// listsDone is closed once lists may wait no longer; nil before the
// session began.
func (w *startWaits) listsDone() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lists
}

// beginClient begins the client's session: names are formed for the client
// it names, its waits for children still starting are bounded from now on
// (Options.InitializeWait, Options.listWait), and the names are reported
// once every child is up.
func (a *Aggregator) beginClient(clientName string) {
	a.setNaming(clientName, a.opts.namingFor(clientName))
	a.waits.mu.Lock()
	a.waits.init = a.closeAfter(a.opts.InitializeWait)
	a.waits.lists = a.closeAfter(a.opts.listWait(clientName))
	a.waits.mu.Unlock()
	a.log.Debugf("client %q: initialize waits up to %v for servers still starting, the first lists up to %v",
		clientName, a.opts.InitializeWait, a.opts.listWait(clientName))
	a.life.goServe(a.awaitAllReady)
}

// closeAfter returns a channel closed after d, or at shutdown.
func (a *Aggregator) closeAfter(d time.Duration) chan struct{} {
	ch := make(chan struct{})
	started := a.life.goServe(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-a.life.ctx.Done():
		}
		close(ch)
	})
	if !started {
		close(ch)
	}
	return ch
}

// waitInited waits until every child has opened its session or failed, or
// initialize may wait no longer; false when ctx ended first.
func (a *Aggregator) waitInited(ctx context.Context) bool {
	for _, ch := range a.children() {
		select {
		case <-ch.inited:
		case <-a.waits.initDone():
			return true
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// waitReady waits until every child runs or has failed, or the lists may
// wait no longer (then what is up is served, and the rest announced as it
// comes: childUp); false when ctx ended first. When every child is ready,
// it reports the names, the first time, before any waiter goes on.
func (a *Aggregator) waitReady(ctx context.Context) bool {
	if a.ready.Load() {
		return true
	}
	for _, c := range a.children() {
		select {
		case <-c.ready:
		case <-a.waits.listsDone():
			return true
		case <-ctx.Done():
			return false
		}
	}
	a.allReady()
	return true
}

// awaitAllReady waits until every child runs or has failed, whatever the
// client's waits, then reports the names.
func (a *Aggregator) awaitAllReady() {
	for _, c := range a.children() {
		select {
		case <-c.ready:
		case <-a.life.ctx.Done():
			return
		}
	}
	a.allReady()
}

// allReady marks every child started or failed, having reported the
// names once.
func (a *Aggregator) allReady() {
	a.readyOnce.Do(a.reportNames)
	a.ready.Store(true)
}

// listing notes that a list is being answered: one answered before every
// child is ready makes each child that comes up later announced (childUp).
// It is called before the list is read, so that a child coming up meanwhile
// is either in the list or announced.
func (a *Aggregator) listing() {
	if !a.ready.Load() {
		a.listedSoon.Store(true)
	}
}

// childUp tells the client, once a child is up and in the registry, that
// its lists changed, when the client may have been answered a list
// without it: tools, and prompts and resources when it has them.
func (a *Aggregator) childUp(c *child) {
	if c.quiet.Load() || !a.listedSoon.Load() {
		return
	}
	a.log.Debugf("server %q: up after the client was answered a list; telling it the lists changed", c.key)
	a.tellClient("notifications/tools/list_changed")
	caps := c.capabilities()
	if caps.Prompts {
		a.tellClient("notifications/prompts/list_changed")
	}
	if caps.Resources {
		a.tellClient("notifications/resources/list_changed")
	}
}

// pendingOffers are the capabilities the initialize answer declares for
// the children still starting, whose own are not known yet: lists that
// may change (tools always are), so that the client asks for them and
// takes their changes.
func (a *Aggregator) pendingOffers() (capabilities.Server, bool) {
	for _, c := range a.children() {
		select {
		case <-c.inited:
		default:
			return capabilities.Server{Tools: true, Prompts: true, Resources: true}, true
		}
	}
	return capabilities.Server{}, false
}
