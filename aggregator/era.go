package aggregator

import (
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// era is the kind of protocol a peer speaks: legacy (2025-11-25 and
// earlier: an initialize handshake, then a session) or modern (2026-07-28:
// no handshake, every request carries its version and the client's
// capabilities in _meta). The client's era is settled by its first
// request that is served; each child's by how it answers (child_era.go).
type era int

const (
	eraUnknown era = iota
	eraLegacy
	eraModern
)

func (e era) String() string {
	return [...]string{"unknown", "legacy", "modern"}[e]
}

// ModernVersion is the stateless protocol version the aggregator speaks.
const ModernVersion = "2026-07-28"

// modernVersions are the versions of the modern era the aggregator serves:
// what server/discover lists and -32022 names. The legacy versions are not
// listed: they are reached through initialize, not through _meta.
var modernVersions = []string{ModernVersion}

// The _meta keys of the modern era.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
	metaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes of the modern era.
const (
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
)

// removedInModern are the methods a modern client may not send, with what
// replaced them.
var removedInModern = map[string]string{
	"initialize":            "server/discover and the _meta of each request",
	"ping":                  "nothing: every request stands alone",
	"logging/setLevel":      "_meta[\"" + metaLogLevel + "\"] on each request",
	"resources/subscribe":   "subscriptions/listen with resourceSubscriptions",
	"resources/unsubscribe": "the cancel of its subscriptions/listen",
}

// onlyModern are the methods only the modern era has.
var onlyModern = map[string]bool{"server/discover": true, "subscriptions/listen": true}

// modernRequest is what the _meta of a modern request says.
type modernRequest struct {
	version  string
	caps     []byte // clientCapabilities, raw
	info     []byte // clientInfo, raw; nil when absent
	logLevel string
}

// isModern reports whether params carry the modern era's protocol version
// in _meta (p is what readParams found in them).
func isModern(p *paramsView) bool {
	if p.meta == nil {
		return false
	}
	_, ok := jsonrpc.Member(p.meta, metaProtocolVersion)
	return ok
}

// readModern checks the _meta of a modern request and returns what it
// says, or the error line to answer: -32602 for a missing key, -32022 for
// a version the aggregator does not serve.
func readModern(c *call) (modernRequest, []byte) {
	var r modernRequest
	if !c.p.object || c.p.meta == nil || c.p.meta[0] != '{' {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: a "+ModernVersion+" request needs params._meta (an object) with \""+metaProtocolVersion+"\" and \""+metaClientCapabilities+"\"")
	}
	version, ok := jsonrpc.StringMember(c.p.meta, metaProtocolVersion)
	if !ok {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta needs \""+metaProtocolVersion+"\" (a string)")
	}
	if !slices.Contains(modernVersions, version) {
		return r, unsupportedVersion(c.id, version)
	}
	caps, ok := jsonrpc.Member(c.p.meta, metaClientCapabilities)
	if !ok || caps[0] != '{' {
		return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta needs \""+metaClientCapabilities+"\" (an object)")
	}
	r = modernRequest{version: version, caps: caps}
	r.info, _ = jsonrpc.Member(c.p.meta, metaClientInfo)
	if level, ok := jsonrpc.Member(c.p.meta, metaLogLevel); ok {
		if r.logLevel, ok = jsonrpc.String(level); !ok || !isLogLevel(r.logLevel) {
			return r, errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: params._meta[\""+metaLogLevel+"\"] must be one of "+strings.Join(logLevels, ", ")+", not "+string(level))
		}
	}
	return r, nil
}

// logLevels are the levels of MCP logging (RFC 5424's severities), least
// severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func isLogLevel(s string) bool { return slices.Contains(logLevels, s) }

// unsupportedVersion is the -32022 answer for a version not served.
func unsupportedVersion(id []byte, requested string) []byte {
	data := []byte(`{"supported":[`)
	for i, v := range modernVersions {
		if i > 0 {
			data = append(data, ',')
		}
		data = jsonrpc.AppendString(data, v)
	}
	data = jsonrpc.AppendString(append(data, `],"requested":`...), requested)
	return errorDataLine(id, codeUnsupportedVersion, "Unsupported protocol version: "+requested+" (mcp-simple-aggregator serves "+ModernVersion+", or a 2025-11-25 or older version after initialize)", append(data, '}'))
}
