package aggregator

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the start of the client's session, in either era: a legacy
// client's initialize, or a modern client's first request, which settle
// what the session knows of its client (clientSession.begin) and how the
// servers' sessions will be opened (beginClient); and the answers, to
// initialize and to server/discover, with what the servers offer.

// acceptInitialize negotiates the protocol version with the client and
// takes its capabilities, on the reader goroutine, so that the requests
// read after initialize find it received. It returns the error to answer
// when initialize is refused.
func (a *Aggregator) acceptInitialize(c *call) []byte {
	requested, ok := jsonrpc.StringMember(c.params, "protocolVersion")
	if !ok {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: initialize needs params.protocolVersion (a string)")
	}
	version := requested
	if !eras.IsLegacy(version) {
		version = eras.LatestLegacy
	}
	caps, _ := jsonrpc.Member(c.params, "capabilities")
	clientInfo, _ := jsonrpc.Member(c.params, "clientInfo")
	if !a.client.begin(clientInit{era: eraLegacy, version: version, caps: capabilities.ParseClient(caps), info: clientInfo}) {
		return errorLine(c.id, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize was already received")
	}
	a.log.Debugf("client asked for protocol version %s; serving %s", requested, version)
	a.beginClient(a.client.plan(version, false))
	return nil
}

// finishInitialize answers initialize with what the servers declared
// (childOffers): at once, starting no server, when each is remembered
// (memory.go); else once those nothing is known of are up, within the
// client's first-list budget (awaitDeclarations). Servers start when a
// request needs them (startup.go), initialized with the agreed version and
// the client's relayable capabilities.
func (a *Aggregator) finishInitialize(ctx context.Context, c *call) []byte {
	a.start.awaitDeclarations(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return jsonrpc.AppendResult(nil, c.id, a.initializeResult(a.client.settled().version))
}

// initializeResult advertises what the initialized children offer
// (capabilities.Merge), and joins their instructions under their keys.
func (a *Aggregator) initializeResult(version string) []byte {
	caps, instructions := a.childOffers()
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, version)
	b = append(b, `,"capabilities":`...)
	b = capabilities.Merge(b, caps)
	b = append(append(b, `,"serverInfo":`...), a.client.serverInfo...)
	if instructions != "" {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), instructions)
	}
	return append(b, '}')
}

// childOffers are the capabilities of the children whose session is open;
// for the others, what they declared when they last ran (Memory), and
// capabilities.Pending once for all of which nothing is remembered; and
// their instructions joined under their keys. A child dropped, or whose
// last start failed and of which nothing else is remembered, offers
// nothing.
func (a *Aggregator) childOffers() ([]capabilities.Server, string) {
	var caps []capabilities.Server
	var instructions []string
	pending := false
	for _, c := range a.children() {
		s := c.Status()
		if s.State == server.Failed {
			continue
		}
		if s.Version == "" {
			// Not started, or its session not open yet: what it declared
			// when it last ran; nothing when its last start failed; and
			// when nothing is remembered, what any server may offer.
			r, ok := c.recalled()
			switch {
			case !ok:
				pending = true
				continue
			case r.Failed:
				continue
			}
			s.Caps, s.Instructions = r.Caps, r.Instructions
		}
		caps = append(caps, s.Caps)
		if s.Instructions != "" {
			instructions = append(instructions, "## "+c.key+"\n\n"+s.Instructions)
		}
	}
	if pending {
		caps = append([]capabilities.Server{capabilities.Pending()}, caps...)
	}
	return caps, strings.Join(instructions, "\n\n")
}

// beginClient begins the client's session, which client.begin settled,
// with the plan its children are started with: names are formed for the
// client its clientInfo names, and the lists hold what the servers listed
// when they last ran (memory.go). Nothing starts yet: see demand.
func (a *Aggregator) beginClient(plan server.Plan) {
	clientName, _ := jsonrpc.StringMember(a.client.settled().info, "name")
	a.catalog.setNaming(clientName, a.opts.namingFor(clientName))
	a.start.begin(plan)
	a.catalog.rebuild()
	a.log.Debugf("client %q: its first lists wait up to %v for servers not remembered and still starting", clientName, a.opts.listWait(clientName))
}

// A modern (2026-07-28) client has no initialize: each of its requests is
// admitted by what its _meta says (acceptModern, readModern), its first
// settles the session (beginModern), and its server/discover is answered
// with what the servers offer, as initialize is.

// acceptModern checks a request of the modern era, on the reader
// goroutine: the methods the era removed are refused, the _meta is read
// (readModern), and the first such request begins the session.
func (a *Aggregator) acceptModern(c *call, s *clientInit) []byte {
	if instead := eras.RemovedInModern[c.method]; instead != "" {
		if c.method == "initialize" && s.era == eraModern {
			return errorLine(c.id, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize after requests of protocol "+eras.ModernVersion+" on this connection")
		}
		return errorLine(c.id, jsonrpc.CodeMethodNotFound, "Method not found: "+c.method+" is not part of protocol "+eras.ModernVersion+" (replaced by "+instead+")")
	}
	r, bad := readModern(c)
	if bad != nil {
		return bad
	}
	c.modern = true
	c.logLevel = r.logLevel
	if s.era == eraUnknown {
		a.beginModern(r)
	}
	return nil
}

// modernRequest is what the _meta of a modern request says.
type modernRequest struct {
	version  string
	caps     []byte // the client's capabilities, raw
	info     []byte // clientInfo, raw; nil when absent
	logLevel string
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

// beginModern begins a session of the modern era with the first modern
// request: its capabilities and clientInfo stand for the client's in what
// the aggregator asks children on its own, and names are formed for the
// client it names. Children start, probed with server/discover, when a
// request needs them.
func (a *Aggregator) beginModern(r modernRequest) {
	a.client.begin(clientInit{era: eraModern, version: eras.ModernVersion, caps: capabilities.ParseClient(r.caps), info: r.info})
	a.beginClient(a.client.plan(eras.LatestLegacy, true))
	a.log.Debugf("client speaks protocol %s (%s); each server is probed with server/discover when it starts", eras.ModernVersion, printable.Clip(r.info))
	a.openGate() // a modern session has no notifications/initialized
}

// serveDiscover answers server/discover at once, starting no server, as
// initialize is answered: a probe that closes its input costs no process.
func (a *Aggregator) serveDiscover(_ context.Context, c *call) []byte {
	caps, instructions := a.childOffers()
	b := eras.AppendVersions([]byte(`{"resultType":"complete","supportedVersions":`))
	b = capabilities.Merge(append(b, `,"capabilities":`...), caps)
	if instructions != "" {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), instructions)
	}
	b = eras.AppendHint(b, a.discoverHint())
	b = append(append(b, `,"_meta":{"`+eras.MetaServerInfo+`":`...), a.client.serverInfo...)
	return jsonrpc.AppendResult(nil, c.id, append(b, "}}"...))
}

// discoverHint merges the hints of the children's discover results (a
// legacy child's: stale at once). A child not started yet, offered as it
// declared when it last started or as any server may (childOffers), makes
// the answer stale at once and private: it is a guess, not to be kept.
func (a *Aggregator) discoverHint() eras.Hint {
	var hs []eras.Hint
	for _, c := range a.children() {
		switch {
		case c.initialized():
			hs = append(hs, c.hint(func(h *server.Hints) eras.Hint { return h.Discover }))
		case !c.dropped():
			hs = append(hs, eras.Hint{})
		}
	}
	return eras.MergeHints(hs, time.Now())
}
