package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// Protocol versions: batches of 2025-03-26, children speaking other
// versions, and the 2026-07-28 probe before initialize.

func TestBatchIsAnsweredWithOneBatch(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	if r := parseAdvertisedInit(t, s.initialize("2025-03-26", clientCapsAll)); r.ProtocolVersion != "2025-03-26" {
		t.Fatalf("negotiated %q, want the client's 2025-03-26", r.ProtocolVersion)
	}
	s.startServers()
	s.send(`[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"alpha:echo","arguments":{"x":"<&>"}}},` +
		`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},` +
		`{"jsonrpc":"2.0","id":2002,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":2003,"method":"no/such/method"}]`)
	b := s.next("the batch answer", func(m *msg) bool { return m.Method == "(batch)" })
	var elems []*msg
	if err := json.Unmarshal(b.line, &elems); err != nil {
		t.Fatalf("batch answer %s: %v", b.line, err)
	}
	byID := map[string]*msg{}
	for _, e := range elems {
		if e.Method != "" {
			t.Errorf("the batch answer holds a message that is not an answer: method %q", e.Method)
		}
		byID[string(e.ID)] = e
	}
	if len(elems) != 3 || len(byID) != 3 {
		t.Fatalf("the batch answer has %d entries (ids %v), want one for each of the 3 requests: %s", len(elems), byID, b.line)
	}
	if e := byID[`"b1"`]; e == nil || !strings.Contains(string(e.Result), `"structuredContent":{"x":"<&>"}`) {
		t.Errorf(`answer to "b1" missing or wrong: %s`, b.line)
	}
	if e := byID["2002"]; e == nil || string(e.Result) != "{}" {
		t.Errorf("answer to the ping 2002 missing or wrong: %s", b.line)
	}
	if e := byID["2003"]; e == nil || !strings.Contains(string(e.Error), `"code":-32601`) {
		t.Errorf("answer to 2003 should be -32601: %s", b.line)
	}
	// The notification in the batch was handled.
	s.waitStderr("[alpha] roots changed\n")
	batched := []string{`"b1"`, "2002", "2003"}
	if n := s.count(func(m *msg) bool { return m.isResponse() && slices.Contains(batched, string(m.ID)) }); n != 0 {
		t.Errorf("%d answers to batched requests came outside the batch", n)
	}

	// The client may answer a child's request inside a batch; a batch of
	// answers gets no answer.
	id := s.request("tools/call", `{"name":"alpha:sample","arguments":{}}`)
	req := s.serverRequest("sampling/createMessage")
	answer := `{"role":"assistant","content":{"type":"text","text":"batched <&>"},"model":"m"}`
	s.send(`[{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + answer + `}]`)
	if text := toolText(t, s.response(id).Result); text != answer {
		t.Errorf("the child got %s, want the answer the client sent in a batch, %s", text, answer)
	}

	// An empty batch is one invalid request.
	s.send(`[]`)
	e := s.next("the answer to an empty batch", func(m *msg) bool { return m.isResponse() && string(m.ID) == "null" })
	if code, _ := e.errorCode(); code != -32600 {
		t.Errorf("empty batch answered %s, want error -32600", e.line)
	}
	// A batch of notifications only has no answer: the ping after it is
	// answered, and nothing else came.
	s.send(`[{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`)
	s.result("ping", "")
	if n := s.count(func(m *msg) bool { return m.Method == "(batch)" }); n != 1 {
		t.Errorf("%d batch answers, want 1 (a batch of notifications gets none)", n)
	}
}

func TestChildrenSpeakingOtherVersionsAreKeptOrDropped(t *testing.T) {
	s := startConfig(t, []server{ts("old", "-version", "2024-11-05"), ts("bad", "-version", "1999-01-01"), ts("alpha")})
	r := parseAdvertisedInit(t, s.initialize("2025-11-25", "{}"))
	if r.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated %q with the client, want its 2025-11-25", r.ProtocolVersion)
	}
	s.startServers()
	s.waitFor("stderr to name the unknown version of bad", func() bool {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(line, "1999-01-01") && strings.Contains(line, "bad") && !strings.HasPrefix(line, "[bad]") {
				return true
			}
		}
		return false
	})
	var servers []string
	for _, name := range toolNames(t, s.result("tools/list", "")) {
		key, _, _ := strings.Cut(name, ":")
		if !slices.Contains(servers, key) {
			servers = append(servers, key)
		}
	}
	if !slices.Equal(servers, []string{"old", "alpha"}) {
		t.Errorf("tools/list has the tools of %v, want those of old and alpha", servers)
	}
	if text := toolText(t, s.result("tools/call", `{"name":"old:echo","arguments":{"v":1}}`)); text != `{"v":1}` {
		t.Errorf("old:echo: %s", text)
	}
	if m := s.call("tools/call", `{"name":"bad:echo","arguments":{}}`); m.Error == nil {
		t.Errorf("bad:echo answered %s, but bad was dropped", m.line)
	}
	// The version each child speaks is on record: --check reports it.
	check := exec.Command(aggregatorBin, "--check", "--config", writeConfig(t, ts("old", "-version", "2024-11-05")))
	check.Env = append(os.Environ(), quickRaceExit)
	out, _ := check.Output()
	if !regexp.MustCompile(`(?m)^old\s.*\b2024-11-05\b`).Match(out) {
		t.Errorf("--check does not report old's protocol version 2024-11-05:\n%s", out)
	}
	// Every child was asked for the version agreed with the client.
	text := toolText(t, s.result("tools/call", `{"name":"old:initparams"}`))
	if !strings.HasPrefix(text, `{"protocolVersion":"2025-11-25"`) {
		t.Errorf("old was initialized with %s, want the client's version", text)
	}
}

// A server/discover without the 2026-07-28 _meta is no modern request: it
// gets an error at once (-32602), on which a dual-era client falls back to
// initialize, and is served legacy.
func TestServerDiscoverBeforeInitializeGetsAnErrorAtOnce(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	begin := time.Now()
	m := s.call("server/discover", `{}`)
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("server/discover was answered after %v", took)
	}
	if code, _ := m.errorCode(); m.Error == nil || code != -32602 {
		t.Errorf("server/discover answered %s, want error -32602 so that the client falls back to initialize", m.line)
	}
	s.initialize("2025-11-25", "{}")
	if text := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)); text != "{}" {
		t.Errorf("alpha:echo after the fallback: %s", text)
	}
}
