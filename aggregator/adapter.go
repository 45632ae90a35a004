package aggregator

import (
	"bytes"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is where the two protocol eras meet, and the one place that
// asks which era a peer speaks, of the value at hand: a server's Modern,
// the client's era as its session began (clientSession.modern), a call's
// modern. The rest of the package calls what is here and never asks, but
// where an era is settled: the client's by initialize or by its first
// request admitted (route.go refuse, initialize.go), a
// server's by its probe (package server). The stateless conversions are
// package eras; the longer routines of one pair of eras have files of
// their own:
//
//   - input_modern.go: a modern client over a legacy server (a server's
//     request becomes input_required);
//   - input_legacy.go: a legacy client over a modern server (input_required
//     becomes requests to the client);
//   - initialize.go: a modern client's requests and its discover;
//   - child_modern.go: what the aggregator asks a server of the other era.

// era is the kind of protocol a peer speaks: legacy (2025-11-25 and
// earlier: an initialize handshake, then a session) or modern (2026-07-28:
// no handshake, every request carries its version and the client's
// capabilities in _meta). The client's era is settled by its first
// request that is served; each child's by how it answers its probe
// (package server, start.go).
type era int

// ModernVersion is the stateless protocol version the aggregator speaks;
// LatestVersion the newest of the versions reached through initialize.
// Both are package eras' (kept here for importers of this package).
const ModernVersion = eras.ModernVersion

var LatestVersion = eras.LatestLegacy

const (
	eraUnknown era = iota
	eraLegacy
	eraModern
)

func (e era) String() string {
	return [...]string{"unknown", "legacy", "modern"}[e]
}

// isModern reports whether params carry the modern era's protocol version
// in _meta (p is what readParams found in them).
func isModern(p *paramsView) bool {
	if p.meta == nil {
		return false
	}
	_, ok := jsonrpc.Member(p.meta, eras.MetaProtocolVersion)
	return ok
}

// unsupportedVersion is the -32022 answer for a version not served.
func unsupportedVersion(id []byte, requested string) []byte {
	return errorDataLine(id, eras.CodeUnsupportedVersion, "Unsupported protocol version: "+requested+" (mcp-simple-aggregator serves "+eras.ModernVersion+", or a 2025-11-25 or older version after initialize)", eras.UnsupportedVersionData(requested))
}

// modern reports whether the client is served the modern era; before its
// session began it is not (what reaches the client then waits at the
// gate, or is refused).
func (s *clientSession) modern() bool { return s.began.Load().era == eraModern }

// toServerEra adapts a request for a child of the other era, and reports
// whether it is to be sent: a modern child gets a legacy client's
// capabilities, clientInfo and log level in _meta; a legacy child is set
// to the log level a modern request asks for, and a modern client's call
// that may take input becomes an exchange (input_modern.go), or resumes
// one, which sends nothing.
func (a *Aggregator) toServerEra(c *call, t target) ([][]byte, bool) {
	params := t.parts[:]
	if t.child.Modern() == c.modern {
		return params, true
	}
	if !c.modern {
		c.childParams = eras.WithMeta(bytes.Join(params, nil), a.client.childMeta())
		return [][]byte{c.childParams}, true
	}
	if c.logLevel != "" {
		t.child.logLevelFor(c.logLevel)
		c.countedIn.Store(t.child)
	}
	if c.spec.input {
		if state, ok := jsonrpc.String(c.p.state); ok && isInputToken(state) {
			if bad := a.resume(c, state, t.child); bad != nil {
				c.answer(bad)
			}
			return nil, false
		}
		a.beginExchange(c)
	}
	return params, true
}

// toClientEra adapts a child's answer for a client of the other era, and
// reports whether it is to be delivered: a legacy child's result gets a
// modern client's resultType (and a read its caching hint), its "resource
// not found" the modern era's -32602; a modern child's result loses what
// the legacy era lacks, and its input_required starts the rounds of input
// for a legacy client (input_legacy.go), which deliver the final answer.
func (c *call) toClientEra(resp *jsonrpc.Message) (*jsonrpc.Message, bool) {
	modern := c.child.Modern()
	switch {
	case c.modern && !modern:
		up := *resp
		if resp.Error == nil {
			up.Result = eras.WithResultType(resp.Result, c.method == "resources/read")
		} else {
			up.Error = eras.ModernError(resp.Error)
		}
		return &up, true
	case modern && !c.modern && resp.Error == nil:
		if eras.IsInputRequired(resp.Result) {
			c.fulfil(resp)
			return nil, false
		}
		down := *resp
		down.Result = eras.LegacyResult(resp.Result)
		return &down, true
	}
	return resp, true
}

// listAnswer answers the call with a list the aggregator made: as it is
// for a legacy client; for a modern one with its resultType, the caching
// hint that hint gives and serverInfo (eras.ModernResult).
func (c *call) listAnswer(result []byte, hint func() eras.Hint) []byte {
	if c.modern {
		result = eras.ModernResult(result, hint(), c.a.client.serverInfo)
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// result answers the call with a result the aggregator made, with the
// resultType a modern client needs.
func (c *call) result(result []byte) []byte {
	if c.modern {
		result = eras.WithResultType(result, false)
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// resourceNotFound answers a read of a URI no server has: -32002 for a
// legacy call, -32602 (the modern era has no -32002) for a modern one.
func (c *call) resourceNotFound(uri string) []byte {
	code := codeResourceNotFound
	if c.modern {
		code = jsonrpc.CodeInvalidParams
	}
	data := jsonrpc.AppendString([]byte(`{"uri":`), uri)
	return errorDataLine(c.id, code, "Resource not found: "+uri, append(data, '}'))
}

// Opened: the server's session is open (server.Events). Before its lists
// are fetched, so that no change in between is missed, a modern server is
// listened to; a legacy one gets the log level the client set before,
// and a warning is logged when it speaks another version than a legacy
// client agreed.
func (c *child) Opened() {
	if c.Modern() {
		c.listenForChanges()
		return
	}
	if s, version := c.host.client.settled(), c.Status().Version; s.era == eraLegacy && s.version != version {
		c.host.log.Warnf("server %q speaks protocol version %s, the client %s; serving it as it is", c.key, version, s.version)
	}
	c.catchUpLevel()
}

// runs: the server runs (Up). A legacy one is set to the client's level
// again: a logging/setLevel that came after Opened passed it by, as it
// goes only to running servers (takesSetLevel); SetLevel sends nothing
// when the level is the one already set.
func (c *child) runs() {
	if !c.Modern() {
		c.catchUpLevel()
	}
}

// relayToClient relays a child's request to the client: a legacy client
// gets it as a request (requestClient); a modern client, which takes no
// requests, in the input_required answer of the call it belongs to
// (inputRequest).
func (c *child) relayToClient(m *jsonrpc.Message) {
	if c.host.client.modern() {
		c.inputRequest(m)
		return
	}
	c.requestClient(m)
}

// notifyClient passes a child's notification to the client; acknowledgements
// of the aggregator's own listens stay here. For a modern client a
// resource's update goes on the subscriptions/listen streams that want it,
// a legacy server's log messages only while a call of the client to it
// asked for them (they belong to no request), and the legacy era's
// elicitation/complete, which the modern era lacks, nowhere.
func (c *child) notifyClient(m *jsonrpc.Message) {
	if c.host.client.conn == nil || m.Method == "notifications/subscriptions/acknowledged" {
		return
	}
	if c.host.client.modern() {
		switch m.Method {
		case "notifications/resources/updated":
			params := c.host.relay.tiesToClient(c, m.Params) // on its lane: paced with the rest
			if c.Modern() {
				c.host.listens.updatedBySubscription(c.up, c, params)
			} else {
				c.host.listens.updatedByURI(c.up, c, params)
			}
			return
		case "notifications/elicitation/complete":
			return
		case "notifications/message":
			if !c.Modern() && c.logging.Load() <= 0 {
				return
			}
		}
	}
	c.up.Notify(m.Method, c.host.relay.tiesToClient(c, m.Params))
}

// notifyListChanged tells the client that a list changed: a legacy client
// at once; a modern client on each subscriptions/listen that asked for it.
func (a *Aggregator) notifyListChanged(method string) {
	if a.client.modern() {
		a.listens.listChanged(a.client.conn, method)
		return
	}
	a.client.conn.Notify(method, nil)
}

// clientHears reports whether the client would hear now that a list
// changed: a legacy client always; a modern one on an open
// subscriptions/listen stream that asked for it.
func (a *Aggregator) clientHears(method string) bool {
	return !a.client.modern() || a.listens.wants(method)
}

// rootsChanged passes the client's roots/list_changed to every legacy
// child (the modern era has no such notification).
func (a *Aggregator) rootsChanged(params []byte) {
	for _, c := range a.children() {
		if c.initialized() && !c.Modern() {
			c.Conn().Notify("notifications/roots/list_changed", params)
		}
	}
}

// takesSetLevel reports whether logging/setLevel is passed to the child:
// a running legacy child that declared logging (a modern one gets the
// level in the _meta of each request).
func (c *child) takesSetLevel() bool {
	return c.running() && c.capabilities().Logging && !c.Modern()
}

// watchable reports whether a client's subscription to a resource of the
// child can be watched: at a running modern child through a listen of the
// aggregator's, at a legacy one if it declared subscribe.
func (c *child) watchable() bool {
	return c.running() && (c.Modern() || c.capabilities().Subscribe)
}

// watch asks the child for updates of uris on stream l's behalf: a modern
// child through a listen of the aggregator's, a legacy one by
// resources/subscribe.
func (s *listenSet) watch(l *listen, c *child, uris []string) {
	if c.Modern() {
		s.listenAt(l, c, uris)
		return
	}
	s.subscribe(l, c, uris)
}

// hasSubscribe reports whether the child's era has resources/subscribe (a
// legacy client's subscription to a modern child is stood in for by a
// listen of the aggregator's).
func (c *child) hasSubscribe() bool { return !c.Modern() }
