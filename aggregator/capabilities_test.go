package aggregator

import (
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

func TestClientCapabilitiesRelayedToChildren(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		// As the client wrote them, byte for byte, unknown keys included.
		{`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`,
			`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`},
		{`{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"form":{},"url":{}}}`},
		{`{"sampling":{},"tasks":{"list":{}},"x":1}`, `{"sampling":{},"tasks":{"list":{}},"x":1}`},
		{`null`, `{}`},
	} {
		caps := parseClientCapabilities([]byte(tc.in))
		if string(caps.forChildren) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, caps.forChildren, tc.want)
		}
	}
	caps := parseClientCapabilities([]byte(`{"sampling":{},"roots":null,"experimental":{}}`))
	if !caps.declared("sampling") || caps.declared("roots") || caps.declared("elicitation") {
		t.Errorf("declared: %v", caps.relayed)
	}
}

func TestChildCapabilitiesMerged(t *testing.T) {
	children := []string{
		`{"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/ui":{"v":1}},"experimental":{"a":{"from":"one"}},"future":{"x":1},"tasks":{"list":{}}}}`,
		`{"capabilities":{"prompts":{},"logging":{},"extensions":{"io.modelcontextprotocol/ui":{"v":2},"other/ext":{}},"experimental":{"a":{"from":"two"},"b":true},"future":2,"later":null,"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}}}`,
		`{"capabilities":{"resources":{"subscribe":true},"completions":{},"tasks":{"requests":{"tools":{"call":{}},"prompts":{"get":{}}}}}}`,
	}
	var caps []childCapabilities
	for _, c := range children {
		caps = append(caps, parseServerCapabilities([]byte(c)))
	}
	if !caps[0].apps || !caps[1].apps || caps[2].apps {
		t.Errorf("apps: %v %v %v", caps[0].apps, caps[1].apps, caps[2].apps)
	}
	if !caps[0].tasksList || caps[1].tasksList || caps[2].tasksList {
		t.Errorf("tasks.list: %v %v %v", caps[0].tasksList, caps[1].tasksList, caps[2].tasksList)
	}
	got := string(mergeCapabilities(nil, caps))
	want := `{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"logging":{},"completions":{},` +
		`"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}},"prompts":{"get":{}}}},` +
		`"experimental":{"a":{"from":"one"},"b":true},"extensions":{"io.modelcontextprotocol/ui":{"v":1},"other/ext":{}},"future":{"x":1},"later":null}`
	if got != want {
		t.Errorf("merged:\n got %s\nwant %s", got, want)
	}
}

// A child is initialized with what the client declared, extensions and
// keys not invented yet included, and the client's initialize answer
// carries what the children declared.
func TestCapabilitiesBothWays(t *testing.T) {
	params := make(chan []byte, 1)
	child := func(method string, p []byte) string {
		if method == "initialize" {
			params <- p
			return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/ui":{}},"experimental":{"x":{}},"newThing":{"on":true}},"serverInfo":{"name":"c","version":"1"}}`
		}
		return toolServer()(method, p)
	}
	h := serveOptions(t, Options{Start: func(config.Server) (Process, error) { return startFake(child), nil }}, "k")
	clientCaps := `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"experimental":{"y":{}},"newClientThing":{}}`
	answer := h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + clientCaps + `}}`)
	got, _ := jsonrpc.Member(<-params, "capabilities")
	if string(got) != clientCaps {
		t.Errorf("the child got capabilities %s, want %s", got, clientCaps)
	}
	want := `"capabilities":{"tools":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{}},"newThing":{"on":true}}`
	if !strings.Contains(answer, want) {
		t.Errorf("initialize answer %s\nwant it to contain %s", answer, want)
	}
}
