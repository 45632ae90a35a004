package capabilities

import (
	"slices"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Merge appends to b the capabilities of an aggregator of servers that
// declared caps: tools always; prompts, resources, logging and completions
// when a server has them; extensions and experimental as the union of the
// servers' keys; tasks as the deep union of the servers' (every
// sub-capability some server declared); and every other key some server
// declared. Where servers disagree on a key's value, the first in caps
// gives it. The aggregator declares every list as one that changes, and
// resources.subscribe when a server does.
func Merge(b []byte, caps []Server) []byte {
	var some Server
	var tasks [][]byte
	for _, c := range caps {
		if c.tasks != nil {
			tasks = append(tasks, c.tasks)
		}
		some.Prompts = some.Prompts || c.Prompts
		some.Resources = some.Resources || c.Resources
		some.Subscribe = some.Subscribe || c.Subscribe
		some.Logging = some.Logging || c.Logging
		some.Completions = some.Completions || c.Completions
		some.extensions = union(some.extensions, c.extensions)
		some.experimental = union(some.experimental, c.experimental)
		some.others = union(some.others, c.others)
	}
	b = append(b, `{"tools":{"listChanged":true}`...)
	if some.Prompts {
		b = append(b, `,"prompts":{"listChanged":true}`...)
	}
	if some.Resources {
		b = append(b, `,"resources":{"listChanged":true`...)
		if some.Subscribe {
			b = append(b, `,"subscribe":true`...)
		}
		b = append(b, '}')
	}
	if some.Logging {
		b = append(b, `,"logging":{}`...)
	}
	if some.Completions {
		b = append(b, `,"completions":{}`...)
	}
	if len(tasks) > 0 {
		b = append(append(b, `,"tasks":`...), mergeObjects(tasks)...)
	}
	if len(some.experimental) > 0 {
		b = appendObject(append(b, `,"experimental":`...), some.experimental)
	}
	if len(some.extensions) > 0 {
		b = appendObject(append(b, `,"extensions":`...), some.extensions)
	}
	for _, m := range some.others {
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

// appendObject appends {"k":v,...} of members, their values as they are.
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
