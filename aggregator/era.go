package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is what the session knows of the eras: the client's era and
// how a request shows its own, the interfaces a server's era and the
// client's answer to (serverEra, clientEra: which one a peer has is chosen
// and implemented in adapter.go), and the answers the aggregator makes
// itself in the client's era.

// era is the kind of protocol a peer speaks: legacy (2025-11-25 and
// earlier: an initialize handshake, then a session) or modern (2026-07-28:
// no handshake, every request carries its version and the client's
// capabilities in _meta). The client's era is settled by its first
// request that is served; each child's by how it answers its probe
// (package server, start.go). What differs between the eras is asked of adapter.go.
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

// serverEra is what differs in how the aggregator speaks to a server of
// one era.
type serverEra interface {
	// opened runs once the server's session is open, before its lists are
	// fetched, so that no change in between is missed: a modern server is
	// listened to; a legacy one gets the log level the client set before,
	// and a warning is logged when it speaks another version than the
	// client agreed.
	opened(c *child)
	// rootsChanged passes the client's notifications/roots/list_changed
	// on, where the era has it.
	rootsChanged(c *child, params []byte)
	// setsLevelAlone reports whether the server is set to a log level by
	// logging/setLevel (the modern era carries it in each request).
	setsLevelAlone() bool
	// watchable reports whether a resource of a server with caps can be
	// watched for a client's subscription.
	watchable(caps capabilities.Server) bool
	// watch asks the server for updates of uris on stream l's behalf.
	watch(s *listenSet, l *listen, c *child, uris []string)
	// updated sends a resource update of the server on the streams it
	// belongs to.
	updated(s *listenSet, up notifier, c *child, params []byte)
	// logsFollowCalls reports whether the server's log messages belong to
	// no request (a legacy server's), so that a modern client gets them
	// only while one of its calls to the server asked for logs.
	logsFollowCalls() bool
	// hasSubscribe reports whether the era has resources/subscribe (a
	// legacy client's subscription to a modern server is stood in for by
	// a listen of the aggregator's).
	hasSubscribe() bool
	// isModern is for toServerEra and toClientEra, which pair the eras.
	isModern() bool
}

// legacyServer is a server of the 2025-11-25 era or older.
type legacyServer struct{}

// modernServer is a server of the 2026-07-28 era.
type modernServer struct{}

// clientEra is what differs in how the aggregator serves a client of one
// era.
type clientEra interface {
	// relayRequest relays a server's request to the client: a legacy
	// client gets it as a request; a modern client, which takes no
	// requests, in the input_required answer of the call it belongs to.
	relayRequest(c *child, m *jsonrpc.Message)
	// listChanged tells the client that a list changed.
	listChanged(a *Aggregator, method string)
	// hears reports whether the client would hear now that a list
	// changed: a legacy client always; a modern one on an open
	// subscriptions/listen stream that asked for it.
	hears(a *Aggregator, method string) bool
	// notification handles a server's notification that the era does
	// not pass as it is (sends it elsewhere, or drops it), and reports
	// whether it did; the rest go to the client as they are.
	notification(c *child, m *jsonrpc.Message) (handled bool)
	// serverVersion warns when a server speaks another version than the
	// client agreed.
	serverVersion(c *child, version string)
}

// legacyClient is a client that initialized the session.
type legacyClient struct{}

// modernClient is a client of the 2026-07-28 era.
type modernClient struct{}

// listAnswer answers the call with a list the aggregator made: as it is
// for a legacy client; for a modern one with its resultType, the caching
// hint that hint gives and serverInfo (eras.ModernResult).
func (c *call) listAnswer(result []byte, hint func() eras.Hint) []byte {
	if c.modern {
		result = eras.ModernResult(result, hint(), c.a.serverInfo())
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
