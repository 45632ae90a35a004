package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is what the session knows of the eras: the client's era and
// how a request shows its own, and the answers the aggregator makes itself
// in the client's era. What differs between the eras is done in adapter.go.

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
