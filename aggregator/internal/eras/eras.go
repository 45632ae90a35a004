// Package eras holds the stateless transforms between the two eras of the
// Model Context Protocol: the legacy era (2025-11-25 and earlier: an
// initialize handshake, then a session) and the modern era (2026-07-28: no
// handshake; every request carries its version, the client's capabilities
// and clientInfo in _meta, and every result its resultType). Each function
// takes raw JSON and returns raw JSON, keeping every byte it does not
// change: what only passes through is never decoded and re-encoded. The
// aggregator decides when to apply them (its era adapter); this package
// knows nothing of servers, clients or sessions.
package eras

import "slices"

// ModernVersion is the stateless protocol version served.
const ModernVersion = "2026-07-28"

// ModernVersions are the versions of the modern era served: what
// server/discover lists and -32022 names. The legacy versions are not
// listed: they are reached through initialize, not through _meta.
var ModernVersions = []string{ModernVersion}

// The _meta keys of the modern era.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
)

// Error codes of the modern era.
const (
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// RemovedInModern are the methods a modern client may not send, with what
// replaced them.
var RemovedInModern = map[string]string{
	"initialize":            "server/discover and the _meta of each request",
	"ping":                  "nothing: every request stands alone",
	"logging/setLevel":      "_meta[\"" + MetaLogLevel + "\"] on each request",
	"resources/subscribe":   "subscriptions/listen with resourceSubscriptions",
	"resources/unsubscribe": "the cancel of its subscriptions/listen",
}

// OnlyModern are the methods only the modern era has.
var OnlyModern = map[string]bool{"server/discover": true, "subscriptions/listen": true}

// LogLevels are the levels of MCP logging (RFC 5424's severities), least
// severe first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// IsLogLevel reports whether s is one of LogLevels.
func IsLogLevel(s string) bool { return slices.Contains(LogLevels, s) }
