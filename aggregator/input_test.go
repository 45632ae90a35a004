package aggregator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// inputRound reads a call's input_required answer and returns its
// inputRequests and requestState.
func inputRound(t *testing.T, line string) (map[string]any, string) {
	t.Helper()
	r := decode(t, line).Result
	if r["resultType"] != "input_required" {
		t.Fatalf("want input_required, got %s", line)
	}
	asks, _ := r["inputRequests"].(map[string]any)
	state, _ := r["requestState"].(string)
	return asks, state
}

// legacyCall serves a modern client over a legacy child and has the
// client call legacy:x (id 2); it returns once the child has the call,
// with the child and the call's id at the child.
func legacyCall(t *testing.T, opts Options) (*harness, *puppet, string) {
	t.Helper()
	h, puppets := serveEras(t, opts, legacyKind)
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(modernLine("2", "tools/call", `"name":"legacy:x","arguments":{}`))
	return h, pl, idOf(t, pl.heard(t))
}

// retryLine is a modern client's retry of legacy:x with its answers.
func retryLine(id, state, responses string) string {
	return modernLine(id, "tools/call", `"name":"legacy:x","arguments":{},"inputResponses":`+responses+`,"requestState":"`+state+`"`)
}

// A legacy child's requests during a modern client's call become
// input_required answers; each retry hands the answers to the child and
// waits for its next move, over as many rounds as it takes; a
// requestState is good once.
func TestModernClientLegacyChildTwoRounds(t *testing.T) {
	t.Parallel()
	h, pl, callID := legacyCall(t, Options{})

	pl.say(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"name?"}}`)
	asks, state := inputRound(t, h.read())
	if ask, _ := json.Marshal(asks["input-1"]); string(ask) != `{"method":"elicitation/create","params":{"message":"name?"}}` {
		t.Fatalf("inputRequests %v", asks)
	}
	h.send(retryLine("3", state, `{"input-1":{"action":"accept","content":{"name":"Ada"}}}`))
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"name":"Ada"}}}` {
		t.Fatalf("the child got %s", got)
	}

	pl.say(`{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{"message":"color?"}}`)
	asks, state2 := inputRound(t, h.read())
	if asks["input-2"] == nil || state2 == state {
		t.Fatalf("second round: %v, state %q", asks, state2)
	}
	h.send(retryLine("4", state2, `{"input-2":{"action":"accept","content":{"color":"blue"}}}`))
	pl.heard(t)
	pl.say(`{"jsonrpc":"2.0","id":` + callID + `,"result":{"content":[{"type":"text","text":"Ada, blue"}]}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","content":[{"type":"text","text":"Ada, blue"}]}}` {
		t.Errorf("final answer: %s", line)
	}
	if code := errorCode(t, h.exchange(retryLine("5", state, `{}`))); code != -32602 {
		t.Errorf("a used requestState: code %d, want -32602", code)
	}
}

// A child's answer that comes while the call is parked waits for the
// retry; a request for a capability the call did not declare is refused.
func TestModernClientLegacyChildAnswersWhileParked(t *testing.T) {
	t.Parallel()
	h, pl, callID := legacyCall(t, Options{})
	pl.say(`{"jsonrpc":"2.0","id":7,"method":"roots/list"}`)
	if got := pl.heard(t); !strings.Contains(got, `"id":7,"error":{"code":-32601`) {
		t.Fatalf("undeclared roots/list: the child got %s", got)
	}
	pl.say(`{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{}}`)
	_, state := inputRound(t, h.read())
	pl.say(`{"jsonrpc":"2.0","id":` + callID + `,"result":{"content":[]}}`)
	pl.say(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"sync"}}`)
	h.send(retryLine("3", state, `{"input-1":{"action":"decline"}}`))
	if line := h.read(); line != `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}` {
		t.Errorf("retry after the child answered: %s", line)
	}
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","id":8,"result":{"action":"decline"}}` {
		t.Errorf("the child got %s", got)
	}
}

// A request of a child that cannot be given to exactly one call is never
// guessed: with two calls in flight the child gets an error.
func TestModernClientLegacyChildRequestNotGuessed(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind)
	h.leftInFlight() // the calls are never answered
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(modernLine("2", "tools/call", `"name":"legacy:x","arguments":{}`))
	h.send(modernLine("3", "tools/call", `"name":"legacy:x","arguments":{}`))
	pl.heard(t)
	pl.heard(t)
	pl.say(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"?"}}`)
	if got := pl.heard(t); !strings.Contains(got, `"id":"e1","error"`) || !strings.Contains(got, "2 calls") {
		t.Errorf("the child got %s, want an error naming the two calls", got)
	}
	pl.say(`{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{"message":"?"}}`)
	if got := pl.heard(t); !strings.Contains(got, `"id":"e2","error"`) {
		t.Errorf("no call: the child got %s", got)
	}
}

// A parked call the client never resumes is cancelled at the child after
// InputTimeout, and its request answered with an error.
func TestModernClientParkedCallExpires(t *testing.T) {
	t.Parallel()
	h, pl, callID := legacyCall(t, Options{InputTimeout: 100 * time.Millisecond})
	pl.say(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"?"}}`)
	_, state := inputRound(t, h.read())
	if got := pl.heard(t); !strings.Contains(got, `"id":"e1","error"`) || !strings.Contains(got, "did not retry") {
		t.Errorf("the child's request: %s", got)
	}
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+callID+`,"reason":"the client did not retry the call within 100ms"}}` {
		t.Errorf("the child's call: %s", got)
	}
	if code := errorCode(t, h.exchange(retryLine("3", state, `{}`))); code != -32602 {
		t.Errorf("an expired requestState: code %d, want -32602", code)
	}
}

// A legacy client over a modern child: the child's input_required becomes
// real requests to the client, and the call is retried with the answers
// and the child's requestState until the child answers for good.
func TestLegacyClientModernChildRounds(t *testing.T) {
	t.Parallel()
	h, pm, got := legacyClientCallsModern(t, `{"q":1}`)
	for round, state := range []string{"", "s1"} {
		if state != "" && (!strings.Contains(got, `"requestState":"`+state+`"`) || !strings.Contains(got, `"inputResponses":{"k`)) {
			t.Fatalf("round %d: the child got %s", round, got)
		}
		if !strings.Contains(got, `"name":"x","arguments":{"q":1}`) || !strings.Contains(got, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}`) {
			t.Fatalf("round %d: the child got %s", round, got)
		}
		next := []string{"s1", "s2"}[round]
		pm.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":{"resultType":"input_required","inputRequests":{"k` + next + `":{"method":"elicitation/create","params":{"message":"` + next + `?"}}},"requestState":"` + next + `"}}`)
		ask := decode(t, h.read())
		if ask.Method != "elicitation/create" || ask.Params["message"] != next+"?" {
			t.Fatalf("round %d: the client got %+v", round, ask)
		}
		h.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"action":"accept","content":{"n":"` + next + `"}}}`)
		got = pm.heard(t)
	}
	if !strings.Contains(got, `"inputResponses":{"ks2":{"action":"accept","content":{"n":"s2"}}}`) || !strings.Contains(got, `"requestState":"s2"`) {
		t.Fatalf("last retry: %s", got)
	}
	pm.say(`{"jsonrpc":"2.0","id":` + idOf(t, got) + `,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"done"}]}}` {
		t.Errorf("final: %s", line)
	}
}

// The client's cancel of a retry waiting for the child cancels the child's
// call and ends the exchange: the next call's requests are the next
// call's.
func TestModernClientCancelsARetry(t *testing.T) {
	t.Parallel()
	h, pl, callID := legacyCall(t, Options{})
	pl.say(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}`)
	_, state := inputRound(t, h.read())
	h.send(retryLine("3", state, `{"input-1":{"action":"accept","content":{}}}`))
	pl.heard(t) // the answer to e1
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"user"}}`)
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+callID+`,"reason":"user"}}` {
		t.Fatalf("after the cancel the child got %s", got)
	}
	h.send(modernLine("4", "tools/call", `"name":"legacy:x","arguments":{}`))
	pl.heard(t)
	pl.say(`{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{}}`)
	if asks, _ := inputRound(t, h.read()); asks["input-1"] == nil {
		t.Errorf("the next call's request: %v", asks)
	}
}

// The child's progress on a call, under the token of the client's first
// request, reaches the client under the token of the retry that waits.
func TestModernClientProgressFollowsTheRetry(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind)
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p1"},"name":"legacy:x"}}`)
	callID := idOf(t, pl.heard(t))
	pl.say(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{}}`)
	_, state := inputRound(t, h.read())
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"progressToken":"p2"},"name":"legacy:x","inputResponses":{"input-1":{"action":"decline"}},"requestState":"` + state + `"}}`)
	pl.heard(t)
	pl.say(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p2","progress":1}}` {
		t.Errorf("progress: %s", line)
	}
	pl.say(`{"jsonrpc":"2.0","id":` + callID + `,"result":{"content":[]}}`)
	h.read()
	pl.say(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2}}`)
	if line := h.exchange(modernLine("4", "tools/list", "")); !strings.Contains(line, `"id":4`) {
		t.Errorf("progress after the call ended reached the client: %s", line)
	}
}
