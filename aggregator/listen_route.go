package aggregator

import (
	"context"
	"fmt"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file serves a modern client's subscriptions/listen and
// resources/subscribe: which servers a stream or a subscription goes to
// (the streams themselves are listen.go).

// listen serves subscriptions/listen: it acknowledges what the aggregator
// will send (list changes of lists some child has; the URIs some child
// serves and can watch), then relays those notifications, stamped with the
// stream's id, until the client cancels it. At shutdown the stream ends
// with its result.
func (a *Aggregator) listen(ctx context.Context, c *call) []byte {
	want := readListFilter(c.params)
	caps, _ := a.childOffers()
	l := &listen{c: c, end: make(chan struct{}), id: c.id, listFilter: listFilter{changes: make(map[string]bool)}}
	for i := range listKinds {
		if k := &listKinds[i]; want.changes[k.Changed] && k.OfferedBy(caps) {
			l.changes[k.Changed] = true
		}
	}
	owners := make(map[*child][]string)
	for i, o := range a.resourceOwners(ctx, want.uris) {
		if o != nil && o.watchable() {
			l.uris = append(l.uris, want.uris[i])
			owners[o] = append(owners[o], want.uris[i])
		}
	}
	if ctx.Err() != nil { // cancelled (or shutdown) while the owners were found
		return a.endedListen(ctx, c)
	}
	a.listens.add(a.client.conn, l)
	for o, uris := range owners {
		a.listens.watch(l, o, uris)
	}
	select {
	case <-ctx.Done():
	case <-l.end:
	}
	a.listens.remove(l)
	return a.endedListen(ctx, c)
}

// endedListen is the answer of a stream that has ended: none when the
// client cancelled it, else its result.
func (a *Aggregator) endedListen(ctx context.Context, c *call) []byte {
	if ctx.Err() != nil && a.life.Context().Err() == nil {
		return nil // cancelled by the client: no answer
	}
	result := append(append([]byte(`{"resultType":"complete","_meta":{"`+eras.MetaSubscriptionID+`":`), c.id...), "}}"...)
	return jsonrpc.AppendResult(nil, c.id, result)
}

// resourceOwners finds the server that owns each URI, running or down
// (uriOwner); when one has none, it refreshes the lists once, for
// resources that appeared since, and looks again.
func (a *Aggregator) resourceOwners(ctx context.Context, uris []string) []*child {
	owners := make([]*child, len(uris))
	missed := false
	for i, uri := range uris {
		owners[i] = a.uriOwner(uri)
		missed = missed || owners[i] == nil
	}
	if missed {
		a.refreshEach(ctx, a.resourceChildren(), "resources/list", refreshResources)
		for i, uri := range uris {
			if owners[i] == nil {
				owners[i] = a.uriOwner(uri)
			}
		}
	}
	return owners
}

// routeSubscribe routes resources/subscribe and unsubscribe by URI. A
// modern child has neither: for a legacy client, a listen of the
// aggregator's at the child stands for the subscription, and the request is
// answered here.
func (a *Aggregator) routeSubscribe(ctx context.Context, c *call) (target, []byte) {
	t, bad := a.routeByURI(ctx, c)
	if t.child != nil && !t.child.capabilities().Subscribe {
		// Offered before the server started (capabilities.Pending): it
		// never hears of what it did not declare.
		return target{}, errorLine(c.id, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: server %q does not offer %s", t.child.key, c.method))
	}
	if t.child == nil || t.child.hasSubscribe() {
		return t, bad
	}
	uri, _ := c.uriString()
	a.listens.standIn(t.child, uri, c.method == "resources/subscribe")
	return target{}, jsonrpc.AppendResult(nil, c.id, []byte("{}"))
}
