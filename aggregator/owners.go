package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/uritemplate"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Who owns what a server may speak of: a resource URI, a URL-mode
// elicitation. Requests about a URI go to its owner alone, and a server's
// notifications about a URI or an elicitation reach the client only from
// their owner, so that no server speaks for another.
//
// A URI's owner is, among the servers that run or have died (a server
// that died keeps what it listed), the first in config order that listed
// the URI itself; else the server whose template matching it is the most
// specific (uritemplate.Rank), whatever the config order; config order
// decides only between templates of equal rank. A URI whose owner is down
// gets an error naming it, and is never routed to another.

// uriOwner is the server that owns uri, running or down (see above); nil
// when none does, or its owner is still starting. It only looks: it never
// waits, so a reader may ask.
func (a *Aggregator) uriOwner(uri string) *child {
	cs := a.children()
	for _, c := range cs {
		if c.settled() && c.hasResource(uri) {
			return c
		}
	}
	var best *child
	var bestRank uritemplate.Rank
	for _, c := range cs {
		if !c.settled() {
			continue
		}
		if r, ok := c.templateMatch(uri); ok && (best == nil || r.MoreSpecific(bestRank)) {
			best, bestRank = c, r
		}
	}
	return best
}

// resourceUpdated passes the server's notifications/resources/updated on
// when the server owns its URI: a server cannot tell the client that
// another's resource changed.
func (c *child) resourceUpdated(params []byte) {
	uri, _ := jsonrpc.StringMember(params, "uri")
	if owner := c.host.uriOwner(uri); owner != c {
		c.host.log.Debugf("server %q: resources/updated for %q, a URI it does not own, dropped", c.key, uri)
		return
	}
	c.notifyClient(&jsonrpc.Message{Method: "notifications/resources/updated", Params: params})
}

// elicitationComplete passes the server's notifications/elicitation/complete
// on when the elicitation is one of its own, once: a server cannot tell the
// user that another's sign-in is done.
func (c *child) elicitationComplete(params []byte) {
	id, _ := jsonrpc.StringMember(params, "elicitationId")
	if !c.elicitations.take(id) {
		c.host.log.Debugf("server %q: elicitation/complete for %q, which is none of its URL elicitations, dropped", c.key, id)
		return
	}
	c.notifyClient(&jsonrpc.Message{Method: "notifications/elicitation/complete", Params: params})
}

// noteElicitation records the elicitationId of a URL-mode
// elicitation/create of the server that goes up to the client.
func (c *child) noteElicitation(params []byte) {
	if mode, _ := jsonrpc.StringMember(params, "mode"); mode != "url" {
		return
	}
	if id, ok := jsonrpc.StringMember(params, "elicitationId"); ok {
		c.elicitations.add(id)
	}
}

// noteRequiredElicitations records the elicitationIds of a -32042 error
// (URL elicitation required) the server answered a call with: its
// data.elicitations went up to the client.
func (c *child) noteRequiredElicitations(errObj []byte) {
	if code, _ := jsonrpc.Member(errObj, "code"); string(code) != "-32042" {
		return
	}
	data, _ := jsonrpc.Member(errObj, "data")
	list, _ := jsonrpc.Member(data, "elicitations")
	items, _ := jsonrpc.Elements(list)
	for _, it := range items {
		c.noteElicitation(it)
	}
}
