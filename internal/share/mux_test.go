package share

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The mux's rules, with a scripted fake server and fake sessions over
// in-process pipes.

// wire is one message as a peer read it, with its raw line.
type wire struct {
	line   []byte
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// peer is the test's end of a pipe: every line it reads, in order.
type testPeer struct {
	t    *testing.T
	name string
	c    net.Conn
	in   chan *wire
	done chan struct{}
}

func newTestPeer(t *testing.T, name string, c net.Conn) *testPeer {
	p := &testPeer{t: t, name: name, c: c, in: make(chan *wire, 100), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				w := &wire{line: bytes.TrimSuffix(line, []byte("\n"))}
				if err := json.Unmarshal(line, w); err != nil {
					t.Errorf("%s read a line that is not JSON: %q", name, line)
				}
				p.in <- w
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

func (p *testPeer) send(line string) {
	p.t.Helper()
	if _, err := p.c.Write([]byte(line + "\n")); err != nil {
		p.t.Fatalf("%s: write: %v", p.name, err)
	}
}

// next is the next message this peer read.
func (p *testPeer) next() *wire {
	p.t.Helper()
	select {
	case w := <-p.in:
		return w
	case <-time.After(5 * time.Second):
		p.t.Fatalf("%s: nothing came", p.name)
		return nil
	}
}

// quiet checks that nothing more came, after a round trip through the
// holder: a ping each way would do, but the mux answers pings itself in
// order, so it is the barrier.
func (p *testPeer) quiet() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"barrier","method":"ping"}`)
	if w := p.next(); string(w.ID) != `"barrier"` {
		p.t.Fatalf("%s: got %s before the barrier's answer", p.name, w.line)
	}
}

// muxWorld is a Shared over a fake server and its sessions.
type muxWorld struct {
	t      *testing.T
	sh     *Shared
	server *testPeer
	wg     sync.WaitGroup
	logs   chan string
}

func newMuxWorld(t *testing.T) *muxWorld {
	w := &muxWorld{t: t, logs: make(chan string, 100)}
	holderEnd, serverEnd := net.Pipe()
	w.sh = newShared("server \"x\"", func(f string, a ...any) {
		select {
		case w.logs <- fmt.Sprintf(f, a...):
		default:
		}
	})
	w.sh.conn = jsonrpc.NewConn(holderEnd, holderEnd, w.sh.serverOptions())
	w.server = newTestPeer(t, "server", serverEnd)
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.sh.conn.Run() }()
	t.Cleanup(func() {
		serverEnd.Close()
		holderEnd.Close()
		w.wg.Wait()
		<-w.server.done
	})
	return w
}

// session attaches a session and returns its test end.
func (w *muxWorld) session(name string) (*testPeer, *Session) {
	holderEnd, sessEnd := net.Pipe()
	s := &Session{name: name}
	s.close = func(string, bool) { holderEnd.Close() }
	s.conn = jsonrpc.NewConn(holderEnd, holderEnd, sessionOptions(func(m *jsonrpc.Message) {
		if m.Method == "initialize" && m.IsRequest() {
			w.sh.initialize(s, m, func(bool) {})
			return
		}
		w.sh.fromSession(s, m)
	}))
	if !w.sh.attach(s) {
		w.t.Fatal("attach refused")
	}
	p := newTestPeer(w.t, name, sessEnd)
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		s.conn.Run()
		w.sh.detach(s)
	}()
	w.t.Cleanup(func() { sessEnd.Close(); holderEnd.Close(); <-p.done })
	return p, s
}

func member(t *testing.T, raw []byte, path ...string) []byte {
	t.Helper()
	for _, k := range path {
		v, ok := jsonrpc.Member(raw, k)
		if !ok {
			t.Fatalf("no %s in %s", strings.Join(path, "."), raw)
		}
		raw = v
	}
	return raw
}

const initReq = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
const initResult = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"logging":{},"resources":{"subscribe":true}},"serverInfo":{"name":"s","version":"1"}}`

// initialized runs the handshake of sessions a and b: the server sees
// one initialize and one notifications/initialized.
func (w *muxWorld) initialized(a, b *testPeer) {
	w.t.Helper()
	a.send(initReq)
	got := w.server.next()
	if got.Method != "initialize" {
		w.t.Fatalf("server got %s, want initialize", got.line)
	}
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":` + initResult + `}`)
	if ans := a.next(); string(ans.ID) != "1" || string(ans.Result) != initResult {
		w.t.Fatalf("a's initialize answer: %s", ans.line)
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := w.server.next(); got.Method != "notifications/initialized" {
		w.t.Fatalf("server got %s, want notifications/initialized", got.line)
	}
	b.send(strings.Replace(initReq, `"id":1`, `"id":"b1"`, 1))
	if ans := b.next(); string(ans.ID) != `"b1"` || string(ans.Result) != initResult {
		w.t.Fatalf("b's initialize answer: %s (want the recorded one under its own id)", ans.line)
	}
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func TestMuxInitializeOnceAndIdsPerSession(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	// Both use id 7: the server sees two ids, each answer goes home.
	a.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"who":"a"}}}`)
	b.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"who":"b"}}}`)
	r1, r2 := w.server.next(), w.server.next()
	if r1.Method != "tools/call" || r2.Method != "tools/call" || jsonrpc.Key(r1.ID) == jsonrpc.Key(r2.ID) {
		t.Fatalf("server got %s and %s: want two calls under two ids (the swallowed initialized never came)", r1.line, r2.line)
	}
	for _, r := range []*wire{r2, r1} { // answered out of order, with bytes json would change
		who := strings.Trim(string(member(t, r.Params, "arguments", "who")), `"`)
		w.server.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"content":[{"type":"text","text":"<` + who + `> &  é"}]}}`)
	}
	for _, p := range []*testPeer{a, b} {
		ans := p.next()
		want := `{"content":[{"type":"text","text":"<` + p.name + `> &  é"}]}`
		if string(ans.ID) != "7" || string(ans.Result) != want {
			t.Errorf("%s got %s, want its own answer byte for byte: %s", p.name, ans.line, want)
		}
	}
	a.quiet()
	b.quiet()
}

func TestMuxServerRequestGoesToTheOneSessionInFlightElseAnError(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)

	// One call in flight (b's): the server's sampling request is b's.
	b.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sample"}}`)
	call := w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[]}}`)
	ask := b.next()
	if ask.Method != "sampling/createMessage" {
		t.Fatalf("b got %s, want the sampling request", ask.line)
	}
	b.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"from b"}}}`)
	if got := w.server.next(); string(got.ID) != "0" || !strings.Contains(string(got.Result), "from b") {
		t.Fatalf("server got %s, want b's answer under its id 0", got.line)
	}
	a.quiet() // a was asked nothing

	// Two sessions in flight: the server gets an error, no session is asked.
	a.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`)
	w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`)
	got := w.server.next()
	if string(got.ID) != "1" || got.Error == nil || !strings.Contains(string(got.Error), "2 sessions have calls in flight") {
		t.Fatalf("server got %s, want an error saying why", got.line)
	}
	a.quiet()
	b.quiet()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(call.ID) + `,"result":{}}`)
	if ans := b.next(); string(ans.ID) != "3" {
		t.Fatalf("b got %s", ans.line)
	}

	// ping of the server is answered by the holder.
	w.server.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got := w.server.next(); string(got.ID) != `"p"` || string(got.Result) != `{}` {
		t.Fatalf("server's ping answered %s", got.line)
	}
}

func TestMuxProgressTokensPerSession(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	for _, p := range []*testPeer{a, b} {
		p.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"tok"}}}`)
	}
	r1, r2 := w.server.next(), w.server.next()
	t1, t2 := member(t, r1.Params, "_meta", "progressToken"), member(t, r2.Params, "_meta", "progressToken")
	if jsonrpc.Key(t1) == jsonrpc.Key(t2) {
		t.Fatalf("the server got one token for both sessions: %s", t1)
	}
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(t2) + `,"progress":1}}`)
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + string(t1) + `,"progress":2}}`)
	// r1 was the first sent: a's unless b's overtook it; find whose each is.
	for _, p := range []*testPeer{a, b} {
		got := p.next()
		if got.Method != "notifications/progress" || string(member(t, got.Params, "progressToken")) != `"tok"` {
			t.Fatalf("%s got %s, want its progress under its own token", p.name, got.line)
		}
		p.quiet() // and only one
	}
	// a cancels its call: the server gets the cancel under its own id;
	// b's cancel of an id it has not in flight goes nowhere.
	w.server.send(`{"jsonrpc":"2.0","id":` + string(r2.ID) + `,"result":{}}`)
	w.server.send(`{"jsonrpc":"2.0","id":` + string(r1.ID) + `,"result":{}}`)
	a.next()
	b.next()
	a.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}`)
	call := w.server.next()
	b.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	b.quiet()
	a.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`)
	got := w.server.next()
	if got.Method != "notifications/cancelled" || string(member(t, got.Params, "requestId")) != string(call.ID) {
		t.Fatalf("server got %s, want the cancel of id %s (a's, not b's)", got.line, call.ID)
	}
}

func TestMuxSubscriptionsCountedAndUpdatesToSubscribers(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	c, _ := w.session("c")
	w.initialized(a, b)
	c.send(strings.Replace(initReq, `"id":1`, `"id":1`, 1))
	c.next()
	const sub = `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///x"}}`
	a.send(sub)
	got := w.server.next()
	if got.Method != "resources/subscribe" {
		t.Fatalf("server got %s", got.line)
	}
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{}}`)
	a.next()
	b.send(sub)
	if ans := b.next(); string(ans.ID) != "2" || string(ans.Result) != "{}" {
		t.Fatalf("b's subscribe answered %s, want {} at once", ans.line)
	}
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///x"}}`)
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	for _, p := range []*testPeer{a, b} {
		if got := p.next(); got.Method != "notifications/resources/updated" {
			t.Fatalf("%s got %s, want the update", p.name, got.line)
		}
	}
	for _, p := range []*testPeer{a, b, c} {
		if got := p.next(); got.Method != "notifications/tools/list_changed" {
			t.Fatalf("%s got %s, want list_changed (to every session)", p.name, got.line)
		}
	}
	const unsub = `{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"file:///x"}}`
	a.send(unsub)
	if ans := a.next(); string(ans.Result) != "{}" {
		t.Fatalf("a's unsubscribe: %s", ans.line)
	}
	b.send(unsub)
	if got := w.server.next(); got.Method != "resources/unsubscribe" {
		t.Fatalf("the last unsubscribe: server got %s", got.line)
	}
}

func TestMuxTasksAreTheSessionsOwn(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"long","task":{"ttl":1000}}}`)
	got := w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{"task":{"taskId":"T1","status":"working"}}}`)
	a.next()
	b.send(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"T1"}}`)
	if ans := b.next(); ans.Error == nil || !strings.Contains(string(ans.Error), "-32602") {
		t.Fatalf("b's tasks/get of a's task: %s, want -32602", ans.line)
	}
	b.send(`{"jsonrpc":"2.0","id":4,"method":"tasks/list"}`)
	got = w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{"tasks":[{"taskId":"T1","status":"working"},{"taskId":"T0"}],"nextCursor":"n"}}`)
	if ans := b.next(); string(ans.Result) != `{"tasks":[],"nextCursor":"n"}` {
		t.Fatalf("b's tasks/list: %s, want none of a's", ans.line)
	}
	a.send(`{"jsonrpc":"2.0","id":5,"method":"tasks/list"}`)
	got = w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{"tasks":[{"taskId":"T1","status":"working"},{"taskId":"T0"}]}}`)
	if ans := a.next(); string(ans.Result) != `{"tasks":[{"taskId":"T1","status":"working"}]}` {
		t.Fatalf("a's tasks/list: %s, want its own", ans.line)
	}
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"T1","status":"completed"}}`)
	if got := a.next(); got.Method != "notifications/tasks/status" {
		t.Fatalf("a got %s", got.line)
	}
	b.quiet()
}

func TestMuxLogLevels(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	b.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`)
	got := w.server.next()
	if string(member(t, got.Params, "level")) != `"error"` {
		t.Fatalf("server got %s", got.line)
	}
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{}}`)
	b.next()
	a.send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	got = w.server.next()
	if string(member(t, got.Params, "level")) != `"debug"` {
		t.Fatalf("server got %s, want the most verbose level", got.line)
	}
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{}}`)
	a.next()
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
	if got := a.next(); got.Method != "notifications/message" {
		t.Fatalf("a got %s", got.line)
	}
	b.quiet() // below b's level
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"y"}}`)
	a.next()
	if got := b.next(); got.Method != "notifications/message" {
		t.Fatalf("b got %s", got.line)
	}
	// a leaves: the server gets b's level back.
	a.c.Close()
	if got := w.server.next(); got.Method != "logging/setLevel" || string(member(t, got.Params, "level")) != `"error"` {
		t.Fatalf("server got %s, want the level of the session left", got.line)
	}
}

func TestMuxSessionEndCancelsItsCalls(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)
	call := w.server.next()
	a.c.Close()
	got := w.server.next()
	if got.Method != "notifications/cancelled" || string(member(t, got.Params, "requestId")) != string(call.ID) {
		t.Fatalf("server got %s, want the ended session's call cancelled", got.line)
	}
	b.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`)
	got = w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{"ok":true}}`)
	if ans := b.next(); string(ans.Result) != `{"ok":true}` {
		t.Fatalf("b after a ended: %s", ans.line)
	}
}

// A session whose roots change is detached at once: its answer to a
// roots/list in flight never reaches the shared server, nor do its
// requests.
func TestMuxRootsChangeDetachesAtOnce(t *testing.T) {
	w := newMuxWorld(t)
	a, sa := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	closed := make(chan string, 1)
	sa.close = func(reason string, _ bool) { closed <- reason }
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
	call := w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":"r","method":"roots/list"}`)
	ask := a.next()
	a.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	if got := w.server.next(); got.Method != "notifications/cancelled" || string(member(t, got.Params, "requestId")) != string(call.ID) {
		t.Fatalf("server got %s, want a's call cancelled", got.line)
	}
	if reason := <-closed; !strings.Contains(reason, "roots changed") {
		t.Errorf("closed because %q", reason)
	}
	a.send(`{"jsonrpc":"2.0","id":` + string(ask.ID) + `,"result":{"roots":[{"uri":"file:///new"}]}}`)
	if got := w.server.next(); string(got.ID) != `"r"` || got.Error == nil {
		t.Fatalf("server got %s, want an error for its roots/list, not a's new roots", got.line)
	}
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}`)
	if ans := a.next(); string(ans.ID) != "3" || ans.Error == nil {
		t.Fatalf("a's request after its roots changed: %s, want an error", ans.line)
	}
	b.quiet()
}

// A process keyed by roots answers a roots/list that names no session
// with the roots every session of it has.
func TestMuxRootsListOfARootsKeyedProcess(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	w.server.send(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`)
	if got := w.server.next(); got.Error == nil {
		t.Fatalf("without roots recorded, two sessions, none in flight: got %s, want an error", got.line)
	}
	w.sh.setRoots([]byte(`{"roots":[{"uri":"file:///p"}]}`))
	w.server.send(`{"jsonrpc":"2.0","id":"r2","method":"roots/list"}`)
	if got := w.server.next(); string(got.ID) != `"r2"` || string(got.Result) != `{"roots":[{"uri":"file:///p"}]}` {
		t.Fatalf("got %s, want the recorded roots", got.line)
	}
	a.quiet()
	b.quiet()
}

// A server's request names its session by its related task; a URL
// elicitation's completion goes to the session asked; a server's cancel of
// its request reaches the session asked, under that session's id.
func TestMuxRelatedTaskElicitationAndServerCancel(t *testing.T) {
	w := newMuxWorld(t)
	a, _ := w.session("a")
	b, _ := w.session("b")
	w.initialized(a, b)
	// b's task T9.
	b.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"long","task":{}}}`)
	got := w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":` + string(got.ID) + `,"result":{"task":{"taskId":"T9","status":"working"}}}`)
	b.next()
	// Both sessions have calls in flight, but the request names b's task.
	a.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`)
	b.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`)
	w.server.next()
	w.server.next()
	w.server.send(`{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"mode":"url","elicitationId":"E1","url":"https://x","message":"m","_meta":{"io.modelcontextprotocol/related-task":{"taskId":"T9"}}}}`)
	ask := b.next()
	if ask.Method != "elicitation/create" {
		t.Fatalf("b got %s, want the elicitation of its task", ask.line)
	}
	a.quiet()
	// The server takes it back: b is told under its own id.
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e1","reason":"timeout"}}`)
	if got := b.next(); got.Method != "notifications/cancelled" || string(member(t, got.Params, "requestId")) != string(ask.ID) {
		t.Fatalf("b got %s, want the cancel of %s", got.line, ask.ID)
	}
	w.server.send(`{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"E1"}}`)
	if got := b.next(); got.Method != "notifications/elicitation/complete" {
		t.Fatalf("b got %s", got.line)
	}
	a.quiet()
	b.quiet()
}
