package aggregator

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Children of either era for the tests of the modern era: each answers
// its session's requests (initialize or server/discover, tools/list)
// itself, as a server of its kind does, and hands every other message to
// the test, like a puppet.
const (
	legacyKind = "legacy" // answers initialize; server/discover is -32601; one subscribable resource
	silentKind = "silent" // legacy, and says nothing to server/discover
	modernKind = "modern" // answers server/discover; initialize is -32022
)

// modernList is a modern child's tools/list result: its caching hint says
// 30 s, public.
const modernList = `{"resultType":"complete","tools":[{"name":"x"}],"ttlMs":30000,"cacheScope":"public"}`

func eraScript(kind string, pp *puppet) func(m *jsonrpc.Message, line []byte, out io.Writer) {
	answer := func(m *jsonrpc.Message, result string) {
		out(pp).Write(jsonrpc.AppendResult(nil, m.ID, []byte(result)))
	}
	fail := func(m *jsonrpc.Message, errObj string) { out(pp).Write(jsonrpc.AppendError(nil, m.ID, []byte(errObj))) }
	return func(m *jsonrpc.Message, line []byte, _ io.Writer) {
		switch {
		case m.Method == "initialize" && kind == modernKind:
			fail(m, `{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}`)
		case m.Method == "initialize":
			answer(m, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{},"resources":{"subscribe":true}},"serverInfo":{"name":"p","version":"1"}}`)
		case m.Method == "server/discover" && kind == modernKind:
			answer(m, `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true}},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"1"}}}`)
		case m.Method == "server/discover" && kind == legacyKind:
			fail(m, `{"code":-32601,"message":"Method not found"}`)
		case m.Method == "server/discover":
		case m.Method == "tools/list" && kind == modernKind:
			if meta, _ := jsonrpc.Member(m.Params, "_meta"); !strings.Contains(string(meta), `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`) {
				fail(m, `{"code":-32602,"message":"missing _meta"}`)
				return
			}
			answer(m, modernList)
		case m.Method == "resources/list" && kind == modernKind:
			answer(m, `{"resultType":"complete","resources":[{"uri":"file:///m","name":"m"}],"ttlMs":0,"cacheScope":"public"}`)
		case m.Method == "resources/templates/list" && kind == modernKind:
			answer(m, `{"resultType":"complete","resourceTemplates":[],"ttlMs":0,"cacheScope":"public"}`)
		case m.Method == "tools/list":
			answer(m, `{"tools":[{"name":"x"}]}`)
		case m.Method == "resources/list":
			answer(m, `{"resources":[{"uri":"file:///a","name":"a"}]}`)
		case m.Method == "resources/templates/list":
			answer(m, `{"resourceTemplates":[]}`)
		case m.Method == "resources/subscribe", m.Method == "resources/unsubscribe":
			answer(m, `{}`)
			pp.got <- strings.TrimSpace(string(line))
		case m.Method == "subscriptions/listen" && kind == modernKind:
			f, _ := jsonrpc.Member(m.Params, "notifications")
			out(pp).Write(jsonrpc.AppendNotification(nil, "notifications/subscriptions/acknowledged",
				[]byte(`{"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(m.ID)+`},"notifications":`+string(f)+`}`)))
			pp.listens <- strings.TrimSpace(string(line))
		case m.Method == "notifications/initialized":
		case m.Method == "logging/setLevel":
			answer(m, `{}`)
			pp.got <- strings.TrimSpace(string(line))
		default:
			pp.got <- strings.TrimSpace(string(line))
		}
	}
}

func out(pp *puppet) io.Writer { return pp.p.stdoutW }

// serveEras runs an aggregator over one puppet of each kind, keyed by the
// kind's name, and returns them; nothing is sent yet.
func serveEras(t *testing.T, opts Options, kinds ...string) (*harness, map[string]*puppet) {
	t.Helper()
	puppets := map[string]*puppet{}
	for _, k := range kinds {
		puppets[k] = &puppet{got: make(chan string, 64), listens: make(chan string, 64)}
	}
	opts.Start = func(s config.Server) (Process, error) {
		pp := puppets[s.Key]
		pp.p = startScripted(eraScript(s.Key, pp))
		return pp.p, nil
	}
	return serveOptions(t, opts, kinds...), puppets
}

// clientMeta is the _meta of a modern client's request that declares
// elicitation.
const clientMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"modern-test","version":"1"}}`

// modernRequest is a modern client's request line; members are the
// params' other members ("" for none).
func modernLine(id, method, members string) string {
	if members != "" {
		members = "," + members
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + clientMeta + members + `}}`
}

// decoded is a line the aggregator wrote, decoded.
type decoded struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
}

func decode(t *testing.T, line string) decoded {
	t.Helper()
	var d decoded
	if err := json.Unmarshal([]byte(line), &d); err != nil {
		t.Fatalf("not JSON: %s: %v", line, err)
	}
	return d
}

// errorCode returns the error code of an answer line, failing the test
// when it is not an error.
func errorCode(t *testing.T, line string) int {
	t.Helper()
	d := decode(t, line)
	if d.Error == nil {
		t.Fatalf("want an error, got %s", line)
	}
	return d.Error.Code
}

// legacyClientCallsModern runs an aggregator over a modern child for a
// legacy client that declared elicitation, has the client call modern:x
// (id 3) with arguments, and returns the child and the call it heard.
func legacyClientCallsModern(t *testing.T, arguments string) (*harness, *puppet, string) {
	t.Helper()
	h, puppets := serveEras(t, Options{}, modernKind)
	pm := puppets[modernKind]
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"modern:x","arguments":` + arguments + `}}`)
	return h, pm, pm.heard(t)
}
