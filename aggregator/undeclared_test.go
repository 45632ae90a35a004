package aggregator

import (
	"strings"
	"testing"
)

// A server's request for a mode the client did not declare is refused to
// the server with -32602 and never reaches the client: URL-mode
// elicitation of a client that declared elicitation {} (form only), form
// elicitation of one that declared only url, sampling with tools of one
// without sampling.tools. What the client declared still reaches it.
func TestUndeclaredModesAreRefusedToTheServer(t *testing.T) {
	t.Parallel()
	const (
		urlAsk   = `{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}}`
		formAsk  = `{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}}}`
		toolsAsk = `{"jsonrpc":"2.0","id":"q","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1,"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`
	)
	for _, tc := range []struct {
		caps, ask, part string
	}{
		{`{"elicitation":{}}`, urlAsk, "elicitation.url"},
		{`{"elicitation":{"form":{}}}`, urlAsk, "elicitation.url"},
		{`{"elicitation":{"url":{}}}`, formAsk, "elicitation.form"},
		{`{"sampling":{}}`, toolsAsk, "sampling.tools"},
		{`{"elicitation":{"url":{}}}`, urlAsk, ""},
		{`{"elicitation":{}}`, formAsk, ""},
		{`{"sampling":{"tools":{}}}`, toolsAsk, ""},
	} {
		h, puppets := serveEras(t, Options{}, legacyKind)
		pl := puppets[legacyKind]
		h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + tc.caps + `}}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		pl.say(tc.ask)
		if tc.part == "" {
			if got := h.read(); !strings.Contains(got, `"method":"`+decode(t, tc.ask).Method+`"`) {
				t.Errorf("%s, %s: the client got %s", tc.caps, tc.ask, got)
			}
			continue
		}
		want := `{"jsonrpc":"2.0","id":"q","error":{"code":-32602,"message":"Invalid params: ` + decode(t, tc.ask).Method + ` asks for ` + tc.part + `, which the client did not declare"}}`
		if got := pl.heard(t); got != want {
			t.Errorf("%s: the server got\n %s\nwant\n %s", tc.caps, got, want)
		}
		if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Errorf("%s: the client got %s before its ping's answer", tc.caps, got)
		}
	}
}

// A modern client's call declares its capabilities in its _meta: a legacy
// server's URL-mode elicitation during a call that declared elicitation {}
// is refused to the server and never becomes an input request.
func TestUndeclaredModeOfAModernCallIsRefused(t *testing.T) {
	t.Parallel()
	h, pl, _ := legacyCall(t, Options{})
	h.leftInFlight() // the call waits for good
	pl.say(`{"jsonrpc":"2.0","id":"q","method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}}`)
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","id":"q","error":{"code":-32602,"message":"Invalid params: elicitation/create asks for elicitation.url, which the client did not declare"}}` {
		t.Errorf("the server got %s", got)
	}
}

// A modern server's input request for a mode the legacy client did not
// declare fails the call, naming the server and the capability; the
// client is not asked.
func TestUndeclaredModeOfAModernServerFailsTheCall(t *testing.T) {
	t.Parallel()
	h, pm, got := legacyClientCallsModern(t, `{}`)
	pm.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}}},"requestState":"s1"}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"server \"modern\" asked for input with \"elicitation/create\", which the client did not declare (capability \"elicitation.url\")"}}` {
		t.Errorf("the call got %s", line)
	}
}
