package aggregator

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// slowStart runs an aggregator over a child "fast" and a child "slow"
// whose initialize (and server/discover) the test answers by closing the
// returned channel; each lists one tool, x.
func slowStart(t *testing.T, opts Options) (*harness, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	opts.Start = func(s config.Server) (Process, error) {
		slow := s.Key == "slow"
		return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
			switch m.Method {
			case "initialize", "server/discover":
				if m.Method == "server/discover" {
					out.Write(jsonrpc.AppendError(nil, m.ID, []byte(`{"code":-32601,"message":"Method not found"}`)))
					return
				}
				go func() {
					if slow {
						<-release
					}
					answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"p","version":"1"}}`)
				}()
			case "tools/list":
				answer(`{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`)
			case "prompts/list":
				answer(`{"prompts":[]}`)
			case "tools/call":
				answer(`{"content":[{"type":"text","text":"done"}]}`)
			}
		}), nil
	}
	if opts.listDeadline == nil {
		opts.listDeadline = once("fast", "codex-mcp-client")
	}
	h := serveOptions(t, opts, "fast", "slow")
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return h, release
}

// once is the tests' clock for the first lists: they may wait no longer
// once the server key is up, for every client but patient, whose lists
// wait as long as they must.
func once(key, patient string) func(*startup, string) <-chan struct{} {
	return func(a *startup, client string) <-chan struct{} {
		if client == patient {
			return nil
		}
		done := make(chan struct{})
		for _, c := range a.children() {
			if c.key == key {
				go func() {
					<-c.Ready()
					close(done)
				}()
			}
		}
		return done
	}
}

// next reads lines until one contains want, and returns it.
func (h *harness) next(want string) string {
	h.t.Helper()
	for {
		if l := h.read(); strings.Contains(l, want) {
			return l
		}
	}
}

// A server that does not answer initialize holds neither the client's
// initialize nor a call to another server; when it is up, the client is
// told its tools are there, and gets them.
func TestSlowServerIsAnnouncedWhenUp(t *testing.T) {
	t.Parallel()
	h, release := slowStart(t, Options{})
	init := h.exchange(initAs("claude-code")) // answered while slow is still starting
	for _, want := range []string{`"tools":{"listChanged":true}`, `"prompts":{"listChanged":true}`, `"resources":{"listChanged":true`} {
		if !strings.Contains(init, want) {
			t.Errorf("initialize answer %s: no %s for the server still starting", init, want)
		}
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"fast:x","inputSchema":{"type":"object"}}]}}`; got != want {
		t.Fatalf("tools/list before slow is up:\n got %s\nwant %s", got, want)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fast:x","inputSchema":{"type":"object"}}}`); !strings.Contains(got, `"done"`) {
		t.Fatalf("a call to the server that is up: %s", got)
	}
	close(release)
	h.next(`"method":"notifications/tools/list_changed"`)
	h.next(`"method":"notifications/prompts/list_changed"`)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`), `{"jsonrpc":"2.0","id":4,"result":{"tools":[{"name":"fast:x","inputSchema":{"type":"object"}},{"name":"slow:x","inputSchema":{"type":"object"}}]}}`; got != want {
		t.Fatalf("tools/list once slow is up:\n got %s\nwant %s", got, want)
	}
}

// A client that takes its first tools/list as final (Codex), on a fresh
// start: its initialize waits, within its budget, for the server still
// starting (a ping is answered meanwhile), and its first list, at once,
// holds every server.
func TestFirstListWaitsForAClientThatIgnoresListChanged(t *testing.T) {
	t.Parallel()
	h, release := slowStart(t, Options{})
	h.send(initAs("codex-mcp-client"))
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("a ping while initialize waits: %s", got)
	}
	close(release)
	if got := h.read(); !strings.Contains(got, `"id":1,"result"`) || !strings.Contains(got, `"prompts":{"listChanged":true}`) {
		t.Fatalf("initialize, once slow is up: %s", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"fast:x","inputSchema":{"type":"object"}},{"name":"slow:x","inputSchema":{"type":"object"}}]}}`; got != want {
		t.Fatalf("the first tools/list:\n got %s\nwant %s", got, want)
	}
	h.send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if got := h.read(); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Errorf("after the list, %s: no list_changed is due (the list was whole)", got)
	}
}

// The wait of a client that ignores list_changed stays within its own
// start-up timeout, and within ours.
func TestListWaitIsBoundedByTheClientsTimeout(t *testing.T) {
	t.Parallel()
	o := Options{StartupTimeout: time.Minute, FastListWait: time.Second}
	for client, want := range map[string]time.Duration{
		"codex-mcp-client":   24 * time.Second, // inside its 30 s
		"claude-ai":          48 * time.Second, // inside its 60 s
		"continue-client":    16 * time.Second,
		"claude-code":        time.Second, // it fetches again
		"Visual Studio Code": time.Second,
		"":                   4 * time.Second, // not known: lists once, gives up after 5 s
		"some-agent":         4 * time.Second,
		"mcp":                4 * time.Second,
	} {
		if got := o.listWait(client); got != want {
			t.Errorf("%q: lists wait %v, want %v", client, got, want)
		}
	}
	if got := (Options{StartupTimeout: 10 * time.Second}).listWait("codex-mcp-client"); got != 10*time.Second {
		t.Errorf("with --startup-timeout 10s: %v", got)
	}
}

// A client of protocol 2026-07-28 gets server/discover answered while a
// server is still starting, and the server's tools on its listen stream
// once it is up.
func TestSlowServerDoesNotHoldDiscover(t *testing.T) {
	t.Parallel()
	h, release := slowStart(t, Options{})
	if got := h.exchange(modernLine("1", "server/discover", "")); !strings.Contains(got, `"supportedVersions"`) {
		t.Fatalf("server/discover: %s", got)
	}
	h.send(modernLine("2", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	h.next(`notifications/subscriptions/acknowledged`)
	if got := h.exchange(modernLine("3", "tools/list", "")); !strings.Contains(got, `"tools":[{"name":"fast:x","inputSchema":{"type":"object"}}]`) {
		t.Fatalf("tools/list before slow is up: %s", got)
	}
	close(release)
	h.next(`"method":"notifications/tools/list_changed"`)
	if got := h.exchange(modernLine("4", "tools/list", "")); !strings.Contains(got, `{"name":"slow:x","inputSchema":{"type":"object"}}`) {
		t.Fatalf("tools/list once slow is up: %s", got)
	}
}
