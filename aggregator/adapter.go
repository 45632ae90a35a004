package aggregator

import (
	"bytes"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is where the two protocol eras meet. A server's era
// (serverEra) and the client's (clientEra) are each an interface, declared
// in era.go; which one a peer has is chosen here (child.era,
// clientSession.era), and both are implemented here, for the legacy and
// the modern era; the rest of the package asks them what to do and never
// asks which era a peer speaks. What a request and its answer
// become between a client and a server of different eras is toServerEra
// and toClientEra (below); the stateless conversions themselves are
// package eras; the longer routines of one pair of eras have files of
// their own:
//
//   - input_modern.go: a modern client over a legacy server (a server's
//     request becomes input_required);
//   - input_legacy.go: a legacy client over a modern server (input_required
//     becomes requests to the client);
//   - discover.go, era.go: a modern client's requests and its discover;
//     the client's era is settled as its first request is admitted
//     (route.go refuse);
//   - child_modern.go: a server's notifications for the client's era.

// era is the server's era: legacy until its probe found it modern.
func (c *child) era() serverEra {
	if c.Modern() {
		return modernServer{}
	}
	return legacyServer{}
}

// era is the client's era; before the session began, the legacy era's
// (what reaches the client then waits at the gate, or is refused).
func (s *clientSession) era() clientEra {
	if s.began.Load().era == eraModern {
		return modernClient{}
	}
	return legacyClient{}
}

// toServerEra adapts a request for a child of the other era, and reports
// whether it is to be sent: a modern child gets a legacy client's
// capabilities, clientInfo and log level in _meta; a legacy child is set
// to the log level a modern request asks for, and a modern client's call
// that may take input becomes an exchange (input_modern.go), or resumes
// one, which sends nothing.
func (a *Aggregator) toServerEra(c *call, t target) ([][]byte, bool) {
	params := t.parts[:]
	if t.child.era().isModern() == c.modern {
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

func (legacyServer) opened(c *child) {
	c.host.client.era().serverVersion(c, c.Status().Version)
	c.catchUpLevel()
}
func (legacyServer) rootsChanged(c *child, params []byte) {
	c.Conn().Notify("notifications/roots/list_changed", params)
}
func (legacyServer) setsLevelAlone() bool                                   { return true }
func (legacyServer) watchable(caps capabilities.Server) bool                { return caps.Subscribe }
func (legacyServer) watch(s *listenSet, l *listen, c *child, uris []string) { s.subscribe(l, c, uris) }
func (legacyServer) updated(s *listenSet, up notifier, c *child, params []byte) {
	s.updatedByURI(up, c, params)
}
func (legacyServer) logsFollowCalls() bool { return true }
func (legacyServer) hasSubscribe() bool    { return true }
func (legacyServer) isModern() bool        { return false }

func (modernServer) opened(c *child)                                        { c.listenForChanges() }
func (modernServer) rootsChanged(*child, []byte)                            {} // the era has no such notification
func (modernServer) setsLevelAlone() bool                                   { return false }
func (modernServer) watchable(capabilities.Server) bool                     { return true } // subscriptions/listen
func (modernServer) watch(s *listenSet, l *listen, c *child, uris []string) { s.listenAt(l, c, uris) }
func (modernServer) updated(s *listenSet, up notifier, c *child, params []byte) {
	s.updatedBySubscription(up, c, params)
}
func (modernServer) logsFollowCalls() bool { return false }
func (modernServer) hasSubscribe() bool    { return false }
func (modernServer) isModern() bool        { return true }

func (legacyClient) relayRequest(c *child, m *jsonrpc.Message) { c.requestClient(m) }
func (legacyClient) listChanged(a *Aggregator, method string) {
	a.client.conn.Notify(method, nil)
}
func (legacyClient) hears(*Aggregator, string) bool             { return true }
func (legacyClient) notification(*child, *jsonrpc.Message) bool { return false }
func (legacyClient) serverVersion(c *child, version string) {
	if s := c.host.client.began.Load(); s.version != version && s.received {
		c.host.log.Warnf("server %q speaks protocol version %s, the client %s; serving it as it is", c.key, version, s.version)
	}
}

func (modernClient) relayRequest(c *child, m *jsonrpc.Message) { c.inputRequest(m) }
func (modernClient) listChanged(a *Aggregator, method string) {
	a.listens.listChanged(a.client.conn, method)
}
func (modernClient) hears(a *Aggregator, method string) bool { return a.listens.wants(method) }

// notification: a resource's update goes on the subscriptions/listen
// streams that want it, a legacy server's log messages only while a call
// of the client to it asked for them (they belong to no request), and the
// legacy era's elicitation/complete, which the modern era lacks, nowhere.
func (modernClient) notification(c *child, m *jsonrpc.Message) bool {
	switch m.Method {
	case "notifications/resources/updated":
		c.era().updated(c.host.listens, c.up, c, c.host.relay.tiesToClient(c, m.Params)) // on its lane: paced with the rest
		return true
	case "notifications/elicitation/complete":
		return true
	case "notifications/message":
		return c.era().logsFollowCalls() && c.logging.Load() <= 0
	}
	return false
}
func (modernClient) serverVersion(*child, string) {} // every request carries its version

// toClientEra adapts a child's answer for a client of the other era, and
// reports whether it is to be delivered: a legacy child's result gets a
// modern client's resultType (and a read its caching hint), its "resource
// not found" the modern era's -32602; a modern child's result loses what
// the legacy era lacks, and its input_required starts the rounds of input
// for a legacy client (input_legacy.go), which deliver the final answer.
func (c *call) toClientEra(resp *jsonrpc.Message) (*jsonrpc.Message, bool) {
	modern := c.child.era().isModern()
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
