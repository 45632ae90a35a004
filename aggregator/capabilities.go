package aggregator

import (
	"slices"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientCapabilities are what the client declared: whether it takes the
// requests the aggregator relays from children, and what children get.
type clientCapabilities struct {
	relayed     map[string]bool // of relayedClientCapabilities, those declared
	forChildren []byte          // the capabilities children are initialized with
}

// declared reports whether the client declared the capability ("" is
// always declared).
func (caps clientCapabilities) declared(name string) bool {
	return name == "" || caps.relayed[name]
}

// raw returns the capabilities as the client wrote them ({} before it
// declared any).
func (caps clientCapabilities) raw() []byte {
	if caps.forChildren == nil {
		return []byte("{}")
	}
	return caps.forChildren
}

// relayedClientCapabilities are the client capabilities whose requests the
// aggregator relays from children to the client.
var relayedClientCapabilities = []string{"sampling", "elicitation", "roots", "tasks"}

// parseClientCapabilities takes the client's capabilities. Children get
// them as the client wrote them, every member (extensions, experimental,
// tasks, and keys not invented yet).
func parseClientCapabilities(raw []byte) clientCapabilities {
	caps := clientCapabilities{relayed: make(map[string]bool), forChildren: []byte("{}")}
	ms, err := jsonrpc.Members(raw)
	if err != nil {
		return caps
	}
	for _, m := range ms {
		if slices.Contains(relayedClientCapabilities, m.Key) && string(m.Value) != "null" {
			caps.relayed[m.Key] = true
		}
	}
	caps.forChildren = raw // byte for byte
	return caps
}

// appendObject appends {"k":v,...} of members.
func appendObject(b []byte, ms []jsonrpc.RawMember) []byte {
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, m.Key)
		b = append(append(b, ':'), m.Value...)
	}
	return append(b, '}')
}

// childCapabilities are the server capabilities a child declared: what the
// router needs to know, and the members it merges without understanding.
type childCapabilities struct {
	tools, prompts, resources, subscribe, logging, completions bool
	apps                                                       bool // declared the MCP Apps extension
	tasksList                                                  bool // declared tasks.list
	tasks                                                      []byte
	extensions, experimental                                   []jsonrpc.RawMember
	others                                                     []jsonrpc.RawMember // keys the aggregator does not know
}

// appsExtension is the MCP Apps extension's key in extensions.
const appsExtension = "io.modelcontextprotocol/ui"

// knownServerCapabilities are the members that mergeCapabilities writes
// itself.
var knownServerCapabilities = []string{"tools", "prompts", "resources", "logging", "completions", "extensions", "experimental", "tasks"}

func parseServerCapabilities(result []byte) childCapabilities {
	var caps childCapabilities
	raw, _ := jsonrpc.Member(result, "capabilities")
	ms, _ := jsonrpc.Members(raw)
	for _, m := range ms {
		on := string(m.Value) != "null" && string(m.Value) != "false"
		switch m.Key {
		case "tools":
			caps.tools = on
		case "prompts":
			caps.prompts = on
		case "resources":
			caps.resources = on
			sub, _ := jsonrpc.Member(m.Value, "subscribe")
			caps.subscribe = string(sub) == "true"
		case "logging":
			caps.logging = on
		case "completions":
			caps.completions = on
		case "extensions":
			caps.extensions, _ = jsonrpc.Members(m.Value)
			_, caps.apps = jsonrpc.Member(m.Value, appsExtension)
		case "experimental":
			caps.experimental, _ = jsonrpc.Members(m.Value)
		case "tasks":
			if on {
				caps.tasks = m.Value
				_, caps.tasksList = jsonrpc.Member(m.Value, "list")
			}
		default:
			if !slices.Contains(knownServerCapabilities, m.Key) {
				caps.others = append(caps.others, m)
			}
		}
	}
	return caps
}

// mergeCapabilities appends the capabilities of the aggregator: tools
// always; prompts, resources, logging and completions when a child has
// them; extensions and experimental as the union of the children's keys;
// tasks as the deep union of the children's (every sub-capability some
// child declared); and every other key some child declared. Where children
// disagree on a key's value, the first in config order gives it.
func mergeCapabilities(b []byte, caps []childCapabilities) []byte {
	var any childCapabilities
	var tasks [][]byte
	for _, c := range caps {
		if c.tasks != nil {
			tasks = append(tasks, c.tasks)
		}
		any.prompts = any.prompts || c.prompts
		any.resources = any.resources || c.resources
		any.subscribe = any.subscribe || c.subscribe
		any.logging = any.logging || c.logging
		any.completions = any.completions || c.completions
		any.extensions = union(any.extensions, c.extensions)
		any.experimental = union(any.experimental, c.experimental)
		any.others = union(any.others, c.others)
	}
	b = append(b, `{"tools":{"listChanged":true}`...)
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
	if len(tasks) > 0 {
		b = append(append(b, `,"tasks":`...), mergeObjects(tasks)...)
	}
	if len(any.experimental) > 0 {
		b = appendObject(append(b, `,"experimental":`...), any.experimental)
	}
	if len(any.extensions) > 0 {
		b = appendObject(append(b, `,"extensions":`...), any.extensions)
	}
	for _, m := range any.others {
		b = append(jsonrpc.AppendString(append(b, ','), m.Key), ':')
		b = append(b, m.Value...)
	}
	return append(b, '}')
}

// union adds to ms the members of more whose keys it lacks.
func union(ms, more []jsonrpc.RawMember) []jsonrpc.RawMember {
	for _, m := range more {
		if !slices.ContainsFunc(ms, func(x jsonrpc.RawMember) bool { return x.Key == m.Key }) {
			ms = append(ms, m)
		}
	}
	return ms
}

// mergeObjects is the deep union of JSON objects: every key of any of
// them; a key that several give objects merged in turn, else the first
// value.
func mergeObjects(objs [][]byte) []byte {
	var keys []jsonrpc.RawMember
	values := make(map[string][][]byte)
	for _, o := range objs {
		ms, _ := jsonrpc.Members(o)
		for _, m := range ms {
			if _, seen := values[m.Key]; !seen {
				keys = append(keys, m)
			}
			values[m.Key] = append(values[m.Key], m.Value)
		}
	}
	for i, m := range keys {
		vs := values[m.Key]
		if len(vs) > 1 && !slices.ContainsFunc(vs, func(v []byte) bool { return len(v) == 0 || v[0] != '{' }) {
			keys[i].Value = mergeObjects(vs)
		}
	}
	return appendObject(nil, keys)
}
