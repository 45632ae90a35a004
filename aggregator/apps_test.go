package aggregator

import (
	"fmt"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// appServer is a child with the given tools, each answering with its key;
// it serves MCP Apps by declaring the extension (how "ext") or listing a
// ui:// resource (how "ui"), or not at all (how "").
func appServer(key, how string, tools ...string) func(string, []byte) string {
	return func(method string, params []byte) string {
		switch method {
		case "initialize":
			caps := `{"tools":{},"resources":{}}`
			if how == "ext" {
				caps = `{"tools":{},"resources":{},"extensions":{"io.modelcontextprotocol/ui":{}}}`
			}
			return `{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"c","version":"1"}}`
		case "resources/list":
			if how == "ui" {
				return `{"resources":[{"uri":"ui://app/index.html","name":"app","mimeType":"text/html;profile=mcp-app"}]}`
			}
			return `{"resources":[]}`
		case "tools/call":
			name, _ := jsonrpc.StringMember(params, "name")
			return fmt.Sprintf(`{"content":[{"type":"text","text":"%s got %s"}]}`, key, name)
		}
		var list []string
		for _, t := range tools {
			list = append(list, `{"name":"`+t+`","_meta":{"ui":{"resourceUri":"ui://app/index.html"}}}`)
		}
		return toolServer(list...)(method, params)
	}
}

func serveApps(t *testing.T, servers map[string]func(string, []byte) string, keys ...string) *harness {
	h := serveOptions(t, Options{Start: func(s config.Server) (Process, error) { return startFake(servers[s.Key]), nil }}, keys...)
	h.exchange(initLine)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	return h
}

// An app's UI calls its server's tools by their own names: an unlisted
// name goes to the one child serving apps with that tool.
func TestUnprefixedCallGoesToTheOneAppServer(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"ext", "ui"} {
		t.Run(how, func(t *testing.T) {
			h := serveApps(t, map[string]func(string, []byte) string{
				"plain": appServer("plain", "", "get-time"),
				"app":   appServer("app", how, "get-time", "other"),
			}, "plain", "app")
			got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-time","arguments":{}}}`)
			if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"app got get-time"}]}}`; got != want {
				t.Errorf("get-time:\n got %s\nwant %s", got, want)
			}
			// The prefixed names work as before, and a tool of no app
			// server still needs its prefix.
			got = h.exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"plain:get-time"}}`)
			if want := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"plain got get-time"}]}}`; got != want {
				t.Errorf("plain:get-time:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestUnprefixedCallNeedsExactlyOneAppServer(t *testing.T) {
	t.Parallel()
	h := serveApps(t, map[string]func(string, []byte) string{
		"a":     appServer("a", "ext", "get-time"),
		"b":     appServer("b", "ui", "get-time"),
		"plain": appServer("plain", "", "only-plain"),
	}, "a", "b", "plain")
	for i, name := range []string{"get-time", "only-plain", "nowhere"} {
		got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, 10+i, name))
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"Tool name must be prefixed with server key: %s"}}`, 10+i, name)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
}
