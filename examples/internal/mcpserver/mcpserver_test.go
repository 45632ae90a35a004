package mcpserver

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	s := &Server{Name: "t", Version: "1.0.0", Instructions: "hi", Tools: []Tool{{
		Name:        "twice",
		Description: "n twice",
		InputSchema: `{"type":"object"}`,
		Call: func(args json.RawMessage) (string, error) {
			var a struct{ N int }
			if err := Args(args, &a); err != nil {
				return "", err
			}
			if a.N < 0 {
				return "", errors.New("negative")
			}
			return strings.Repeat("x", 2*a.N), nil
		},
	}}}
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"twice","arguments":{"n":2}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"twice","arguments":{"n":-1}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"twice","arguments":{"m":1}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"resources/list"}`,
		`not json`,
	}, "\n") // the last line without a newline
	var out strings.Builder
	if err := s.Serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{}},"instructions":"hi","protocolVersion":"2025-06-18","serverInfo":{"name":"t","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"capabilities":{"tools":{}},"instructions":"hi","protocolVersion":"2025-11-25","serverInfo":{"name":"t","version":"1.0.0"}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"description":"n twice","inputSchema":{"type":"object"},"name":"twice"}]}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"xxxx"}],"isError":false}}`,
		`{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"negative"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"bad arguments: json: unknown field \"m\""}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool: nope"}}`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"method not found: resources/list"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null (expecting 'u')"}}`,
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
		}
	}
}
