package aggregator

import (
	"context"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is a legacy client's initialize: the session's answer, and
// the initialize each server gets from what the client declared.

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
