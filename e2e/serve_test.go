package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestInitializeNegotiatesTheProtocolVersionWithClientAndChildren(t *testing.T) {
	for _, tc := range []struct{ asked, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2024-10-07", "2025-11-25"}, // unknown, older
		{"2026-07-28", "2025-11-25"}, // unknown, newer
		{"", "2025-11-25"},
	} {
		name := tc.asked
		if name == "" {
			name = "empty"
		}
		t.Run(name, func(t *testing.T) {
			s := startConfig(t, []server{ts("alpha")})
			info := parseInit(t, s.initialize(tc.asked, "{}"))
			if info.ProtocolVersion != tc.want {
				t.Errorf("protocolVersion %q, want %q", info.ProtocolVersion, tc.want)
			}
			if info.Capabilities.Tools == nil || !info.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities lack tools.listChanged true")
			}
			if info.ServerInfo.Name != "mcp-simple-aggregator" || info.ServerInfo.Version == "" {
				t.Errorf("serverInfo %+v", info.ServerInfo)
			}
			var child struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			raw := toolText(t, s.result("tools/call", `{"name":"alpha:initparams","arguments":{}}`))
			if err := json.Unmarshal([]byte(raw), &child); err != nil || child.ProtocolVersion != tc.want {
				t.Errorf("the child was initialized with %s, want protocolVersion %q", raw, tc.want)
			}
		})
	}
}

func TestPingAndUnknownMethodsAreAnsweredBeforeAndAfterInitialize(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	check := func(when string) {
		t.Helper()
		if r := s.result("ping", ""); string(r) != "{}" {
			t.Errorf("ping %s: result %s, want {}", when, r)
		}
		m := s.call("no/such/method", `{}`)
		if code, _ := m.errorCode(); code != -32601 {
			t.Errorf("no/such/method %s: %s, want error -32601", when, m.line)
		}
	}
	check("before initialize")
	// server/discover without the modern era's _meta is not a modern
	// request: an error, on which a dual-era client falls back to
	// initialize.
	if m := s.call("server/discover", `{}`); m.Error == nil {
		t.Errorf("server/discover without _meta: %s, want an error", m.line)
	}
	// A request that needs initialize is answered too, with an error.
	if m := s.call("tools/list", ""); m.Error == nil {
		t.Errorf("tools/list before initialize: %s, want an error", m.line)
	}
	s.initialize("2025-11-25", "{}")
	check("after initialize")
	if m := s.call("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`); func() int { c, _ := m.errorCode(); return c }() != -32601 {
		t.Errorf("server/discover after initialize: %s, want error -32601", m.line)
	}
}

// On a fresh start, initialize waits for a server that hangs, within the
// client's budget (for a client that lists once, Codex: up to 24 s), and
// holds up nothing else: ping is answered meanwhile.
func TestPingIsAnsweredWhileInitializeWaitsForAChild(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-hang-init")}, "--debug")
	initID := s.request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex-mcp-client","version":"1.0"}}`)
	if r := s.result("ping", ""); string(r) != "{}" {
		t.Errorf("ping: result %s, want {}", r)
	}
	// initialize (nothing else here) starts alpha, then waits for it on a
	// goroutine of its own, which an initialize that did not wait would
	// answer from without stopping: once alpha is started (the debug log
	// says so), and a ping later, such an answer has come.
	s.waitStderr(`server "alpha": started`)
	s.barrier()
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == initID }); n != 0 {
		t.Fatalf("initialize was answered although its server hangs, well within Codex's budget")
	}
	// Stop now rather than give the pending list its grace period.
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
}

func TestASlowCallDoesNotDelayOthersToTheSameChild(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	slow := s.request("tools/call", `{"name":"alpha:slow","arguments":{"ms":30000}}`)
	// Served one after the other, the echo would wait 30 s, past the
	// harness's watchdog.
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"fast":true}}`)); got != `{"fast":true}` {
		t.Errorf("echo answered %q", got)
	}
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == slow }); n != 0 {
		t.Fatalf("the slow call was answered before the echo")
	}
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, slow))
}

func TestConcurrentCallsAcrossChildrenEachGetTheirOwnAnswer(t *testing.T) {
	keys := []string{"alpha", "beta", "gamma"}
	s := startConfig(t, []server{ts("alpha"), ts("beta"), ts("gamma")})
	s.initialize("2025-11-25", "{}")
	const n = 200
	args := map[string]string{} // id -> arguments sent
	for i := 0; i < n; i++ {
		key := keys[i%len(keys)]
		a := fmt.Sprintf(`{"call":%d,"server":%q,"pad":%q}`, i, key, strings.Repeat("p", i))
		args[s.request("tools/call", fmt.Sprintf(`{"name":"%s:echo","arguments":%s}`, key, a))] = a
	}
	for id, a := range args {
		m := s.response(id)
		if want := `"structuredContent":` + a + `}}`; !bytes.HasSuffix(m.line, []byte(want)) {
			t.Errorf("answer to id %s: %s, want one ending %s", id, clip(m.line), want)
		}
	}
	if got := s.count(func(m *msg) bool { return m.isResponse() }); got != n+1 {
		t.Errorf("%d answers, want %d (initialize and %d calls)", got, n+1, n)
	}
}

func TestBadClientInputIsAnsweredAndServingGoesOn(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	bad := []struct {
		line string
		id   string
		code int
	}{
		{`this is not json`, "null", -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, "null", -32700},
		{`{"jsonrpc":"1.0","id":5,"method":"x"}`, "5", -32600},
		{`{"id":6}`, "6", -32600},
		{`42`, "null", -32600},
		{`"ping"`, "null", -32600},
		{`null`, "null", -32600},
		{`{"jsonrpc":"2.0","id":"s7","method":42}`, `"s7"`, -32600},
		{`{"jsonrpc":"2.0","id":{"no":1},"method":"ping"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":8,"method":"ping","params":"x"}`, "8", -32600},
	}
	run := func(when string) {
		t.Helper()
		for _, b := range bad {
			s.send(b.line)
			m := s.next(fmt.Sprintf("the answer to %s", b.line), func(m *msg) bool { return m.isResponse() })
			if code, _ := m.errorCode(); code != b.code || string(m.ID) != b.id {
				t.Errorf("%s: %s answered %s, want error %d with id %s", when, b.line, m.line, b.code, b.id)
			}
		}
		if r := s.result("ping", ""); string(r) != "{}" {
			t.Errorf("ping after bad input %s: %s", when, r)
		}
	}
	run("before initialize")
	s.initialize("2025-11-25", "{}")
	run("after initialize")
	if got := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"after":"bad input"}}`)); got != `{"after":"bad input"}` {
		t.Errorf("echo after bad input answered %q", got)
	}
	s.closeAndWait()
	if s.err != nil {
		t.Errorf("aggregator exited with %v after bad input", s.err)
	}
}

// The harness fails the test on any stdout line that is not a JSON-RPC
// message; this test gives the aggregator every reason to write something
// else there: debug logging, children that write to stderr and a child that
// writes a non-JSON line to its stdout.
func TestStdoutCarriesOnlyProtocolWithDebugAndNoisyChildren(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-stderr", "5", "-noise"), ts("beta", "-stderr", "5")}, "--debug")
	s.initialize("2025-11-25", "{}")
	s.result("tools/list", "")
	s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)
	s.result("tools/call", `{"name":"alpha:log","arguments":{"text":"to the client"}}`)
	s.notification("notifications/message")
	s.result("tools/call", `{"name":"beta:change","arguments":{}}`)
	s.notification("notifications/tools/list_changed")
	s.call("tools/call", `{"name":"beta:crash","arguments":{}}`)
	s.closeAndWait()
	if s.err != nil {
		t.Errorf("exit: %v", s.err)
	}
	stderr := s.stderrText()
	for _, want := range []string{"mcp-simple-aggregator: debug: ", "[alpha] stderr line 4", "[beta] stderr line 4", "[beta] crash requested", "this is not json"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q (so the test did not exercise it):\n%s", want, stderr)
		}
	}
}
