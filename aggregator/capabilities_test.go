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
// keys not invented yet included. A fresh start (nothing remembered)
// starts it with the client's initialize and answers with what it
// declared, exactly: its extensions, experimental and unknown keys, its
// instructions under its key, and no capability it did not declare (no
// prompts, no tasks). A later session's initialize says the same from
// what the child declared when it last ran (Memory), starting nothing.
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
	memory := newMapMemory()
	var started atomic.Int32
	opts := Options{Memory: memory, Start: func(config.Server) (Process, error) { started.Add(1); return startFake(child), nil }}
	h := serveOptions(t, opts, "k")
	clientCaps := `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"experimental":{"y":{}},"newClientThing":{}}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + clientCaps + `}}`
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{}},"newThing":{"on":true}},"serverInfo":{"name":"agg","version":"test"},"instructions":"## k\n\nAsk k."}}`
	if first := h.exchange(initialize); first != want {
		t.Errorf("a fresh start's initialize answer:\n got %s\nwant %s", first, want)
	}
	if n := started.Load(); n != 1 {
		t.Errorf("a fresh start's initialize started %d servers, want 1", n)
	}
	got, _ := jsonrpc.Member(<-params, "capabilities")
	if string(got) != clientCaps {
		t.Errorf("the child got capabilities %s, want %s", got, clientCaps)
	}
	h.closeInput()
	h.rest()

	h = serveOptions(t, opts, "k")
	if answer := h.exchange(initialize); answer != want {
		t.Errorf("a warm start's initialize answer:\n got %s\nwant %s", answer, want)
	}
	if n := started.Load(); n != 1 {
		t.Errorf("%d servers started, want 1 (the first session's): a warm initialize starts none", n)
	}
}

// mapMemory is a Memory in a map.
type mapMemory struct {
	mu   sync.Mutex
	kept map[string][]byte
}

func newMapMemory() *mapMemory { return &mapMemory{kept: map[string][]byte{}} }

// Recall and Keep keep one record a server and scope.
func (m *mapMemory) Recall(s config.Server, scope []byte) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.kept[s.Key+"\x00"+string(scope)]
	return b, ok
}

func (m *mapMemory) Keep(s config.Server, scope, record []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kept[s.Key+"\x00"+string(scope)] = append([]byte(nil), record...)
}

// record is what is kept of server key for a client of protocol
// 2025-11-25 that declared no capabilities.
func (m *mapMemory) record(key string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.kept[key+"\x00"+"2025-11-25\n{}"])
}

// warmMemory is what a first session over keys leaves remembered: its
// client initializes (a fresh start) and lists, every server comes up or
// fails, and it ends. opts.Start must start each server without waiting
// for the test.
func warmMemory(t *testing.T, opts Options, keys ...string) *mapMemory {
	t.Helper()
	m := newMapMemory()
	opts.Memory = m
	opts.listDeadline = nil
	h := serveOptions(t, opts, keys...)
	h.exchange(initAs("warm-up"))
	h.startServers()
	h.closeInput()
	h.rest()
	if !strings.Contains(m.record(keys[0]), "{") {
		t.Fatalf("the warm-up left nothing remembered of %q", keys[0])
	}
	return m
}
