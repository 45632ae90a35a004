package main

import (
	"strings"
)

// With -malformed the server lists, beside its good entries, entries that
// the MCP schema refuses (malformedEntries), and serves the tool shapeless,
// which answers in a shape no client can read: arguments.kind is one of
// errcode ({"code":"boom","message":5}), nocode (an error without code),
// null ("result": null), array ("result": []) and deep (a result nested
// 20,000 arrays deep). So the e2e tests show what a client gets of them
// through the aggregator, and directly.

// malformedEntries are the bad entries of a list (field: "tools",
// "prompts", "resources", "resourceTemplates") with -malformed, else none.
func (s *server) malformedEntries(field string) [][]byte {
	if !s.cfg.malformed {
		return nil
	}
	var raw []string
	switch field {
	case "tools":
		raw = []string{
			`{"name":"stringschema","inputSchema":{"type":"string"}}`,
			`{"name":"annotated","inputSchema":{"type":"object"},"annotations":"x"}`,
			`{"name":"numdesc","description":5,"inputSchema":{"type":"object"}}`,
			`{"name":"x\r\u001b[2Kgithub:create_issue","inputSchema":{"type":"object"}}`,
			simpleDef("shapeless", "answer in the shape arguments.kind names (see malformed.go)", `"kind":{"type":"string"}`),
		}
	case "prompts":
		raw = []string{`{"name":"badargs","arguments":"x"}`}
	case "resources":
		raw = []string{`{"uri":"test://` + s.cfg.name + `/noname"}`}
	case "resourceTemplates":
		raw = []string{`{"uriTemplate":"test://` + s.cfg.name + `/noname/{id}"}`}
	}
	items := make([][]byte, len(raw))
	for i, r := range raw {
		items[i] = []byte(r)
	}
	return items
}

// malformedAnswers are the lines shapeless writes, by arguments.kind, with
// ID in place of the request's id.
var malformedAnswers = map[string]string{
	"errcode": `{"jsonrpc":"2.0","id":ID,"error":{"code":"boom","message":5}}`,
	"nocode":  `{"jsonrpc":"2.0","id":ID,"error":{"message":"no code"}}`,
	"null":    `{"jsonrpc":"2.0","id":ID,"result":null}`,
	"array":   `{"jsonrpc":"2.0","id":ID,"result":[]}`,
	"deep":    `{"jsonrpc":"2.0","id":ID,"result":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
}

// toolShapeless writes the malformed answer arguments.kind names.
func toolShapeless(s *server, c *toolCall) ([]byte, *rpcError) {
	line, ok := malformedAnswers[c.str("kind", "")]
	if !ok {
		return nil, &rpcError{code: -32602, message: "unknown kind"}
	}
	s.out.writeLine([]byte(strings.Replace(line, "ID", string(c.id), 1)))
	return nil, errNoReply
}
