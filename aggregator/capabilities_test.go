package aggregator

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A child is initialized with what the client declared, extensions and
// keys not invented yet included, once a request needs it; the first
// session's initialize answer offers what any server may have
// (capabilities.Pending); a later session's carries what the child
// declared when it last started (Memory), without starting it.
func TestCapabilitiesBothWays(t *testing.T) {
	t.Parallel()
	params := make(chan []byte, 1)
	child := func(method string, p []byte) string {
		if method == "initialize" {
			params <- p
			return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/ui":{}},"experimental":{"x":{}},"newThing":{"on":true}},"instructions":"Ask k.","serverInfo":{"name":"c","version":"1"}}`
		}
		return toolServer()(method, p)
	}
	memory := &mapMemory{kept: map[string][]byte{}}
	var started atomic.Int32
	opts := Options{Memory: memory, Start: func(config.Server) (Process, error) { started.Add(1); return startFake(child), nil }}
	h := serveOptions(t, opts, "k")
	clientCaps := `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"experimental":{"y":{}},"newClientThing":{}}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + clientCaps + `}}`
	first := h.exchange(initialize)
	if n := started.Load(); n != 0 {
		t.Errorf("initialize started %d servers", n)
	}
	if want := `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`; !strings.Contains(first, want) {
		t.Errorf("the first initialize answer %s\nwant it to offer what a server not started yet may have: %s", first, want)
	}
	h.startServers()
	got, _ := jsonrpc.Member(<-params, "capabilities")
	if string(got) != clientCaps {
		t.Errorf("the child got capabilities %s, want %s", got, clientCaps)
	}
	h.closeInput()
	h.rest()

	h = serveOptions(t, opts, "k")
	answer := h.exchange(initialize)
	if n := started.Load(); n != 1 {
		t.Errorf("%d servers started, want 1 (the first session's)", n)
	}
	if !strings.Contains(answer, `"instructions":"## k\n\nAsk k."`) {
		t.Errorf("initialize answer %s: not the instructions the server gave when it last started", answer)
	}
	for _, want := range []string{`"experimental":{"x":{}}`, `"extensions":{"io.modelcontextprotocol/ui":{}}`, `"newThing":{"on":true}`,
		`"prompts":{"listChanged":true}`} { // and what it may offer now
		if !strings.Contains(answer, want) {
			t.Errorf("initialize answer %s\nwant it to contain %s", answer, want)
		}
	}
}

// mapMemory is a Memory in a map.
type mapMemory struct {
	mu   sync.Mutex
	kept map[string][]byte
}

func (m *mapMemory) Recall(s config.Server) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.kept[s.Key]
	return b, ok
}

func (m *mapMemory) Keep(s config.Server, declared []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kept[s.Key] = declared
}
