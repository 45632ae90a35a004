package aggregator

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// fleet starts the children of the reload tests: each entry's args are its
// tools, but "+prompts" and "+resources", which make it declare and list
// one prompt and one resource. Tool "hold" answers once release is closed;
// "die" crashes the child (it exits); any other answers with
// KEY/NAME. It counts the starts of each key and keeps what each child got
// in initialize.
type fleet struct {
	release chan struct{}
	holding chan string // the key of each child that got a call of "hold"

	mu     sync.Mutex
	starts map[string]int
	procs  map[string]*fakeProcess // the last start of each key
	inits  map[string]string       // the capabilities each key's last start got
}

func newFleet() *fleet {
	return &fleet{release: make(chan struct{}), holding: make(chan string, 16), starts: map[string]int{}, procs: map[string]*fakeProcess{}, inits: map[string]string{}}
}

func (f *fleet) start(s config.Server) (Process, error) {
	var tools []string
	caps := `{"tools":{"listChanged":true}`
	for _, a := range s.Args {
		switch a {
		case "+prompts":
			caps += `,"prompts":{}`
		case "+resources":
			caps += `,"resources":{}`
		default:
			tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, a))
		}
	}
	caps += "}"
	var p *fakeProcess
	p = startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
		switch m.Method {
		case "initialize":
			c, _ := jsonrpc.Member(m.Params, "capabilities")
			f.mu.Lock()
			f.inits[s.Key] = string(c)
			f.mu.Unlock()
			answer(`{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"` + s.Key + `","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[` + strings.Join(tools, ",") + `]}`)
		case "prompts/list":
			answer(`{"prompts":[{"name":"p"}]}`)
		case "resources/list":
			answer(`{"resources":[{"uri":"file:///` + s.Key + `","name":"r"}]}`)
		case "resources/templates/list":
			answer(`{"resourceTemplates":[]}`)
		case "tools/call":
			name, _ := jsonrpc.StringMember(m.Params, "name")
			switch name {
			case "hold":
				f.holding <- s.Key
				go func() {
					<-f.release
					answer(`{"content":[{"type":"text","text":"held"}]}`)
				}()
			case "die":
				p.Stop()
			default:
				answer(`{"content":[{"type":"text","text":"` + s.Key + "/" + name + `"}]}`)
			}
		}
	})
	f.mu.Lock()
	f.starts[s.Key]++
	f.procs[s.Key] = p
	f.mu.Unlock()
	return p, nil
}

func (f *fleet) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.starts[key]
}

func (f *fleet) proc(key string) *fakeProcess {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[key]
}

// held waits until child key got a call of "hold".
func (f *fleet) held(t *testing.T, key string) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case k := <-f.holding:
			if k == key {
				return
			}
		case <-deadline:
			t.Fatalf("%s never got its call of hold", key)
		}
	}
}

// entry is a config entry of the fleet.
func entry(key string, args ...string) config.Server {
	return config.Server{Key: key, Command: "fake", Args: append([]string{}, args...)}
}

// serveEntries is serveOptions with the servers given as entries.
func serveEntries(t testing.TB, opts Options, entries ...config.Server) *harness {
	t.Helper()
	opts.Servers = entries
	return serveOptions(t, opts)
}

// reloadHarness serves the entries, initializes as a client declaring
// sampling, and lists the tools once (every child up).
func reloadHarness(t *testing.T, f *fleet, entries ...config.Server) *harness {
	t.Helper()
	h := serveEntries(t, Options{Start: f.start}, entries...)
	h.exchange(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":"l0","method":"tools/list"}`)
	return h
}

// reloadTo reloads to entries and returns the list_changed notifications
// the client got for it: every line up to the answer to a ping sent once
// Reload has returned.
func reloadTo(t *testing.T, h *harness, entries ...config.Server) []string {
	t.Helper()
	return reloadToCompound(t, h, entries)
}

// reloadToCompound is reloadTo with compound tools.
func reloadToCompound(t *testing.T, h *harness, entries []config.Server, compound ...config.Compound) []string {
	t.Helper()
	h.a.Reload(entries, compound...)
	h.send(`{"jsonrpc":"2.0","id":"after-reload","method":"ping"}`)
	var changed []string
	for {
		line := h.read()
		if strings.Contains(line, `"id":"after-reload"`) {
			return changed
		}
		if m, err := jsonrpc.Parse([]byte(line)); err == nil && strings.HasSuffix(m.Method, "/list_changed") {
			changed = append(changed, m.Method)
		} else {
			t.Errorf("during the reload the client got %s", line)
		}
	}
}

func toolNames(t *testing.T, h *harness) string {
	t.Helper()
	line := h.exchange(`{"jsonrpc":"2.0","id":"tl","method":"tools/list"}`)
	var names []string
	for _, part := range strings.Split(line, `"name":"`)[1:] {
		names = append(names, part[:strings.IndexByte(part, '"')])
	}
	return strings.Join(names, " ")
}

// A new entry is started, initialized with what the client declared, and
// its tools join the list; the client hears one tools/list_changed.
func TestReloadAddsAServer(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := reloadHarness(t, f, entry("a", "x"))
	if got := reloadTo(t, h, entry("a", "x"), entry("b", "y")); strings.Join(got, " ") != "notifications/tools/list_changed" {
		t.Errorf("list_changed heard: %q, want one tools/list_changed", got)
	}
	if got := toolNames(t, h); got != "a:x b:y" {
		t.Errorf("tools after the reload: %s", got)
	}
	if got := h.exchange(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b:y","arguments":{}}}`); !strings.Contains(got, `"text":"b/y"`) {
		t.Errorf("b:y answered %s", got)
	}
	f.mu.Lock()
	caps := f.inits["b"]
	f.mu.Unlock()
	if caps != `{"sampling":{}}` {
		t.Errorf("the new server was initialized with capabilities %s, the client declared {\"sampling\":{}}", caps)
	}
	if f.count("a") != 1 {
		t.Errorf("a was started %d times", f.count("a"))
	}
}

// A removed entry is stopped: its call in flight is answered with an error
// naming it and the reload, its tools leave the list.
func TestReloadRemovesAServer(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := reloadHarness(t, f, entry("a", "x"), entry("b", "hold"))
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"b:hold","arguments":{}}}`)
	f.held(t, "b")
	h.a.Reload([]config.Server{entry("a", "x")})
	var answer string
	var changed []string
	h.send(`{"jsonrpc":"2.0","id":"after-reload","method":"ping"}`)
	for line := h.read(); !strings.Contains(line, `"id":"after-reload"`); line = h.read() {
		if strings.Contains(line, `"id":5`) {
			answer = line
		} else {
			changed = append(changed, line)
		}
	}
	if !strings.Contains(answer, `"error"`) || !strings.Contains(answer, `server \"b\"`) || !strings.Contains(answer, "removed from the config") || !strings.Contains(answer, "reload") {
		t.Errorf("the call in flight to the removed server was answered %q", answer)
	}
	if len(changed) != 1 || !strings.Contains(changed[0], "notifications/tools/list_changed") {
		t.Errorf("the client got %q, want one tools/list_changed", changed)
	}
	if got := toolNames(t, h); got != "a:x" {
		t.Errorf("tools after the reload: %s", got)
	}
	select {
	case <-f.proc("b").Done():
	default:
		t.Error("the removed server's process was not stopped")
	}
}

// A changed entry is stopped and started anew; an unchanged one keeps its
// process and its call in flight.
func TestReloadRestartsAChangedServerOnly(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := reloadHarness(t, f, entry("a", "hold"), entry("b", "y1"))
	first := f.proc("b")
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a:hold","arguments":{}}}`)
	f.held(t, "a")
	if got := reloadTo(t, h, entry("a", "hold"), entry("b", "y2")); len(got) != 1 {
		t.Errorf("list_changed heard: %q, want one", got)
	}
	select {
	case <-first.Done():
	default:
		t.Error("the changed server's first process was not stopped")
	}
	if f.count("b") != 2 || f.count("a") != 1 {
		t.Errorf("starts: a %d, b %d; want 1 and 2", f.count("a"), f.count("b"))
	}
	if got := toolNames(t, h); got != "a:hold b:y2" {
		t.Errorf("tools after the reload: %s", got)
	}
	close(f.release)
	if got := h.read(); !strings.Contains(got, `"id":5`) || !strings.Contains(got, `"text":"held"`) {
		t.Errorf("the call in flight to the unchanged server was answered %s", got)
	}
}

// A server that crashed stays down through a reload that leaves its entry
// as it was, and comes back when its entry changes.
func TestReloadKeepsACrashedServerDownUntilItsEntryChanges(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := reloadHarness(t, f, entry("a", "x", "die"), entry("b", "y"))
	h.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a:die","arguments":{}}}`)
	for seen := map[string]bool{}; !seen["answer"] || !seen["changed"]; { // in either order
		line := h.read()
		seen["answer"] = seen["answer"] || strings.Contains(line, `"id":5`)
		seen["changed"] = seen["changed"] || strings.Contains(line, "notifications/tools/list_changed")
	}
	if got := reloadTo(t, h, entry("a", "x", "die"), entry("b", "y")); len(got) != 0 {
		t.Errorf("an unchanged config announced %q", got)
	}
	if f.count("a") != 1 || toolNames(t, h) != "b:y" {
		t.Errorf("after an unchanged reload: a started %d times, tools %s", f.count("a"), toolNames(t, h))
	}
	if got := reloadTo(t, h, entry("a", "x", "die", "again"), entry("b", "y")); len(got) != 1 {
		t.Errorf("list_changed heard: %q, want one", got)
	}
	if f.count("a") != 2 || toolNames(t, h) != "a:x a:die a:again b:y" {
		t.Errorf("after its entry changed: a started %d times, tools %s", f.count("a"), toolNames(t, h))
	}
}

// Servers added with tools, prompts and resources at once: one
// list_changed of each list, not one per server.
func TestReloadAnnouncesEachListOnce(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := reloadHarness(t, f, entry("a", "x"))
	got := reloadTo(t, h, entry("a", "x"), entry("b", "y", "+prompts", "+resources"), entry("c", "z", "+prompts", "+resources"))
	want := "notifications/tools/list_changed notifications/prompts/list_changed notifications/resources/list_changed"
	if strings.Join(got, " ") != want {
		t.Errorf("list_changed heard: %q, want %s", got, want)
	}
	got = reloadTo(t, h, entry("a", "x"))
	if strings.Join(got, " ") != want {
		t.Errorf("removing them, list_changed heard: %q, want %s", got, want)
	}
}

// A tool's name does not change because another server came or went,
// strict and shortened names included.
func TestReloadKeepsNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("add_pull_request_review_comment_", 3)
	f := newFleet()
	h := serveEntries(t, Options{Start: f.start, StrictNames: true}, entry("github.com", long, "x"))
	h.exchange(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	before := toolNames(t, h)
	reloadTo(t, h, entry("github.com", long, "x"), entry("github_com", long, "x"), entry("zz", "x"))
	after := toolNames(t, h)
	if !strings.HasPrefix(after, before+" ") {
		t.Errorf("names before adding servers %q; after %q", before, after)
	}
	reloadTo(t, h, entry("github.com", long, "x"))
	if again := toolNames(t, h); again != before {
		t.Errorf("names before %q; after the others left %q", before, again)
	}
}

// slowStop is a process whose Stop waits until the next start of its key
// has begun, or 200 ms at most, before it stops: a changed server's new
// process must not start while the old one is still stopping.
type slowStop struct {
	*fakeProcess
	next <-chan struct{} // closed when the key starts again
	mu   *sync.Mutex
	log  *[]string
	once *sync.Once // the first Stop logs
}

func (p slowStop) Stop() error {
	p.once.Do(func() {
		select {
		case <-p.next:
		case <-time.After(200 * time.Millisecond): // a bound, not a sync: the order is what is checked
		}
		p.mu.Lock()
		*p.log = append(*p.log, "stopped")
		p.mu.Unlock()
	})
	return p.fakeProcess.Stop()
}

func (p slowStop) Terminate() error { return p.Stop() }

// A changed server's new process starts only once the old one has
// stopped: whatever it holds (a lock file, a port) is free by then.
func TestReloadStartsAChangedServerAfterTheOldStopped(t *testing.T) {
	t.Parallel()
	f := newFleet()
	var mu sync.Mutex
	var log []string
	restarted := make(chan struct{})
	starts := 0
	h := serveEntries(t, Options{Start: func(s config.Server) (Process, error) {
		p, _ := f.start(s)
		mu.Lock()
		defer mu.Unlock()
		log = append(log, "started")
		if starts++; starts == 2 {
			close(restarted)
		}
		return slowStop{p.(*fakeProcess), restarted, &mu, &log, new(sync.Once)}, nil
	}}, entry("b", "y1"))
	h.exchange(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":"l0","method":"tools/list"}`)
	reloadTo(t, h, entry("b", "y2"))
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(log, " "); got != "started stopped started" {
		t.Errorf("the changed server's processes: %s; want its old one stopped before the new one started", got)
	}
}

// A server added by a reload before the client's initialize is started
// with the others and, when it is up after the client was answered a list
// without it, announced as any late server is.
func TestReloadBeforeInitializeAnnouncesTheAddedServer(t *testing.T) {
	t.Parallel()
	f := newFleet()
	release := make(chan struct{})
	// The first lists wait for fast, and no longer: the tests' clock.
	h := serveEntries(t, Options{listDeadline: once("fast", ""), Start: func(s config.Server) (Process, error) {
		if s.Key == "slow" {
			<-release // up only once the client was answered without it
		}
		return f.start(s)
	}}, entry("fast", "x"))
	// Cleanups run last first: slow's start returns before the harness
	// waits for the end, even when the test failed.
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released)
	h.exchange(`{"jsonrpc":"2.0","id":"p","method":"ping"}`) // Serve has begun: the reload spawns what it adds
	h.a.Reload([]config.Server{entry("fast", "x"), entry("slow", "y")})
	h.exchange(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := toolNames(t, h); got != "fast:x" {
		t.Fatalf("first tools/list: %s", got)
	}
	released()
	readUntil(t, h, "notifications/tools/list_changed")
	if got := toolNames(t, h); got != "fast:x slow:y" {
		t.Errorf("tools once the added server is up: %s", got)
	}
}

// A server that comes back does not take the name of one that got it
// while it was away: the name served more lately stays.
func TestReloadComebackKeepsTheNameOfTheOneServedSince(t *testing.T) {
	t.Parallel()
	f := newFleet()
	h := serveEntries(t, Options{Start: f.start}, entry("x.y", "t"))
	h.exchange(`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2"}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	toolNames(t, h)
	reloadTo(t, h)                    // x.y leaves
	reloadTo(t, h, entry("x_y", "t")) // x_y:t, which Claude Code shows as x.y:t was
	reloadTo(t, h, entry("x.y", "t"), entry("x_y", "t"))
	names := strings.Fields(toolNames(t, h))
	if len(names) != 2 || names[1] != "x_y:t" || !strings.HasPrefix(names[0], "x.y:t_") {
		t.Errorf("tools after x.y came back: %q; want x_y:t kept, and x.y's told apart", names)
	}
}

// A stopped server leaves nothing of itself in the client's
// subscriptions, and the others' stay.
func TestForgetChildLeavesTheOthersSubscriptions(t *testing.T) {
	t.Parallel()
	a := New(Options{Servers: []config.Server{entry("gone"), entry("kept")}})
	gone, kept := a.children()[0], a.children()[1]
	l := &listen{atChildren: []childListen{{gone, []byte("1")}, {kept, []byte("2")}},
		subscribed: []childURI{{gone, "u"}, {kept, "v"}}}
	s := &listenSet{open: []*listen{l},
		legacy:   map[*child]map[string]int{gone: {"u": 1}, kept: {"v": 1}},
		byChild:  map[*child]map[string]*listen{gone: {"1": l}, kept: {"2": l}},
		standIns: map[childURI][]byte{{gone, "u"}: []byte("3"), {kept, "v"}: []byte("4")}}
	s.forgetChild(gone)
	if _, ok := s.legacy[gone]; ok || len(s.legacy) != 1 {
		t.Errorf("legacy: %v", s.legacy)
	}
	if _, ok := s.byChild[gone]; ok || len(s.byChild) != 1 {
		t.Errorf("byChild: %v", s.byChild)
	}
	if len(s.standIns) != 1 || len(l.atChildren) != 1 || l.atChildren[0].c != kept || len(l.subscribed) != 1 || l.subscribed[0].c != kept {
		t.Errorf("standIns %v, the stream's listens %v and subscriptions %v: want only kept's", s.standIns, l.atChildren, l.subscribed)
	}
}
