package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is a server's list entries by name (namedEntry) and the list
// results the aggregator builds from them, byte for byte.

// namedEntry is a tool or prompt as the registry names it: a server's
// entry, under its exposed name.
type namedEntry struct {
	name    string // the server's name, decoded; a renamed tool's exposed name (filter.go)
	rawName []byte // the server's name token, as it wrote it
	raw     []byte // the whole entry
	renamed bool   // name is the exposed name its config entry gives it, not the server's
}

func namedEntries(es []server.Entry) []namedEntry {
	out := make([]namedEntry, len(es))
	for i, e := range es {
		out[i] = namedEntry{name: e.Name, rawName: e.RawName, raw: e.Raw}
	}
	return out
}

// entryNames are the names of entries es.
func entryNames(es []server.Entry) []string {
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return names
}

// withFullName is a listed entry whose name was shortened, with "(FULL) "
// at the start of its description (or as its
// description), so that the model still knows which tool it is: FULL is
// KEY+separator+name as the server gave it.
func withFullName(entry []byte, full string) []byte {
	text := "(" + full + ")"
	if desc, _ := jsonrpc.StringMember(entry, "description"); desc != "" {
		text += " " + desc
	}
	b, err := jsonrpc.ReplaceMember(entry, "description", jsonrpc.AppendString(nil, text))
	if err != nil { // the child's entry was parsed already: cannot happen
		return entry
	}
	return b
}

// listResult builds {"FIELD":[e1,e2,...]} from raw entries.
func listResult(field string, entries [][]byte) []byte {
	n := len(field) + 8
	for _, e := range entries {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = appendArray(b, entries)
	return append(b, '}')
}

// jsonArray is [e1,e2,...] of raw entries.
func jsonArray(entries [][]byte) []byte { return appendArray(nil, entries) }

func appendArray(b []byte, entries [][]byte) []byte {
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
}
