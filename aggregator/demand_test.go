package aggregator

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// demandServers runs an aggregator over three servers: "fast", "slow",
// whose initialize (or server/discover) the test answers by closing the
// returned channel, and "broken", which cannot be started; a warm start:
// what a session before left remembered (fast and slow as they ran,
// broken as failed) stands in for them. It returns the keys of the servers
// started so far, in order.
func demandServers(t *testing.T, opts Options) (*harness, chan struct{}, func() []string) {
	t.Helper()
	return demandKeys(t, opts, "fast", "slow", "broken")
}

// demandKeys is demandServers over servers of the keys given: "slow" and
// "broken" as there, any other as "fast". Unless opts.Memory is set, the
// memory is what a first session over them left (warmMemory).
func demandKeys(t *testing.T, opts Options, keys ...string) (*harness, chan struct{}, func() []string) {
	t.Helper()
	release := make(chan struct{})
	if opts.Memory == nil {
		released := make(chan struct{})
		close(released)
		warm := opts
		warm.Start = demandStart(released, func(string) {})
		opts.Memory = warmMemory(t, warm, keys...)
	}
	var mu sync.Mutex
	var started []string
	opts.Start = demandStart(release, func(key string) {
		mu.Lock()
		started = append(started, key)
		mu.Unlock()
	})
	h := serveOptions(t, opts, keys...)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return h, release, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(started)
	}
}

// demandStart starts the servers of demandKeys, telling each start to
// started; slow answers initialize once release is closed.
func demandStart(release chan struct{}, started func(key string)) func(config.Server) (Process, error) {
	return func(s config.Server) (Process, error) {
		started(s.Key)
		if s.Key == "broken" {
			return nil, errors.New(`exec: "broken-server": executable file not found in $PATH`)
		}
		slow := s.Key == "slow"
		return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
			switch m.Method {
			case "server/discover":
				out.Write(jsonrpc.AppendError(nil, m.ID, []byte(`{"code":-32601,"message":"Method not found"}`)))
			case "initialize":
				go func() {
					if slow {
						<-release
					}
					answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{"subscribe":true},"completions":{}},"serverInfo":{"name":"p","version":"1"}}`)
				}()
			case "tools/list":
				answer(`{"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`)
			case "prompts/list":
				answer(`{"prompts":[{"name":"p"}]}`)
			case "resources/list":
				answer(`{"resources":[{"uri":"` + s.Key + `://r","name":"r"}]}`)
			case "resources/templates/list":
				answer(`{"resourceTemplates":[]}`)
			case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "completion/complete":
				answer(`{"content":[{"type":"text","text":"done"}],"messages":[],"contents":[],"completion":{"values":[]}}`)
			}
		}), nil
	}
}

// initialize and server/discover are answered at once and start no
// server: a probe that closes its input (Claude Desktop's sibling copy)
// costs no process.
func TestASessionThatOnlyBeginsStartsNoServer(t *testing.T) {
	t.Parallel()
	for _, begin := range []string{initAs("some-agent"), modernLine("1", "server/discover", "")} {
		h, _, started := demandServers(t, Options{})
		if got := h.exchange(begin); !strings.Contains(got, `"result"`) {
			t.Fatalf("%s: answered %s", begin, got)
		}
		h.closeInput()
		h.rest()
		if got := started(); len(got) != 0 {
			t.Errorf("%.60s then the end of input started %q, want none", begin, got)
		}
	}
}

// A call to a server still starting waits for it and is then routed ("Tool
// not found" never stands for "not started yet"), and starts that server
// alone: a session per call (langchain-mcp-adapters) starts one server, as
// it would directly. Meanwhile the client is served.
func TestACallStartsOnlyItsServerAndWaitsForIt(t *testing.T) {
	t.Parallel()
	h, release, started := demandServers(t, Options{})
	h.exchange(initAs("mcp"))
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow:x","inputSchema":{"type":"object"}}}`)
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("while the call waits for its server, a ping got %s", got)
	}
	close(release)
	if got := h.read(); !strings.Contains(got, `"id":2,"result"`) || !strings.Contains(got, `"done"`) {
		t.Fatalf("the call to the server that was starting: %s", got)
	}
	if got := started(); !slices.Equal(got, []string{"slow"}) {
		t.Errorf("servers started: %q, want only slow", got)
	}
}

// A name is owned by its server as names are formed for the client: a
// strict name's key, and a key cut to make a name fit.
func TestANameFindsItsServer(t *testing.T) {
	t.Parallel()
	h, release, started := demandServers(t, Options{})
	close(release)
	h.exchange(initAs("claude-ai")) // strict names: fast__x
	if got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fast__x"}}`); !strings.Contains(got, `"done"`) {
		t.Fatalf("a strict name: %s", got)
	}
	// A name shortened for a client with little room keeps the start of
	// its key: every server whose key begins so is started.
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sl__x_0123abcd"}}`); !strings.Contains(got, `"error"`) {
		t.Fatalf("a name nobody listed: %s", got)
	}
	if got := started(); !slices.Equal(got, []string{"fast", "slow"}) {
		t.Errorf("servers started: %q, want fast, then slow (sl... begins its key)", got)
	}
}

// A call to a server that failed to start is "not found" (-32601), as a
// tool of a server that is gone is, and says that the server failed to
// start, without its own words (they are in the log); a name of no
// configured server is "not found", and starts nothing.
func TestACallToAServerThatFailedSaysSo(t *testing.T) {
	t.Parallel()
	h, _, started := demandServers(t, Options{})
	h.exchange(initAs("some-agent"))
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broken:x"}}`)
	want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Tool not found: broken:x: server \"broken\" failed to start (the aggregator's log says why)"}}`
	if got != want {
		t.Errorf("a call to the server that failed:\n got %s\nwant %s", got, want)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nosuch:x"}}`); !strings.Contains(got, `"Tool not found: nosuch:x"`) {
		t.Errorf("a call to no configured server: %s", got)
	}
	if got := started(); !slices.Equal(got, []string{"broken"}) {
		t.Errorf("servers started: %q, want only broken", got)
	}
	if !strings.Contains(h.logged(), "executable file not found") {
		t.Errorf("the log does not say why broken failed:\n%s", h.logged())
	}
}

// A fresh start (nothing remembered): the client's initialize starts the
// servers and waits, within the client's budget, for those still
// starting, so that its answer says what they declared, exactly, and its
// first list holds them all, at once; a ping is answered meanwhile.
func TestAFreshStartWaitsForTheServersInInitialize(t *testing.T) {
	t.Parallel()
	h, release, started := demandServers(t, Options{Memory: newMapMemory(), listDeadline: once("", "some-agent")})
	h.send(initAs("some-agent"))
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("while initialize waits, a ping got %s", got)
	}
	close(release)
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"completions":{}},"serverInfo":{"name":"agg","version":"test"}}}`
	if got := h.read(); got != want {
		t.Errorf("a fresh start's initialize answer:\n got %s\nwant %s", got, want)
	}
	if got := started(); len(got) != 3 {
		t.Errorf("a fresh start's initialize started %q, want every server", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"fast:x","inputSchema":{"type":"object"}},{"name":"slow:x","inputSchema":{"type":"object"}}]}}`; got != want {
		t.Errorf("the first list:\n got %s\nwant %s", got, want)
	}
}

// A warm start: a client that lists once gets its first list at once,
// whole, from what the servers listed when they last ran, though slow is
// not up; its call of slow's tool waits for slow, and is routed.
func TestAWarmFirstListIsWholeAtOnce(t *testing.T) {
	t.Parallel()
	h, release, _ := demandServers(t, Options{listDeadline: once("", "some-agent")})
	if got := h.exchange(initAs("some-agent")); !strings.Contains(got, `"completions":{}`) || strings.Contains(got, `"tasks"`) {
		t.Errorf("a warm initialize answer %s: want what fast and slow declared when they last ran, and nothing else", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got, want := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"fast:x","inputSchema":{"type":"object"}},{"name":"slow:x","inputSchema":{"type":"object"}}]}}`; got != want {
		t.Errorf("the first list, slow not up:\n got %s\nwant %s", got, want)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow:x"}}`)
	if got := h.exchange(`{"jsonrpc":"2.0","id":4,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Fatalf("while the call waits for slow, a ping got %s", got)
	}
	close(release)
	if got := h.read(); !strings.Contains(got, `"id":3,"result"`) || !strings.Contains(got, `"done"`) {
		t.Errorf("the call of slow's remembered tool, once slow is up: %s", got)
	}
}

// Every request routed to one server waits for it while it starts, and is
// then routed: by name (tools/call, prompts/get, completion/complete of a
// prompt) or by URI (resources/read, resources/subscribe).
func TestEveryRoutedRequestWaitsForItsServer(t *testing.T) {
	t.Parallel()
	for _, req := range []string{
		`"method":"tools/call","params":{"name":"slow:x"}`,
		`"method":"prompts/get","params":{"name":"slow:p"}`,
		`"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"slow:p"},"argument":{"name":"a","value":""}}`,
		`"method":"resources/read","params":{"uri":"slow://r"}`,
		`"method":"resources/subscribe","params":{"uri":"slow://r"}`,
	} {
		h, release, _ := demandServers(t, Options{})
		h.exchange(initAs("mcp"))
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.send(`{"jsonrpc":"2.0","id":2,` + req + `}`)
		if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
			t.Fatalf("%s: while it waits for its server, a ping got %s", req, got)
		}
		close(release)
		if got := h.read(); !strings.Contains(got, `"id":2,"result"`) || !strings.Contains(got, `"done"`) {
			t.Errorf("%s, once its server is up: %s", req, got)
		}
	}
}

// A call of a server whose key begins another's ("s" and "slow", as "git"
// and "github") starts its own server alone and waits for nobody else; an
// error names its own server, not the other.
func TestAKeyThatBeginsAnotherIsItsOwn(t *testing.T) {
	t.Parallel()
	h, _, started := demandKeys(t, Options{}, "slow", "s", "broken", "b")
	h.exchange(initAs("mcp"))
	if got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"s:x"}}`); !strings.Contains(got, `"done"`) {
		t.Fatalf("s:x while slow is still starting: %s", got)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b:nosuch"}}`); !strings.Contains(got, `"Tool not found: b:nosuch"`) {
		t.Errorf("a tool b does not have: %s", got)
	}
	if got := started(); !slices.Equal(got, []string{"s", "b"}) {
		t.Errorf("servers started: %q, want s, then b", got)
	}
}

// A server a reload adds once every server was started is started by the
// reload; a call of it meanwhile waits for it, and is not "not found".
func TestACallWaitsForAServerAReloadStarts(t *testing.T) {
	t.Parallel()
	h, release, _ := demandKeys(t, Options{}, "fast")
	h.exchange(initAs("mcp"))
	h.startServers()
	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		h.a.Reload([]config.Server{{Key: "fast", Command: "fake"}, {Key: "slow", Command: "fake"}})
	}()
	for !slices.ContainsFunc(h.a.children(), func(c *child) bool { return c.key == "slow" && c.Launched() }) {
		runtime.Gosched() // the reload publishes and starts it: polled, nothing says when
	}
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow:x"}}`)
	if got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("while the call waits for the server the reload starts, a ping got %s", got)
	}
	close(release)
	if got := readUntil(t, h, `"id":2`); !strings.Contains(got, `"done"`) {
		t.Errorf("the call of the server the reload started: %s", got)
	}
	<-reloaded
}

// A 2026-07-28 client known to fetch lists again hears of a change only on
// an open subscriptions/listen stream: without one, its first list waits as
// for a client that lists once; a legacy one gets the fast answer.
func TestAModernClientWithoutAStreamIsServedAsOneThatListsOnce(t *testing.T) {
	t.Parallel()
	legacy, _, _ := demandServers(t, Options{})
	legacy.exchange(initAs("claude-code"))
	if got := legacy.a.start.firstListWait(); got != DefaultFastListWait {
		t.Errorf("a legacy claude-code: its first list waits %v, want %v", got, DefaultFastListWait)
	}
	modern, _, _ := demandServers(t, Options{})
	modern.exchange(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"1"}}}}`)
	if got, want := modern.a.start.firstListWait(), 24*time.Second; got != want {
		t.Errorf("a modern claude-code without a stream: its first list waits %v, want %v (inside its 30 s)", got, want)
	}
}

// server/discover's caching hint, while a server has not opened its
// session, is stale at once and private, whatever the servers up say: what
// it offers for that server is a guess.
func TestDiscoverIsNotCachedWhileAServerIsUnknown(t *testing.T) {
	t.Parallel()
	h, _ := serveEras(t, Options{ProbeTimeout: time.Minute, listDeadline: once(modernKind, "")}, modernKind, silentKind)
	h.exchange(modernLine("1", "tools/list", "")) // starts both; answered once modern is up
	got := h.exchange(modernLine("2", "server/discover", ""))
	if !strings.Contains(got, `"ttlMs":0,"cacheScope":"private"`) {
		t.Errorf("server/discover while silent is still probed: %s, want ttlMs 0, private", got)
	}
}

// What the initialize answer offered for a server still unknown when the
// client's budget ended, and the server turned out not to have
// (resources/subscribe, completion/complete), is answered here, and never
// reaches the server.
func TestWhatAServerDidNotDeclareNeverReachesIt(t *testing.T) {
	t.Parallel()
	reached := make(chan string, 4)
	answered, over := make(chan struct{}), make(chan struct{})
	close(over)
	budgetOver := func(*startup, string) <-chan struct{} { return over }
	h := serveOptions(t, Options{listDeadline: budgetOver, Start: func(config.Server) (Process, error) {
		return startFake(func(method string, _ []byte) string {
			switch method {
			case "initialize":
				<-answered // still unknown when the client's budget ends
				return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{}},"serverInfo":{"name":"r","version":"1"}}`
			case "tools/list":
				return `{"tools":[]}`
			case "resources/list":
				return `{"resources":[{"uri":"file:///a","name":"a"}]}`
			case "resources/templates/list":
				return `{"resourceTemplates":[]}`
			}
			reached <- method
			return `{}`
		}), nil
	}}, "r")
	init := h.exchange(initAs("mcp"))
	close(answered)
	if !strings.Contains(init, `"subscribe":true`) || !strings.Contains(init, `"completions":{}`) {
		t.Fatalf("initialize answer %s: want subscriptions and completions offered for a server still unknown", init)
	}
	if !strings.Contains(h.logged(), `server "r": not up within the client's first-list budget`) {
		t.Errorf("the log does not say that r was offered unknown:\n%s", h.logged())
	}
	for i, req := range []string{
		`"method":"resources/subscribe","params":{"uri":"file:///a"}`,
		`"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"file:///a"},"argument":{"name":"x","value":""}}`,
	} {
		got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, 2+i, req))
		if !strings.Contains(got, `"code":-32601`) || !strings.Contains(got, `server \"r\" does not offer`) {
			t.Errorf("%s: %s, want -32601 naming the server", req, got)
		}
	}
	select {
	case m := <-reached:
		t.Errorf("the server got %s, which it never declared", m)
	default:
	}
}

// A server that opens its session after the client's logging/setLevel was
// answered (it went to the servers up then) is set to that level too, as
// a direct connection would have set it.
func TestALateServerGetsTheClientsLogLevel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	levels := make(chan string, 2)
	h := serveOptions(t, Options{listDeadline: once("fast", ""), Start: func(s config.Server) (Process, error) {
		slow := s.Key == "slow"
		return startFake(func(method string, params []byte) string {
			switch method {
			case "initialize":
				if slow {
					<-release
				}
				return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"p","version":"1"}}`
			case "tools/list":
				return `{"tools":[]}`
			case "logging/setLevel":
				levels <- s.Key + " " + string(params)
			}
			return `{}`
		}), nil
	}}, "fast", "slow")
	h.exchange(initAs("claude-code"))
	if got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("logging/setLevel: %s", got)
	}
	if got := <-levels; got != `fast {"level":"debug"}` {
		t.Errorf("the server up got %s", got)
	}
	close(release)
	select {
	case got := <-levels:
		if got != `slow {"level":"debug"}` {
			t.Errorf("the server up later got %s", got)
		}
	case <-time.After(waitLimit):
		t.Error("the server up later was not set to the client's level")
	}
}
