package aggregator

import (
	"bytes"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// This file applies a changed config to a live session: servers added,
// removed or changed, and the client told of the lists that changed.

// Reload applies the servers of a config read anew while the client stays
// connected. An entry new to the config is started (and its session opened
// as the client's were: initialize with what the client declared, or the
// 2026-07-28 probe); an entry gone from it is stopped, its calls in flight
// answered with an error naming it and the reload; a changed entry
// (command, args, env after expansion, or cwd) is stopped, then started
// anew; an unchanged entry is left alone: the same process, calls in
// flight going on, and a server that crashed earlier stays down. An entry
// whose filters or renames alone changed (config.Tools) keeps its process
// too: the lists are rebuilt with the new view. Once the servers
// started are up (or failed), the client hears one list_changed for each
// list that changed (tools, prompts, resources), not one per server.
// Names do not depend on which other servers run (internal/naming), so no name
// changes because another server came or went. Reload returns when it is
// done; one reload runs at a time. compound are the config's compound
// tools (none: there are none); a change of them restarts nothing either.
func (a *Aggregator) Reload(servers []config.Server, compound ...config.Compound) {
	a.reloadMu.Lock()
	defer a.reloadMu.Unlock()
	if a.life.Stopping() {
		return
	}
	a.log.Hide(servers)
	old := a.children()
	next, added, retired, viewed := diffServers(a, old, servers)
	if a.catalog.setCompound(compound) {
		viewed++
	}
	if len(added) == 0 && len(retired) == 0 {
		if viewed == 0 {
			a.log.Debugf("config reloaded: no server changed")
			return
		}
		before := a.catalog.registry()
		a.catalog.rebuild()
		a.announceReload(before, listsTouched{})
		a.log.Debugf("config reloaded: what %d server(s) expose changed; 0 server(s) started, 0 stopped", viewed)
		return
	}
	a.catalog.pinNames()
	before := a.catalog.registry()
	touched := retiredLists(retired)
	if a.serving { // lanes before they are published: a request may start one at once
		for _, c := range added {
			c.up = a.client.conn.NewLane()
		}
	}
	// A new set of servers is not up (allUp) until each of it is seen so:
	// calls of the added servers wait for them (startup.go), not "not found".
	wasUp := a.start.allUp()
	if wasUp && len(added) == 0 { // only stops: the servers kept are up
		a.start.markUp(&next)
	}
	a.servers.Store(&next)

	var wg sync.WaitGroup
	for _, r := range retired {
		a.log.Debugf("config reloaded: stopping server %q (%s)", r.c.key, r.why)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.done)
			r.c.Retire(r.why)
			a.listens.forgetChild(r.c)
		}()
	}
	var started []*child
	if a.serving {
		started = a.start.startAdded(added)
	}
	wg.Wait()
	for _, c := range started {
		select {
		case <-c.Ready(): // start bounds it by the start-up timeout
		case <-a.life.Context().Done():
			return
		}
		if st := c.Status(); st.Failure != nil {
			a.log.Debugf("config reloaded: server %q did not start: %v", c.key, st.Failure)
		} else {
			a.log.Debugf("config reloaded: server %q started", c.key)
		}
		touched = touched.or(c.capabilities())
	}
	if wasUp && (len(added) == 0 || len(started) > 0) { // what was up still is, and what it started is ready
		a.start.allReady(&next)
	}
	a.catalog.rebuild()
	a.announceReload(before, touched)
	a.log.Debugf("config reloaded: %d server(s) started, %d stopped", len(added), len(retired))
}

// retiring is a server a reload stops, and why.
type retiring struct {
	c    *child
	why  string
	done chan struct{} // closed once it has stopped
}

// diffServers compares the running children with the servers of a new
// config: it returns the children to run, in the new config's order, those
// of them that are new, those to stop, and how many of those kept got a
// new view of their tools (what their entry exposes: filter.go), which
// does not restart them.
func diffServers(a *Aggregator, old []*child, servers []config.Server) (next, added []*child, retired []retiring, viewed int) {
	byKey := make(map[string]*child, len(old))
	for _, c := range old {
		byKey[c.key] = c
	}
	kept := make(map[*child]bool, len(old))
	for _, s := range servers {
		c, ok := byKey[s.Key]
		if ok && c.server.Same(s) {
			next = append(next, c)
			kept[c] = true
			if c.setTools(s.Tools) {
				viewed++
			}
			continue
		}
		var after <-chan struct{}
		if ok {
			r := retiring{c, "changed in the config: " + changeOf(c.server, s), make(chan struct{})}
			retired = append(retired, r)
			after = r.done // its process starts once the old one has stopped
			kept[c] = true // not "removed" below
		}
		nc := newChild(a.host, s, after)
		next, added = append(next, nc), append(added, nc)
	}
	for _, c := range old {
		if !kept[c] {
			retired = append(retired, retiring{c, "removed from the config", make(chan struct{})})
		}
	}
	return next, added, retired, viewed
}

// changeOf says what differs between two entries of one key.
func changeOf(was, now config.Server) string {
	var what []string
	if was.Command != now.Command {
		what = append(what, "command")
	}
	if !slices.Equal(was.Args, now.Args) {
		what = append(what, "args")
	}
	if !slices.Equal(was.Env, now.Env) {
		what = append(what, "env")
	}
	if was.Dir != now.Dir {
		what = append(what, "cwd")
	}
	return strings.Join(what, ", ")
}

// listsTouched says whether a reload may have changed lists beyond the
// registry's (which compares itself): those of the kinds not in the
// registry (resources), of servers that offer them.
type listsTouched struct{ unregistered bool }

func (t listsTouched) or(caps capabilities.Server) listsTouched {
	for i := range listKinds {
		if k := &listKinds[i]; k.registered == nil && k.Offered(caps) {
			t.unregistered = true
		}
	}
	return t
}

func retiredLists(retired []retiring) listsTouched {
	var t listsTouched
	for _, r := range retired {
		if r.c.running() {
			t = t.or(r.c.capabilities())
		}
	}
	return t
}

// announceReload tells the client, once, of each list a reload changed.
func (a *Aggregator) announceReload(before *registry, touched listsTouched) {
	after := a.catalog.registry()
	for i := range listKinds {
		k := &listKinds[i]
		changed := touched.unregistered
		if k.registered != nil {
			changed = !bytes.Equal(k.registered(before), k.registered(after))
		}
		if changed {
			a.tellClient(k.Changed)
		}
	}
}
