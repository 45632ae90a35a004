package aggregator

import (
	"context"
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Protocol versions the aggregator speaks, oldest first.
var supportedVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// LatestVersion is the newest protocol version the aggregator speaks.
var LatestVersion = supportedVersions[len(supportedVersions)-1]

func isSupported(version string) bool {
	for _, v := range supportedVersions {
		if v == version {
			return true
		}
	}
	return false
}

// clientCapabilities are the client capabilities the aggregator can relay to
// children.
type clientCapabilities struct {
	relayed     map[string]bool // of relayedClientCapabilities, those declared
	forChildren []byte          // the relayable members, raw
}

// declared reports whether the client declared the capability ("" is
// always declared).
func (caps clientCapabilities) declared(name string) bool {
	return name == "" || caps.relayed[name]
}

// relayedClientCapabilities are the client capabilities passed to children:
// the ones whose requests the aggregator relays from children to the client.
var relayedClientCapabilities = []string{"sampling", "elicitation", "roots"}

func parseClientCapabilities(raw []byte) clientCapabilities {
	caps := clientCapabilities{relayed: make(map[string]bool)}
	b := []byte{'{'}
	ms, _ := jsonrpc.Members(raw)
	for _, m := range ms {
		if !slices.Contains(relayedClientCapabilities, m.Key) || string(m.Value) == "null" {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, m.Key)
		b = append(append(b, ':'), m.Value...)
		caps.relayed[m.Key] = true
	}
	caps.forChildren = append(b, '}')
	return caps
}

// childCapabilities are the server capabilities a child declared.
type childCapabilities struct {
	tools, prompts, resources, subscribe, logging, completions bool
}

func parseServerCapabilities(result []byte) childCapabilities {
	var caps childCapabilities
	raw, ok := jsonrpc.Member(result, "capabilities")
	if !ok {
		return caps
	}
	has := func(name string) bool {
		v, ok := jsonrpc.Member(raw, name)
		return ok && string(v) != "null" && string(v) != "false"
	}
	caps.tools, caps.prompts, caps.resources = has("tools"), has("prompts"), has("resources")
	caps.logging, caps.completions = has("logging"), has("completions")
	if res, ok := jsonrpc.Member(raw, "resources"); ok {
		sub, _ := jsonrpc.Member(res, "subscribe")
		caps.subscribe = string(sub) == "true"
	}
	return caps
}

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
	if !isSupported(version) {
		version = LatestVersion
	}
	caps, _ := jsonrpc.Member(c.params, "capabilities")
	if !a.client.begin(version, parseClientCapabilities(caps)) {
		return errorLine(c.id, jsonrpc.CodeInvalidRequest, "Invalid Request: initialize was already received")
	}
	a.log.Debugf("client asked for protocol version %s; serving %s", requested, version)
	clientInfo, _ := jsonrpc.Member(c.params, "clientInfo")
	clientName, _ := jsonrpc.StringMember(clientInfo, "name")
	a.setNaming(clientName, a.opts.namingFor(clientName))
	a.goServe(func() { a.waitReady(a.ctx) }) // reports the names
	return nil
}

// setNaming sets how names are formed for the client, before any child
// has listed a name. A --separator that breaks the strict form is kept
// (an explicit choice wins), with a warning.
func (a *Aggregator) setNaming(clientName string, n naming) {
	a.regMu.Lock()
	a.naming, a.clientName = n, clientName
	a.regMu.Unlock()
	a.log.Debugf("names for client %q: %q between server key and name, strict form: %t", clientName, n.sep, n.strict)
	if n.strict && !conforms("k"+n.sep+"t") {
		a.log.Warnf("%s accepts only tool names matching %s, and withholds every tool of a server when one name does not: --separator %q breaks it in every name; without --separator it gets %q",
			clientLabel(clientName), strictPattern, n.sep, strictSep)
	}
}

// finishInitialize initializes every child with the agreed version and the
// client's relayable capabilities, and answers the client once every child
// has answered its initialize (or failed, or timed out).
func (a *Aggregator) finishInitialize(ctx context.Context, c *call) []byte {
	clientInfo, ok := jsonrpc.Member(c.params, "clientInfo")
	if !ok {
		clientInfo = a.serverInfo()
	}
	s := a.client.state()
	a.initializeChildren(childInitParams(s.version, s.caps.forChildren, clientInfo))
	for _, ch := range a.children {
		select {
		case <-ch.inited:
		case <-ctx.Done():
			return nil
		}
	}
	return jsonrpc.AppendResult(nil, c.id, a.initializeResult(s.version))
}

func childInitParams(version string, caps, clientInfo []byte) []byte {
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, version)
	b = append(append(b, `,"capabilities":`...), caps...)
	b = append(append(b, `,"clientInfo":`...), clientInfo...)
	return append(b, '}')
}

// initializeChildren initializes every child in parallel.
func (a *Aggregator) initializeChildren(params []byte) {
	for _, c := range a.children {
		a.goServe(func() { c.start(params) })
	}
}

func (a *Aggregator) serverInfo() []byte {
	b := []byte(`{"name":`)
	b = jsonrpc.AppendString(b, a.opts.Name)
	b = jsonrpc.AppendString(append(b, `,"version":`...), a.opts.Version)
	return append(b, '}')
}

// initializeResult advertises what at least one initialized child offers,
// and joins the children's instructions under their keys.
func (a *Aggregator) initializeResult(version string) []byte {
	var any childCapabilities
	var instructions []string
	for _, c := range a.children {
		s := c.status()
		if s.version == "" || s.state == stateFailed {
			continue
		}
		any.prompts = any.prompts || s.caps.prompts
		any.resources = any.resources || s.caps.resources
		any.subscribe = any.subscribe || s.caps.subscribe
		any.logging = any.logging || s.caps.logging
		any.completions = any.completions || s.caps.completions
		if s.instructions != "" {
			instructions = append(instructions, "## "+c.key+"\n\n"+s.instructions)
		}
	}
	b := []byte(`{"protocolVersion":`)
	b = jsonrpc.AppendString(b, version)
	b = append(b, `,"capabilities":{"tools":{"listChanged":true}`...)
	if any.prompts {
		b = append(b, `,"prompts":{"listChanged":true}`...)
	}
	if any.resources {
		b = append(b, `,"resources":{"listChanged":true`...)
		if any.subscribe {
			b = append(b, `,"subscribe":true`...)
		}
		b = append(b, '}')
	}
	if any.logging {
		b = append(b, `,"logging":{}`...)
	}
	if any.completions {
		b = append(b, `,"completions":{}`...)
	}
	b = append(append(b, `},"serverInfo":`...), a.serverInfo()...)
	if len(instructions) > 0 {
		b = jsonrpc.AppendString(append(b, `,"instructions":`...), strings.Join(instructions, "\n\n"))
	}
	return append(b, '}')
}
