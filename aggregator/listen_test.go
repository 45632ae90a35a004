package aggregator

import (
	"strings"
	"testing"
)

// subscriptions/listen is acknowledged first with what the aggregator will
// send; then every child's list change comes on it, stamped with its id,
// until the client cancels it.
func TestListenRelaysEveryChildsListChanges(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind, modernKind)
	h.exchange(modernLine("1", "tools/list", ""))
	pm := puppets[modernKind]
	own := pm.listens
	ownListen := <-own // the aggregator's own, for its registry
	if !strings.Contains(ownListen, `"toolsListChanged":true`) {
		t.Fatalf("the modern child got %s", ownListen)
	}

	h.send(modernLine(`"L"`, "subscriptions/listen", `"notifications":{"toolsListChanged":true,"promptsListChanged":true}`))
	if line := h.read(); line != `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}` {
		t.Fatalf("acknowledgement: %s (prompts: no child has them)", line)
	}
	stamped := `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"}}}`
	puppets[legacyKind].say(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if line := h.read(); line != stamped {
		t.Fatalf("legacy child's change: %s", line)
	}
	pm.say(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + idOf(t, ownListen) + `}}}`)
	if line := h.read(); line != stamped {
		t.Fatalf("modern child's change: %s", line)
	}

	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}}`)
	h.exchange(modernLine("8", "tools/list", "")) // the cancel is read
	puppets[legacyKind].say(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	// Nothing more on the stream: the next line is the answer to the next
	// request (the list refreshed first, so that it has nothing to wait
	// for).
	for {
		line := h.exchange(modernLine("9", "tools/list", ""))
		if line == stamped {
			t.Fatalf("a list change after the stream was cancelled: %s", line)
		}
		if strings.Contains(line, `"id":9`) {
			break
		}
	}
}

// Resource subscriptions go to the child serving each URI: resources/
// subscribe for a legacy child, whose updates reach the streams that want
// the URI.
func TestListenResourceSubscriptions(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind)
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(modernLine("2", "subscriptions/listen", `"notifications":{"resourceSubscriptions":["file:///a","none:///b"]}`))
	if got := pl.heard(t); !strings.Contains(got, `"method":"resources/subscribe","params":{"uri":"file:///a"}`) {
		t.Fatalf("the child got %s", got)
	}
	if line := h.read(); !strings.Contains(line, `"resourceSubscriptions":["file:///a"]`) || !strings.Contains(line, `subscriptionId":2}`) {
		t.Fatalf("acknowledgement: %s", line)
	}
	pl.say(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}` {
		t.Fatalf("update: %s", line)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	if got := pl.heard(t); !strings.Contains(got, `"method":"resources/unsubscribe","params":{"uri":"file:///a"}`) {
		t.Fatalf("after the cancel the child got %s", got)
	}
}

// A modern request's logLevel sets a legacy child's level, and the child's
// log messages reach the client only while such a call is in flight.
func TestModernLogLevelForLegacyChild(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, legacyKind)
	pl := puppets[legacyKind]
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"},"name":"legacy:x"}}`)
	if got := pl.heard(t); got != `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}` && !strings.Contains(got, `"logging/setLevel","params":{"level":"debug"}`) {
		t.Fatalf("the child got %s, want logging/setLevel debug first", got)
	}
	callID := idOf(t, pl.heard(t))
	msg := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"working"}}`
	pl.say(msg)
	if line := h.read(); line != msg {
		t.Fatalf("log during the call: %s", line)
	}
	pl.say(`{"jsonrpc":"2.0","id":` + callID + `,"result":{"content":[]}}`)
	h.read()
	pl.say(msg)
	if line := h.exchange(modernLine("4", "tools/list", "")); !strings.Contains(line, `"id":4`) {
		t.Errorf("a log with no call asking for it reached the client: %s", line)
	}
}

// A legacy client's resources/subscribe to a modern child, which has no
// such method, becomes a listen of the aggregator's at the child; the
// child's updates reach the client; unsubscribe ends the listen.
func TestLegacyClientSubscribesToModernChild(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, modernKind)
	pm := puppets[modernKind]
	h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	<-pm.listens // the aggregator's own
	if line := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///m"}}`); line != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("subscribe: %s", line)
	}
	listen := <-pm.listens
	if !strings.Contains(listen, `"resourceSubscriptions":["file:///m"]`) {
		t.Fatalf("the child got %s", listen)
	}
	update := `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///m","_meta":{"io.modelcontextprotocol/subscriptionId":` + idOf(t, listen) + `}}}`
	pm.say(update)
	if line := h.read(); line != update {
		t.Errorf("update: %s", line)
	}
	h.exchange(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"file:///m"}}`)
	if got := pm.heard(t); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+idOf(t, listen)+`}}` {
		t.Errorf("after unsubscribe the child got %s", got)
	}
}

// At the end of the client's input an open stream ends with its result
// (graceful closure), not with the shutdown error.
func TestListenEndsWithItsResultAtShutdown(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{}, legacyKind)
	h.exchange(modernLine("1", "tools/list", ""))
	h.send(modernLine("2", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	h.read() // acknowledged
	h.closeInput()
	rest := h.rest()
	if len(rest) != 1 || rest[0] != `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":2}}}` {
		t.Errorf("after the input ended: %q", rest)
	}
}

// A modern client's stream watches a modern child's URI through a listen
// of the aggregator's at the child: the child's updates come on the
// client's stream, and the client's cancel ends the child's listen.
func TestListenWatchesAModernChildsURIThroughItsListen(t *testing.T) {
	t.Parallel()
	h, puppets := serveEras(t, Options{}, modernKind)
	pm := puppets[modernKind]
	h.exchange(modernLine("1", "tools/list", ""))
	<-pm.listens // the aggregator's own
	h.send(modernLine(`"S"`, "subscriptions/listen", `"notifications":{"resourceSubscriptions":["file:///m"]}`))
	if line := h.read(); !strings.Contains(line, `"resourceSubscriptions":["file:///m"]`) {
		t.Fatalf("acknowledgement: %s", line)
	}
	listen := <-pm.listens
	if !strings.Contains(listen, `"resourceSubscriptions":["file:///m"]`) {
		t.Fatalf("the child got %s", listen)
	}
	pm.say(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///m","_meta":{"io.modelcontextprotocol/subscriptionId":` + idOf(t, listen) + `}}}`)
	if line := h.read(); line != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///m","_meta":{"io.modelcontextprotocol/subscriptionId":"S"}}}` {
		t.Fatalf("update: %s", line)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"S"}}`)
	if got := pm.heard(t); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+idOf(t, listen)+`}}` {
		t.Errorf("after the cancel the child got %s", got)
	}
}
