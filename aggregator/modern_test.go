package aggregator

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A modern client is served in its era: discover answered from the
// children's merged capabilities, resultType on every result, caching
// hints on lists, serverInfo in _meta.
func TestModernClientDiscoverAndLists(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind, modernKind)
	d := decode(t, h.exchange(modernLine("1", "server/discover", "")))
	r := d.Result
	if r["resultType"] != "complete" || r["cacheScope"] != "private" || r["ttlMs"] != 0.0 {
		t.Errorf("discover: resultType %v, ttlMs %v, cacheScope %v; want complete, 0 and private (a legacy child gives no hint)", r["resultType"], r["ttlMs"], r["cacheScope"])
	}
	if v, _ := r["supportedVersions"].([]any); len(v) != 1 || v[0] != "2026-07-28" {
		t.Errorf("supportedVersions %v", r["supportedVersions"])
	}
	caps, _ := r["capabilities"].(map[string]any)
	if caps["tools"] == nil || caps["logging"] == nil {
		t.Errorf("capabilities %v: want the children's tools and logging", caps)
	}
	meta, _ := r["_meta"].(map[string]any)
	if info, _ := meta[eras.MetaServerInfo].(map[string]any); info["name"] != "agg" {
		t.Errorf("_meta %v: want serverInfo", meta)
	}
	// The legacy child was probed, then initialized with the client's
	// capabilities; the modern child was not initialized.
	if l := puppets[legacyKind]; l != nil {
		select {
		case got := <-l.got:
			t.Errorf("the legacy child got %s", got)
		default:
		}
	}
	list := decode(t, h.exchange(modernLine("2", "tools/list", ""))).Result
	if list["resultType"] != "complete" || list["cacheScope"] != "private" || list["ttlMs"] != 0.0 {
		t.Errorf("tools/list: %v", list)
	}
	if tools, _ := list["tools"].([]any); len(tools) != 2 {
		t.Errorf("tools/list: %v, want both children's tools", list["tools"])
	}
}

// The caching hint of a list of modern children is the smallest time left
// and public only when every child says public.
func TestModernListHintIsTheSmallestLeft(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{}, modernKind)
	list := decode(t, h.exchange(modernLine("1", "tools/list", ""))).Result
	ttl, _ := list["ttlMs"].(float64)
	if list["cacheScope"] != "public" || ttl <= 0 || ttl > 30000 {
		t.Errorf("tools/list of a modern child saying 30000 and public: ttlMs %v, cacheScope %v", list["ttlMs"], list["cacheScope"])
	}
	if got := decode(t, h.exchange(modernLine("2", "server/discover", ""))).Result["ttlMs"].(float64); got <= 30000 || got > 60000 {
		t.Errorf("discover ttlMs %v, want the child's 60000 less the time since", got)
	}
}

// Each modern request is checked: _meta keys present, the version served,
// the methods of the legacy era refused with what replaced them.
func TestModernRequestsAreChecked(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{}, legacyKind)
	h.exchange(modernLine("1", "server/discover", ""))
	cases := []struct {
		line string
		code int
		says string
	}{
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, -32602, "clientCapabilities"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}`, -32602, "protocolVersion"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, -32602, "_meta"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, -32022, "2099-01-01"},
		{modernLine("6", "ping", ""), -32601, "2026-07-28"},
		{modernLine("7", "logging/setLevel", `"level":"info"`), -32601, "logLevel"},
		{modernLine("8", "resources/subscribe", `"uri":"a://b"`), -32601, "subscriptions/listen"},
		{`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, -32600, "2026-07-28"},
	}
	for _, tc := range cases {
		line := h.exchange(tc.line)
		if code := errorCode(t, line); code != tc.code || !strings.Contains(line, tc.says) {
			t.Errorf("%s\n got %s\nwant code %d saying %q", tc.line, line, tc.code, tc.says)
		}
	}
	d := decode(t, h.exchange(`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	if d.Error.Data["requested"] != "2099-01-01" || len(d.Error.Data["supported"].([]any)) != 1 {
		t.Errorf("-32022 data %v: want supported and requested", d.Error.Data)
	}
}

// A call of a modern client to a legacy child gets resultType; to a
// modern child it passes byte for byte (but the name), both ways.
func TestModernClientCalls(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind, modernKind)
	h.exchange(modernLine("1", "tools/list", ""))

	h.send(modernLine("2", "tools/call", `"name":"legacy:x","arguments":{}`))
	pl := puppets[legacyKind]
	got := pl.heard(t)
	pl.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":{"content":[]}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}` {
		t.Errorf("legacy child's answer: %s", line)
	}

	call := modernLine("3", "tools/call", `"name":"modern:x","arguments":{"a":1}`)
	h.send(call)
	pm := puppets[modernKind]
	got = pm.heard(t)
	want := strings.Replace(call, `"id":3`, `"id":`+idOf(t, got), 1)
	if got != strings.Replace(want, `"modern:x"`, `"x"`, 1) {
		t.Errorf("the modern child got\n%s\nwant the client's request but the id and name:\n%s", got, want)
	}
	result := `{"resultType":"complete","content":[],"_meta":{"k":1}}`
	pm.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":` + result + `}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":3,"result":`+result+`}` {
		t.Errorf("modern child's answer: %s", line)
	}
}

// A resource nobody serves is -32602 in the modern era (-32002 was the
// legacy era's).
func TestModernResourceNotFoundIsInvalidParams(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{}, legacyKind)
	if code := errorCode(t, h.exchange(modernLine("1", "resources/read", `"uri":"none://x"`))); code != -32602 {
		t.Errorf("code %d, want -32602", code)
	}
}

// A legacy client is served as before over a child that speaks only the
// modern era: the child is sent server/discover after refusing
// initialize, and the client's requests reach it with the client's
// capabilities and log level in _meta.
func TestLegacyClientOverModernOnlyChild(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, modernKind)
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"old","version":"1"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if !strings.Contains(list, `"modern:x"`) {
		t.Fatalf("tools/list: %s, want the modern child's tool", list)
	}
	h.exchange(`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`)
	h.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"modern:x","arguments":{}}}`)
	pm := puppets[modernKind]
	got := pm.heard(t)
	for _, want := range []string{`"name":"x"`, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`, `"io.modelcontextprotocol/clientInfo":{"name":"old","version":"1"}`, `"io.modelcontextprotocol/logLevel":"debug"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the child got %s\nwithout %s", got, want)
		}
	}
	pm.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"m","version":"1"}}}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}` {
		t.Errorf("answer: %s", line)
	}
}

// A legacy child that says nothing to server/discover is initialized once
// the probe times out; --check-like reports show each child's version.
func TestSilentLegacyChildIsInitializedAfterTheProbe(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{ProbeTimeout: 50 * time.Millisecond}, silentKind, modernKind)
	list := h.exchange(modernLine("1", "tools/list", ""))
	if !strings.Contains(list, `"silent:x"`) || !strings.Contains(list, `"modern:x"`) {
		t.Fatalf("tools/list: %s, want both children's tools", list)
	}
	versions := map[string]string{}
	for _, c := range h.a.children() {
		versions[c.key] = c.Status().Version
	}
	if versions[silentKind] != "2025-11-25" || versions[modernKind] != eras.ModernVersion {
		t.Errorf("versions %v", versions)
	}
	// A legacy child under a modern client is expected, not warned about.
	if log := h.logged(); strings.Contains(log, "speaks protocol version") {
		t.Errorf("a warning about the legacy child's version:\n%s", log)
	}
}

// A legacy server that exits on the server/discover probe is started
// again and initialized, at once (not after the probe's timeout).
func TestChildExitingOnTheProbeIsStartedAgain(t *testing.T) {
	t.Parallel()
	var starts atomic.Int32
	start := func(config.Server) (Process, error) {
		n := starts.Add(1)
		var p *fakeProcess
		p = startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			switch m.Method {
			case "server/discover":
				if n == 1 {
					p.Stop() // exits on it, as some legacy servers do
				}
			case "initialize":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"p","version":"1"}}`)))
			case "tools/list":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[{"name":"x"}]}`)))
			}
		})
		return p, nil
	}
	h := serveOptions(t, Options{Start: start, ProbeTimeout: time.Hour}, "flaky")
	if list := h.exchange(modernLine("1", "tools/list", "")); !strings.Contains(list, `"flaky:x"`) {
		t.Fatalf("tools/list: %s\n%s", list, h.logged())
	}
	if n := starts.Load(); n != 2 {
		t.Errorf("started %d times, want 2", n)
	}
	if v := h.a.children()[0].Status().Version; v != "2025-11-25" {
		t.Errorf("version %q", v)
	}
}

// --check (and the debug log) shows the version each server speaks: a
// server that speaks only the modern era is served in it, not failed.
func TestCheckShowsEachServersVersion(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	opts := Options{Name: "agg", Version: "test", Log: NewLogger(&log, "", true), Start: func(s config.Server) (Process, error) {
		pp := &puppet{got: make(chan string, 64), listens: make(chan string, 64)}
		pp.p = startScripted(eraScript(s.Key, pp))
		return pp.p, nil
	}}
	for _, k := range []string{legacyKind, modernKind} {
		opts.Servers = append(opts.Servers, config.Server{Key: k, Command: "fake"})
	}
	var out strings.Builder
	a := New(opts)
	if ok := a.Check(context.Background(), &out); !ok {
		t.Fatalf("Check failed:\n%s", out.String())
	}
	a.log.Flush(waitLimit)
	for _, want := range []string{`server "legacy": ready in`, `, speaking 2025-11-25`, `server "modern": ready in`, `, speaking 2026-07-28`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the debug log lacks %q:\n%s", want, log.String())
		}
	}
	for _, want := range []string{"legacy  ok      2025-11-25", "modern  ok      2026-07-28", "modern:x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--check output lacks %q:\n%s", want, out.String())
		}
	}
}

// tasks/list, which the aggregator answers itself, carries resultType for
// a modern client too.
func TestModernTasksListHasResultType(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{}, legacyKind)
	if line := h.exchange(modernLine("1", "tasks/list", "")); line != `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","tasks":[]}}` {
		t.Errorf("tasks/list: %s", line)
	}
}

// A legacy server that speaks another legacy version than the client
// agreed is served as it is, with a warning naming both versions.
func TestALegacyServerOfAnotherVersionIsWarnedAbout(t *testing.T) {
	t.Parallel()
	h := serveOptions(t, Options{Start: func(config.Server) (Process, error) {
		return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			switch m.Method {
			case "initialize":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)))
			case "tools/list":
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"tools":[]}`)))
			}
		}), nil
	}}, "old")
	h.exchange(initAs("mcp"))
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if log := h.logged(); !strings.Contains(log, `server "old" speaks protocol version 2025-06-18, the client 2025-11-25`) {
		t.Errorf("no warning about the server's version:\n%s", log)
	}
}
