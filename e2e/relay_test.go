package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Requests, notifications, progress and cancellation between the client and
// the children, in both directions.

// clientCapsAll declares every client capability the aggregator relays, with
// whitespace inside the values so that a re-encoding shows, and two it does
// not relay.
const clientCapsAll = `{"experimental":{"x":{"y":1}},"sampling":{ "tools" : {} },` +
	`"elicitation":{"form":{ },"url":{}},"roots":{ "listChanged" : true },"tasks":{"list":{},"cancel":{}}}`

// wiretapped is an entry running the test server behind tee: every line the
// aggregator writes to that child also shows on the aggregator's stderr as
// "[KEY] line", in order.
func wiretapped(key string, args ...string) server {
	words := []string{"exec", "'" + testserverBin + "'", "-name", key}
	for _, a := range args {
		words = append(words, "'"+a+"'")
	}
	return server{key: key, command: "sh", args: []string{"-c", "tee /dev/stderr | " + strings.Join(words, " ")}}
}

// settleStderr makes sure that what the children keys logged while reading
// what they were sent so far has reached the aggregator's stderr: it sends
// notifications/roots/list_changed, which each child logs as "roots changed"
// once it has handled every earlier line, and waits for those lines. The
// client must have declared roots.
func settleStderr(s *session, keys ...string) {
	s.t.Helper()
	want := map[string]int{}
	for _, k := range keys {
		want[k] = strings.Count(s.stderrText(), "["+k+"] roots changed\n") + 1
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	for _, k := range keys {
		s.waitFor(fmt.Sprintf("[%s] roots changed #%d", k, want[k]), func() bool {
			return strings.Count(s.stderr.String(), "["+k+"] roots changed\n") >= want[k]
		})
	}
}

// tappedLines returns the messages the aggregator wrote to the wiretapped
// child key so far that match; called with s.mu held.
func tappedLines(s *session, key string, match func(*msg) bool) []*msg {
	var found []*msg
	for _, line := range strings.Split(s.stderr.String(), "\n") {
		rest, ok := strings.CutPrefix(line, "["+key+"] {")
		if !ok {
			continue
		}
		m := &msg{line: []byte("{" + rest)}
		if json.Unmarshal(m.line, m) == nil && match(m) {
			found = append(found, m)
		}
	}
	return found
}

// tapped waits for a message written to the wiretapped child key that
// matches, and returns the first.
func tapped(s *session, key, what string, match func(*msg) bool) *msg {
	s.t.Helper()
	var found *msg
	s.waitFor(what, func() bool {
		if ms := tappedLines(s, key, match); len(ms) > 0 {
			found = ms[0]
		}
		return found != nil
	})
	return found
}

// tappedCount counts the messages written to the wiretapped child key so
// far that match.
func tappedCount(s *session, key string, match func(*msg) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(tappedLines(s, key, match))
}

// toolRequest sends tools/call of name with raw arguments and returns its id.
func toolRequest(s *session, name, args string) string {
	s.t.Helper()
	return s.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
}

// answerServer answers a request of the aggregator with a raw member,
// `"result":...` or `"error":...`.
func answerServer(s *session, id json.RawMessage, member string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":` + string(id) + `,` + member + `}`)
}

// toolResultOf returns the text of a tools/call answer and its isError.
func toolResultOf(t *testing.T, m *msg) (string, bool) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/call answered with an error: %s", m.line)
	}
	var r struct {
		IsError bool `json:"isError"`
	}
	json.Unmarshal(m.Result, &r)
	return toolText(t, m.Result), r.IsError
}

// paramsMember returns the raw member key of a message's params (nil if
// there is none). It may be called with s.mu held: it never fails the test.
func paramsMember(m *msg, key string) json.RawMessage {
	var p map[string]json.RawMessage
	json.Unmarshal(m.Params, &p)
	return p[key]
}

// Children get the client's capabilities as it wrote them.
func TestChildrenAreInitializedWithTheClientsCapabilities(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", clientCapsAll)
	want := map[string]string{
		"experimental": `{"x":{"y":1}}`,
		"tasks":        `{"list":{},"cancel":{}}`,
		"sampling":     `{ "tools" : {} }`,
		"elicitation":  `{"form":{ },"url":{}}`,
		"roots":        `{ "listChanged" : true }`,
	}
	for _, key := range []string{"alpha", "beta"} {
		text, _ := toolResultOf(t, s.call("tools/call", `{"name":"`+key+`:initparams"}`))
		var params struct {
			ProtocolVersion string                     `json:"protocolVersion"`
			Capabilities    map[string]json.RawMessage `json:"capabilities"`
		}
		if err := json.Unmarshal([]byte(text), &params); err != nil {
			t.Fatalf("%s: initialize params are not JSON: %s", key, text)
		}
		if params.ProtocolVersion != "2025-11-25" {
			t.Errorf("%s was initialized with protocol version %q, want the client's 2025-11-25", key, params.ProtocolVersion)
		}
		for name, raw := range want {
			if got := string(params.Capabilities[name]); got != raw {
				t.Errorf("%s: capability %s = %s, want the client's bytes %s", key, name, got, raw)
			}
		}
		for name := range params.Capabilities {
			if _, ok := want[name]; !ok {
				t.Errorf("%s: capability %q was passed to the child, but the client did not declare it: %s", key, name, text)
			}
		}
	}
}

func TestChildRequestsReachTheClientAndAnswersGoBackByteForByte(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", clientCapsAll)
	for _, tc := range []struct {
		tool, method, params, answer string
		isError                      bool
	}{
		{"sample", "sampling/createMessage",
			`{"messages":[{"role":"user","content":{"type":"text","text":"hello from alpha"}}],"maxTokens":100}`,
			`"result":{"role":"assistant","content":{"type":"text","text":"hi <&> \u00e9 ü"},"model":"m-1", "stopReason":"endTurn"}`, false},
		{"sample", "sampling/createMessage", "",
			`"error":{"code":-1,"message":"user rejected <&>","data":{"why":"because <&> \u2028"}}`, true},
		{"elicit", "elicitation/create",
			`{"message":"please fill the form","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}}`,
			`"result":{"action":"accept","content":{"name":"<Zoë & co>"}}`, false},
		{"roots", "roots/list", "",
			`"result":{"roots":[{"uri":"file:///tmp/a%20b","name":"<a & b>"}]}`, false},
		{"pingclient", "ping", "", `"result":{}`, false},
	} {
		id := toolRequest(s, "alpha:"+tc.tool, "{}")
		req := s.serverRequest(tc.method)
		if tc.params != "" && string(req.Params) != tc.params {
			t.Errorf("%s: params changed on the way:\n got %s\nwant %s", tc.method, req.Params, tc.params)
		}
		answerServer(s, req.ID, tc.answer)
		text, isError := toolResultOf(t, s.response(id))
		_, raw, _ := strings.Cut(tc.answer, ":")
		if text != raw || isError != tc.isError {
			t.Errorf("%s: the child got\n %s (isError %v)\nwant the client's answer byte for byte\n %s (isError %v)", tc.method, text, isError, raw, tc.isError)
		}
	}
}

func TestConcurrentChildRequestsWithCollidingIDsAreKeptApart(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", clientCapsAll)
	// Both children number their requests from 0: their ids collide.
	ids := map[string]string{"alpha": toolRequest(s, "alpha:sample", "{}"), "beta": toolRequest(s, "beta:sample", "{}")}
	reqs := map[string]*msg{}
	for range 2 {
		req := s.serverRequest("sampling/createMessage")
		for key := range ids {
			if strings.Contains(string(req.Params), `"hello from `+key+`"`) {
				reqs[key] = req
			}
		}
	}
	if reqs["alpha"] == nil || reqs["beta"] == nil {
		t.Fatalf("expected one sampling request from each child, got %v", reqs)
	}
	if string(reqs["alpha"].ID) == string(reqs["beta"].ID) {
		t.Fatalf("both sampling requests reached the client under id %s", reqs["alpha"].ID)
	}
	answers := map[string]string{
		"alpha": `{"role":"assistant","content":{"type":"text","text":"for alpha"},"model":"m-alpha"}`,
		"beta":  `{"role":"assistant","content":{"type":"text","text":"for beta"},"model":"m-beta"}`,
	}
	for _, key := range []string{"beta", "alpha"} { // reverse order
		answerServer(s, reqs[key].ID, `"result":`+answers[key])
		if text, _ := toolResultOf(t, s.response(ids[key])); text != answers[key] {
			t.Errorf("%s got the answer %s, want %s", key, text, answers[key])
		}
	}
}

func TestChildRequestForAnUndeclaredCapabilityGetsMethodNotFound(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	for _, tool := range []string{"sample", "elicit", "roots"} {
		text, isError := toolResultOf(t, s.call("tools/call", `{"name":"alpha:`+tool+`"}`))
		if !isError || !strings.Contains(text, `"code":-32601`) {
			t.Errorf("%s: the child got %s (isError %v), want a -32601 error", tool, text, isError)
		}
	}
	// The answers came from the aggregator: the client saw no request.
	if n := s.count(func(m *msg) bool { return m.ID != nil && m.Method != "" }); n != 0 {
		t.Errorf("the client received %d requests for capabilities it did not declare", n)
	}
	// And ping needs no capability.
	id := toolRequest(s, "alpha:pingclient", "{}")
	answerServer(s, s.serverRequest("ping").ID, `"result":{}`)
	if text, isError := toolResultOf(t, s.response(id)); text != "{}" || isError {
		t.Errorf("pingclient: %s (isError %v), want {}", text, isError)
	}
}

func TestClientRootsListChangedReachesEveryChild(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", clientCapsAll)
	s.startServers()
	s.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	s.waitStderr("[alpha] roots changed\n")
	s.waitStderr("[beta] roots changed\n")
}

// A server's notifications/elicitation/complete reaches the client for a
// URL elicitation of its own, and for no other.
func TestChildElicitationCompleteReachesTheClient(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", `{"elicitation":{"url":{}}}`)
	s.result("tools/call", `{"name":"alpha:notify"}`) // of an elicitation it never sent
	id := s.request("tools/call", `{"name":"alpha:notify","arguments":{"url":true}}`)
	answerServer(s, s.serverRequest("elicitation/create").ID, `"result":{"action":"accept"}`)
	s.response(id)
	if n := s.count(func(m *msg) bool { return m.Method == "notifications/elicitation/complete" }); n != 1 {
		t.Errorf("%d notifications/elicitation/complete, want 1: of the elicitation the server sent, not the other", n)
	}
	n := s.notification("notifications/elicitation/complete")
	if string(n.Params) != `{"elicitationId":"e1"}` {
		t.Errorf("notifications/elicitation/complete params %s, want the child's {\"elicitationId\":\"e1\"}", n.Params)
	}
}

func TestClientProgressTokenReachesTheChildAndProgressComesBackInOrder(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", "{}")
	const steps = 4
	for _, token := range []string{`"t\u00e9 <&>"`, `0`} {
		id := s.request("tools/call", `{"name":"alpha:progress","arguments":{"steps":4},"_meta":{"progressToken":`+token+`}}`)
		if text, isError := toolResultOf(t, s.response(id)); text != "progressed" || isError {
			t.Fatalf("progress with token %s: %s", token, text)
		}
		// The child sent its progress before its answer, and they come in
		// that order.
		isOurs := func(m *msg) bool {
			return m.Method == "notifications/progress" && string(paramsMember(m, "progressToken")) == token
		}
		if n := s.count(isOurs); n != steps {
			t.Fatalf("token %s: %d progress notifications before the answer, want %d", token, n, steps)
		}
		for i := 1; i <= steps; i++ {
			p := s.next("progress", isOurs)
			want := fmt.Sprintf(`{"progressToken":%s,"progress":%d,"total":%d,"message":"step %d"}`, token, i, steps, i)
			if string(p.Params) != want {
				t.Errorf("progress %d:\n got %s\nwant %s", i, p.Params, want)
			}
		}
	}
}

func TestProgressTokensOfChildRequestsAreRemappedAndMappedBack(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", clientCapsAll)
	// Both children use the token "sample-tok".
	ids := map[string]string{
		"alpha": toolRequest(s, "alpha:sample", `{"progress":true}`),
		"beta":  toolRequest(s, "beta:sample", `{"progress":true}`),
	}
	reqs := map[string]*msg{}
	tokens := map[string]json.RawMessage{}
	for range 2 {
		req := s.serverRequest("sampling/createMessage")
		var p struct {
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		json.Unmarshal(req.Params, &p)
		key := "alpha"
		if strings.Contains(string(req.Params), "hello from beta") {
			key = "beta"
		}
		reqs[key], tokens[key] = req, p.Meta.ProgressToken
	}
	for key, tok := range tokens {
		if len(tok) == 0 || string(tok) == `"sample-tok"` {
			t.Errorf("%s: the client saw the progress token %s, want a token of the aggregator's own", key, tok)
		}
	}
	if string(tokens["alpha"]) == string(tokens["beta"]) {
		t.Fatalf("the two children's requests carry the same token %s towards the client", tokens["alpha"])
	}
	for _, key := range []string{"beta", "alpha"} {
		s.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(tokens[key]) + `,"progress":1,"total":2}}`)
		s.waitStderr("[" + key + `] client progress "sample-tok"` + "\n")
	}
	for _, key := range []string{"alpha", "beta"} {
		answerServer(s, reqs[key].ID, `"result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`)
		s.response(ids[key])
	}
	settleStderr(s, "alpha", "beta")
	for _, key := range []string{"alpha", "beta"} {
		if n := strings.Count(s.stderrText(), "["+key+"] client progress"); n != 1 {
			t.Errorf("%s received %d progress notifications, want 1:\n%s", key, n, s.stderrText())
		}
	}
}

func TestClientCancelReachesTheRightChildUnderItsIDAndNoAnswerFollows(t *testing.T) {
	s := startConfig(t, []server{wiretapped("alpha"), wiretapped("beta")})
	s.initialize("2025-11-25", clientCapsAll)
	isSlow := func(m *msg) bool {
		return m.Method == "tools/call" && strings.HasPrefix(string(m.Params), `{"name":"slow"`)
	}
	ids := map[string]string{"alpha": toolRequest(s, "alpha:slow", "{}"), "beta": `"beta slow"`}
	s.send(`{"jsonrpc":"2.0","id":"beta slow","method":"tools/call","params":{"name":"beta:slow"}}`)
	// The id each child knows its slow call by (the same number in both).
	childIDs := map[string]string{}
	for key := range ids {
		childIDs[key] = string(tapped(s, key, "the slow call reaching "+key, isSlow).ID)
	}
	isCancel := func(m *msg) bool { return m.Method == "notifications/cancelled" }

	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + ids["alpha"] + `,"reason":"user <stop> & go"}}`)
	c := tapped(s, "alpha", "notifications/cancelled reaching alpha", isCancel)
	if want := `{"requestId":` + childIDs["alpha"] + `,"reason":"user <stop> & go"}`; string(c.Params) != want {
		t.Errorf("alpha was sent the cancel\n %s\nwant (its own id, the client's reason)\n %s", c.Params, want)
	}
	s.waitStderr("[alpha] cancelled " + childIDs["alpha"] + "\n")
	// One more round trip to the same child, then look for an answer to
	// the cancelled request.
	s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)
	s.result("tools/call", `{"name":"beta:echo","arguments":{}}`)
	settleStderr(s, "alpha", "beta")
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == ids["alpha"] }); n != 0 {
		t.Errorf("the client got %d answers to the request it cancelled", n)
	}
	if tappedCount(s, "beta", isCancel) != 0 || strings.Contains(s.stderrText(), "[beta] cancelled") {
		t.Errorf("the cancel of alpha's call reached beta:\n%s", s.stderrText())
	}

	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + ids["beta"] + `}}`)
	s.waitStderr("[beta] cancelled " + childIDs["beta"] + "\n")
	s.result("tools/call", `{"name":"beta:echo","arguments":{}}`)
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == ids["beta"] }); n != 0 {
		t.Errorf("the client got %d answers to the request it cancelled", n)
	}
}

func TestClientCancelOfAToolCallCancelsTheChildsRequestToTheClient(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", clientCapsAll)
	id := toolRequest(s, "alpha:sample", "{}")
	req := s.serverRequest("sampling/createMessage")
	s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	// The child gives up its sampling request and says so.
	n := s.notification("notifications/cancelled")
	if got := string(paramsMember(n, "requestId")); got != string(req.ID) {
		t.Errorf("notifications/cancelled names request %s, want the sampling request's upstream id %s", got, req.ID)
	}
	s.waitStderr("[alpha] cancelled ")
	s.result("tools/call", `{"name":"alpha:echo","arguments":{}}`)
	if n := s.count(func(m *msg) bool { return m.isResponse() && string(m.ID) == id }); n != 0 {
		t.Errorf("the client got %d answers to the request it cancelled", n)
	}
}

func TestChildCancelOfItsRequestReachesTheClientUnderTheUpstreamID(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", clientCapsAll)
	id := toolRequest(s, "alpha:cancelclient", `{"ms":200}`)
	req := s.serverRequest("sampling/createMessage")
	n := s.notification("notifications/cancelled")
	if got := string(paramsMember(n, "requestId")); got != string(req.ID) {
		t.Errorf("notifications/cancelled names request %s, want the sampling request's upstream id %s", got, req.ID)
	}
	if got := string(paramsMember(n, "reason")); got != `"changed my mind"` {
		t.Errorf("reason %s, want the child's \"changed my mind\"", got)
	}
	if text, _ := toolResultOf(t, s.response(id)); text != "cancelled sampling" {
		t.Errorf("cancelclient: %s", text)
	}
}

// A child that cancels its request right after sending it: the aggregator
// reads both lines in one go. It may relay the request to the client or not,
// but a request it relays must then be cancelled too: the cancel must not be
// dropped as one for an unknown id, leaving the client with a request nobody
// waits for.
func TestChildCancelRightAfterItsRequestIsNotLost(t *testing.T) {
	s := startConfig(t, []server{ts("alpha")})
	s.initialize("2025-11-25", clientCapsAll)
	for range 5 {
		id := toolRequest(s, "alpha:cancelclient", `{"ms":0}`)
		if text, _ := toolResultOf(t, s.response(id)); text != "cancelled sampling" {
			t.Fatalf("cancelclient: %s", text)
		}
		// A later request of the same child: once it has reached the
		// client, the sampling request, if relayed, has long been sent.
		id = toolRequest(s, "alpha:pingclient", "{}")
		answerServer(s, s.serverRequest("ping").ID, `"result":{}`)
		s.response(id)
	}
	isSampling := func(m *msg) bool { return m.Method == "sampling/createMessage" && m.ID != nil }
	for range s.count(isSampling) {
		req := s.serverRequest("sampling/createMessage")
		s.next("notifications/cancelled of the relayed sampling request "+string(req.ID), func(m *msg) bool {
			return m.Method == "notifications/cancelled" && string(paramsMember(m, "requestId")) == string(req.ID)
		})
	}
}
