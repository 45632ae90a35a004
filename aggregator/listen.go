package aggregator

import (
	"slices"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is a modern client's subscriptions/listen streams (listenSet):
// which streams want which lists and URIs, what each server is asked for
// them, and the notifications stamped for each stream. Serving
// subscriptions/listen and resources/subscribe is listen_route.go.

// listenSet holds a modern client's open subscriptions/listen streams and
// what each asked the children for its resource URIs: a modern child gets
// a listen of its own for them, a legacy child resources/subscribe (one
// per URI, however many of the client's streams want it).
type listenSet struct {
	mu       sync.Mutex // protects the fields below; outside server.Server.mu (see the package doc)
	open     []*listen
	legacy   map[*child]map[string]int // resources/subscribe sent, by child and URI: how many streams want it
	byChild  map[*child]map[string]*listen
	standIns map[childURI][]byte // a legacy client's resources/subscribe to a modern child: the id of the listen standing for it
}

// listen is one subscriptions/listen stream of the client.
type listen struct {
	c   *call         // the listen request: once the client cancels it, nothing more is sent on it
	end chan struct{} // closed when the aggregator ends the stream (shutdown)
	id  []byte        // the client's request id: the subscription id
	// listFilter is what it gets: the list changes it asked for of the
	// lists some server offers, its URIs some server serves and can watch.
	listFilter
	atChildren []childListen // the listens opened at modern children for its URIs
	subscribed []childURI    // the legacy children's URIs it counts in listenSet.legacy
}

// stamp returns params for a notification on the stream: its params with
// the subscription id in _meta.
func (l *listen) stamp(params []byte) []byte {
	return eras.EditMeta(params, func(meta []byte) []byte {
		if meta != nil {
			if m, err := jsonrpc.ReplaceMember(meta, eras.MetaSubscriptionID, l.id); err == nil {
				return m
			}
		}
		return append(append([]byte(`{"`+eras.MetaSubscriptionID+`":`), l.id...), '}')
	})
}

// childListen is a listen opened at a modern child for a client's stream.
type childListen struct {
	c  *child
	id []byte // its id at the child
}

type childURI struct {
	c   *child
	uri string
}

// listFilter is the notifications member of subscriptions/listen.
type listFilter struct {
	changes map[string]bool // the list_changed notifications asked for, by method (listKinds)
	uris    []string
}

func readListFilter(params []byte) listFilter {
	f, _ := jsonrpc.Member(params, "notifications")
	on := func(key string) bool { v, _ := jsonrpc.Member(f, key); return string(v) == "true" }
	lf := listFilter{changes: make(map[string]bool)}
	for _, k := range listKinds {
		if on(k.Listen) {
			lf.changes[k.Changed] = true
		}
	}
	raw, _ := jsonrpc.Member(f, "resourceSubscriptions")
	elems, _ := jsonrpc.Elements(raw)
	seen := make(map[string]bool, len(elems))
	for _, e := range elems {
		if uri, ok := jsonrpc.String(e); ok && !seen[uri] {
			seen[uri] = true
			lf.uris = append(lf.uris, uri)
		}
	}
	return lf
}

// appendTo appends the filter as subscriptions/listen's params (and its
// acknowledgement's): {"notifications":{...}}, the list changes in the
// order of listKinds, then the URIs. It is the one builder of them.
func (f listFilter) appendTo(b []byte) []byte {
	b = append(b, `{"notifications":{`...)
	sep := ""
	for _, k := range listKinds {
		if f.changes[k.Changed] {
			b = append(b, sep+`"`+k.Listen+`":true`...)
			sep = ","
		}
	}
	if len(f.uris) > 0 {
		b = append(b, sep+`"resourceSubscriptions":[`...)
		for i, u := range f.uris {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonrpc.AppendString(b, u)
		}
		b = append(b, ']')
	}
	return append(b, "}}"...)
}

// add opens the stream: the acknowledgement first, under the lock, so that
// no notification of the stream can go before it.
func (s *listenSet) add(up *jsonrpc.Conn, l *listen) {
	ack := l.listFilter.appendTo(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	up.Notify("notifications/subscriptions/acknowledged", l.stamp(ack))
	s.open = append(s.open, l)
}

// endAll ends every stream, each with its result: the client's input has
// ended, and the aggregator is shutting down.
func (s *listenSet) endAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.open {
		select {
		case <-l.end:
		default:
			close(l.end)
		}
	}
}

// listenAt asks a modern child for updates of uris on the stream's behalf,
// with a listen of the aggregator's.
func (s *listenSet) listenAt(l *listen, c *child, uris []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, err := c.openListen(listFilter{uris: uris}, func(*jsonrpc.Message, error) {})
	if err == nil {
		l.atChildren = append(l.atChildren, childListen{c, id})
		if s.byChild == nil {
			s.byChild = make(map[*child]map[string]*listen)
		}
		if s.byChild[c] == nil {
			s.byChild[c] = make(map[string]*listen)
		}
		s.byChild[c][jsonrpc.Key(id)] = l
	}
}

// subscribe asks a legacy child for updates of uris on the stream's
// behalf: resources/subscribe goes, once for all streams, under the lock,
// so that it cannot cross the unsubscribe of a stream that ends (Go never
// blocks: the child's writes are queued).
func (s *listenSet) subscribe(l *listen, c *child, uris []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.legacy == nil {
		s.legacy = make(map[*child]map[string]int)
	}
	if s.legacy[c] == nil {
		s.legacy[c] = make(map[string]int)
	}
	for _, uri := range uris {
		l.subscribed = append(l.subscribed, childURI{c, uri})
		if s.legacy[c][uri]++; s.legacy[c][uri] == 1 {
			c.resourceRequest("resources/subscribe", uri)
		}
	}
}

// remove ends the stream: its listens at children are cancelled, and the
// URIs no other stream wants are unsubscribed.
func (s *listenSet) remove(l *listen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = slices.DeleteFunc(s.open, func(x *listen) bool { return x == l })
	for _, cl := range l.atChildren {
		delete(s.byChild[cl.c], jsonrpc.Key(cl.id))
		cl.c.Conn().Cancel(cl.id, nil)
	}
	for _, cu := range l.subscribed {
		if s.legacy[cu.c][cu.uri]--; s.legacy[cu.c][cu.uri] == 0 {
			delete(s.legacy[cu.c], cu.uri)
			if cu.c.running() {
				cu.c.resourceRequest("resources/unsubscribe", cu.uri)
			}
		}
	}
}

// wants reports whether an open stream asks for the list_changed method.
func (s *listenSet) wants(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.open, func(l *listen) bool { return !l.c.IsCancelled() && l.changes[method] })
}

// listChanged sends a list_changed notification on every stream that asked
// for it.
func (s *listenSet) listChanged(up *jsonrpc.Conn, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.open {
		if l.c.IsCancelled() {
			continue
		}
		if l.changes[method] {
			up.Notify(method, l.stamp(nil))
		}
	}
}

// updatedBySubscription sends a modern child's
// notifications/resources/updated on the stream whose listen at the child
// it names.
func (s *listenSet) updatedBySubscription(up notifier, c *child, params []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.byChild[c][jsonrpc.Key(eras.SubscriptionID(params))]; ok && !l.c.IsCancelled() {
		up.Notify("notifications/resources/updated", l.stamp(params))
	}
}

// updatedByURI sends a legacy child's notifications/resources/updated on
// every stream that wants its URI.
func (s *listenSet) updatedByURI(up notifier, c *child, params []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	uri, _ := jsonrpc.StringMember(params, "uri")
	for _, l := range s.open {
		if slices.Contains(l.subscribed, childURI{c, uri}) && !l.c.IsCancelled() {
			up.Notify("notifications/resources/updated", l.stamp(params))
		}
	}
}

// standIn opens (on) or ends the listen at a modern child that stands for a
// legacy client's subscription to uri.
func (s *listenSet) standIn(c *child, uri string, on bool) {
	key := childURI{c, uri}
	s.mu.Lock()
	defer s.mu.Unlock()
	id, open := s.standIns[key]
	switch {
	case on && !open:
		id, err := c.openListen(listFilter{uris: []string{uri}}, func(*jsonrpc.Message, error) {})
		if err == nil {
			if s.standIns == nil {
				s.standIns = make(map[childURI][]byte)
			}
			s.standIns[key] = id
		}
	case !on && open:
		delete(s.standIns, key)
		c.Conn().Cancel(id, nil)
	}
}

// forgetChild drops what the streams keep about a child a reload stopped:
// its subscriptions end with it, and the set keeps no reference to it.
func (s *listenSet) forgetChild(c *child) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.legacy, c)
	delete(s.byChild, c)
	for key := range s.standIns {
		if key.c == c {
			delete(s.standIns, key)
		}
	}
	for _, l := range s.open {
		l.atChildren = slices.DeleteFunc(l.atChildren, func(cl childListen) bool { return cl.c == c })
		l.subscribed = slices.DeleteFunc(l.subscribed, func(cu childURI) bool { return cu.c == c })
	}
}

// openListen sends a subscriptions/listen of the aggregator's for f to a
// modern child, with the _meta of the client's era, without waiting; done
// gets its end. It returns the listen's id at the child.
func (c *child) openListen(f listFilter, done func(*jsonrpc.Message, error)) ([]byte, error) {
	params := eras.WithMeta(f.appendTo(nil), c.host.client.childMeta())
	return c.Conn().Go("subscriptions/listen", params, done)
}

// resourceRequest sends resources/subscribe or unsubscribe for uri to a
// legacy child, without waiting: a failure is logged.
func (c *child) resourceRequest(method, uri string) {
	params := append(jsonrpc.AppendString([]byte(`{"uri":`), uri), '}')
	c.Conn().Go(method, params, func(m *jsonrpc.Message, err error) {
		if err == nil && m.Error != nil {
			err = rawError(m.Error)
		}
		if err != nil && c.host.life.Context().Err() == nil {
			c.host.log.Warnf("server %q: %s %s: %v", c.key, method, uri, err)
		}
	})
}
