package aggregator

import (
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

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
