package aggregator

import (
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

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

// modernRequest is what the _meta of a modern request says.
type modernRequest struct {
	version  string
	caps     []byte // the client's capabilities, raw
	info     []byte // clientInfo, raw; nil when absent
	logLevel string
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

// readModern checks the _meta of a modern request and returns what it
// says, or the error line to answer: -32602 for a missing key, -32022 for
// a version the aggregator does not serve.
func readModern(c *call) (modernRequest, []byte) {
	var r modernRequest
	if !c.p.object || c.p.meta == nil || c.p.meta[0] != '{' {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: a "+eras.ModernVersion+" request needs params._meta (an object) with \""+eras.MetaProtocolVersion+"\" and \""+eras.MetaClientCapabilities+"\"")
	}
	version, ok := jsonrpc.StringMember(c.p.meta, eras.MetaProtocolVersion)
	if !ok {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta needs \""+eras.MetaProtocolVersion+"\" (a string)")
	}
	if !slices.Contains(eras.ModernVersions, version) {
		return r, unsupportedVersion(c.id, version)
	}
	caps, ok := jsonrpc.Member(c.p.meta, eras.MetaClientCapabilities)
	if !ok || caps[0] != '{' {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta needs \""+eras.MetaClientCapabilities+"\" (an object)")
	}
	r = modernRequest{version: version, caps: caps}
	r.info, _ = jsonrpc.Member(c.p.meta, eras.MetaClientInfo)
	if level, ok := jsonrpc.Member(c.p.meta, eras.MetaLogLevel); ok {
		if r.logLevel, ok = jsonrpc.String(level); !ok || !eras.IsLogLevel(r.logLevel) {
			return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta[\""+eras.MetaLogLevel+"\"] must be one of "+strings.Join(eras.LogLevels, ", ")+", not "+string(level))
		}
	}
	return r, nil
}

// unsupportedVersion is the -32022 answer for a version not served.
func unsupportedVersion(id []byte, requested string) []byte {
	return errorDataLine(id, eras.CodeUnsupportedVersion, "Unsupported protocol version: "+requested+" (mcp-simple-aggregator serves "+eras.ModernVersion+", or a 2025-11-25 or older version after initialize)", eras.UnsupportedVersionData(requested))
}
