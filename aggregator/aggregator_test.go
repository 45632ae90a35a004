package aggregator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// fakeProcess is an in-process child: a goroutine running a script over
// io.Pipe.
type fakeProcess struct {
	stdinR  *io.PipeReader
	stdinW  *io.PipeWriter
	stdoutR *io.PipeReader
	stdoutW *io.PipeWriter
	done    chan struct{}
	once    sync.Once
}

// startScripted starts a child whose script gets each message written to
// it (line is the raw line) and writes what it likes to out: answers,
// notifications, requests.
func startScripted(script func(m *jsonrpc.Message, line []byte, out io.Writer)) *fakeProcess {
	p := &fakeProcess{done: make(chan struct{})}
	p.stdinR, p.stdinW = io.Pipe()
	p.stdoutR, p.stdoutW = io.Pipe()
	go func() {
		defer p.Stop()
		br := bufio.NewReader(p.stdinR)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			if m, err := jsonrpc.Parse(line); err == nil {
				script(m, line, p.stdoutW)
			}
		}
	}()
	return p
}

// startFake starts a child that answers each request with the raw result
// answer(method, params); "" leaves the request unanswered.
func startFake(answer func(method string, params []byte) string) *fakeProcess {
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		if !m.IsRequest() {
			return
		}
		if result := answer(m.Method, m.Params); result != "" {
			out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result)))
		}
	})
}

func (p *fakeProcess) Stdin() io.WriteCloser { return p.stdinW }
func (p *fakeProcess) Stdout() io.Reader     { return p.stdoutR }
func (p *fakeProcess) Done() <-chan struct{} { return p.done }
func (p *fakeProcess) Err() error            { return nil }
func (p *fakeProcess) Terminate() error      { return p.Stop() }
func (p *fakeProcess) Stop() error {
	p.once.Do(func() {
		p.stdinR.Close()
		p.stdoutW.Close()
		close(p.done)
	})
	return nil
}

// toolServer answers initialize and a tools/list of the given raw tools.
func toolServer(tools ...string) func(string, []byte) string {
	return func(method string, _ []byte) string {
		switch method {
		case "initialize":
			return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
		case "tools/list":
			return `{"tools":[` + strings.Join(tools, ",") + `]}`
		}
		return `{}`
	}
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`

// Names that would collide are settled by the names, never by the order
// of the servers: the entry whose key could be read as part of the other's
// name gets a hash, in either order.
func TestNameCollisionIsSettledByTheNamesNotTheOrder(t *testing.T) {
	t.Parallel()
	// With separator "__", key "a" + tool "_x" and key "a_" + tool "x" both
	// make "a___x".
	fakes := map[string]func(string, []byte) string{
		"a":  toolServer(`{"name":"_x","description":"from a","inputSchema":{"type":"object"}}`),
		"a_": toolServer(`{"name":"x","description":"from a_","inputSchema":{"type":"object"}}`, `{"name":"y","inputSchema":{"type":"object"}}`),
	}
	var lists []string
	for _, order := range [][]string{{"a", "a_"}, {"a_", "a"}} {
		h := serveFakes(t, "__", fakes, order...)
		h.exchange(initLine)
		got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		for _, name := range []string{`{"name":"a___x","description":"from a",`, `{"name":"a___x_69a19593","description":"from a_",`, `{"name":"a___y",`} {
			if !strings.Contains(got, name) {
				t.Errorf("order %v: tools/list %s has no %s", order, got, name)
			}
		}
		if log := h.logged(); !strings.Contains(log, `tool "x" of server "a_" is listed as "a___x_69a19593": "a___x" would be another server's name too`) {
			t.Errorf("no collision warning in log:\n%s", log)
		}
		lists = append(lists, got)
	}
	if len(lists[0]) != len(lists[1]) {
		t.Errorf("the names differ with the order:\n%s\n%s", lists[0], lists[1])
	}
}

func TestPrefixedNameKeepsTheChildsEscapes(t *testing.T) {
	t.Parallel()
	h := serveFakes(t, ":", map[string]func(string, []byte) string{
		"k": toolServer(`{ "name" : "caf\u00e9\"q" , "x":1, "inputSchema":{"type":"object"}}`),
	}, "k")
	h.exchange(initLine)
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{ "name" : "k:caf\u00e9\"q" , "x":1, "inputSchema":{"type":"object"}}]}}`
	if got != want {
		t.Fatalf("tools/list:\n got %s\nwant %s", got, want)
	}
}

func TestDrainFollowsCursorsAndStopsOnARepeatedOne(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"":   `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`,
		"p2": `{"tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"p3"}`,
		"p3": `{"tools":[{"name":"c","inputSchema":{"type":"object"}}]}`,
	}
	paged := func(loop bool) func(string, []byte) string {
		return func(method string, params []byte) string {
			if method != "tools/list" {
				return toolServer()(method, params)
			}
			cursor, _ := jsonrpc.StringMember(params, "cursor")
			if loop && cursor == "p3" {
				return `{"tools":[],"nextCursor":"p2"}`
			}
			return pages[cursor]
		}
	}
	h := serveFakes(t, ":", map[string]func(string, []byte) string{
		"paged": paged(false), "loops": paged(true),
	}, "paged", "loops")
	h.exchange(initLine)
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"paged:a","inputSchema":{"type":"object"}},{"name":"paged:b","inputSchema":{"type":"object"}},{"name":"paged:c","inputSchema":{"type":"object"}}]}}`
	if got != want {
		t.Fatalf("tools/list:\n got %s\nwant %s", got, want)
	}
	if log := h.logged(); !strings.Contains(log, `server "loops" repeated the cursor "p2" in tools/list`) {
		t.Fatalf("looping child not reported:\n%s", log)
	}
}

func TestLoggerWritesEachLineOnce(t *testing.T) {
	t.Parallel()
	var w recordingWriter
	l := NewLogger(&w, "p: ", false)
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Warnf("line %d", i)
			l.Debugf("hidden %d", i)
		}()
	}
	wg.Wait()
	if !l.Flush(waitLimit) {
		t.Fatalf("the log was not written within %v", waitLimit)
	}
	if len(w.writes) != 50 {
		t.Fatalf("%d writes, want 50", len(w.writes))
	}
	for _, line := range w.writes {
		if !strings.HasPrefix(line, "p: warning: line ") || !strings.HasSuffix(line, "\n") {
			t.Fatalf("bad line %q", line)
		}
	}
}

type recordingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestResourceReadRefreshesListsOnceForAnUnknownURI(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	lists := 0
	fake := func(method string, _ []byte) string {
		switch method {
		case "initialize":
			return `{"protocolVersion":"2025-11-25","capabilities":{"resources":{}},"serverInfo":{"name":"fake","version":"1"}}`
		case "tools/list":
			return `{"tools":[]}`
		case "resources/templates/list":
			return `{"resourceTemplates":[]}`
		case "resources/list":
			mu.Lock()
			defer mu.Unlock()
			lists++
			if lists == 1 {
				return `{"resources":[]}` // the resource appears after start-up
			}
			return `{"resources":[{"uri":"x://new","name":"new"}]}`
		case "resources/read":
			return `{"contents":[{"uri":"x://new","text":"fresh"}]}`
		}
		return `{}`
	}
	h := serveFakes(t, ":", map[string]func(string, []byte) string{"r": fake}, "r")
	h.exchange(initLine)
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"x://new"}}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"x://new","text":"fresh"}]}}`; got != want {
		t.Fatalf("resources/read of a resource listed after start-up:\n got %s\nwant %s", got, want)
	}
	got = h.exchange(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x://none"}}`)
	if !strings.Contains(got, `"code":-32002`) {
		t.Fatalf("unknown URI: %s", got)
	}
}

// TestCancelInABatchRacingItsCall: a batch is served on its own goroutine,
// so a notifications/cancelled in it can reach a fast-path call while the
// reader is still sending that call. The cancel either finds the call
// sent (no answer then) or not yet (the call is answered); under -race,
// neither may touch the call's child id unsynchronised.
func TestCancelInABatchRacingItsCall(t *testing.T) {
	t.Parallel()
	h := serveFakes(t, ":", echoFake, "alpha")
	send, read := h.send, h.read
	send(initLine)
	read()
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	read()
	for i := 10; i < 300; i++ {
		send(fmt.Sprintf(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}]`, i))
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"alpha:echo","arguments":{}}}`, i))
	}
	// Whatever was cancelled, a ping still gets through, and every answer
	// before it is a call's.
	send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
	for {
		line := read()
		if strings.Contains(line, `"id":"last"`) {
			break
		}
		if !strings.Contains(line, `"result":{"content"`) {
			t.Fatalf("unexpected line %s", line)
		}
	}
}

// endingReader is a pipe whose Read reports when it has ended.
type endingReader struct {
	*io.PipeReader
	once  sync.Once
	ended chan struct{}
}

func (r *endingReader) Read(p []byte) (int, error) {
	n, err := r.PipeReader.Read(p)
	if err != nil {
		r.once.Do(func() { close(r.ended) })
	}
	return n, err
}

// TestServeStopsItsReaderWhenCancelled: when its context ends, Serve
// closes its input and returns only once the reader of that input has
// stopped, while the client is still connected and silent.
func TestServeStopsItsReaderWhenCancelled(t *testing.T) {
	t.Parallel()
	a := New(Options{
		Name: "agg", Version: "test", Separator: ":",
		Servers: []config.Server{{Key: "alpha", Command: "fake"}},
		Start: func(config.Server) (Process, error) {
			return startFake(transcriptChild("alpha")), nil
		},
	})
	inR, inW := io.Pipe()
	in := &endingReader{PipeReader: inR, ended: make(chan struct{})}
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, in, outW) }()
	go io.Copy(io.Discard, outR)
	if _, err := io.WriteString(inW, initLine+"\n"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	select {
	case <-in.ended:
	default:
		t.Fatal("Serve returned while its reader was still reading its input")
	}
	if _, err := io.WriteString(inW, initLine+"\n"); err == nil {
		t.Fatal("the input is still open after Serve returned")
	}
	outW.Close()
}

// TestReadParams: a request's params are read once into what routing
// needs; a name or uri counts once per member, however its key is
// escaped, so that a repeated one is refused rather than read two ways.
func TestReadParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		params       string
		name, uri    string // "" when there is not exactly one (a string)
		object       bool
		cursor, meta string
	}{
		{``, "", "", true, "", ""},
		{`{"name":"a:x","arguments":{"name":"b"}}`, "a:x", "", true, "", ""},
		{`{"name":"a:x","\u006eame":"b:y"}`, "", "", true, "", ""},
		{`{"uri":"x://1","_meta":{"progressToken":7},"cursor":"c"}`, "", "x://1", true, `"c"`, `{"progressToken":7}`},
		{`{"uri":"x://1","uri":"x://2"}`, "", "", true, "", ""},
		{`{"name":7}`, "", "", true, "", ""},
		{`[1]`, "", "", false, "", ""},
	} {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		c := &call{params: params, p: readParams(params)}
		name, _ := c.name()
		uri, _ := c.uriString()
		if string(name) != tc.name || uri != tc.uri || c.p.object != tc.object || string(c.p.cursor) != tc.cursor || string(c.p.meta) != tc.meta {
			t.Errorf("%s: name %q uri %q object %v cursor %s meta %s", tc.params, name, uri, c.p.object, c.p.cursor, c.p.meta)
		}
		if tc.meta != "" && string(c.p.progressTo) != "7" {
			t.Errorf("%s: progress token %s", tc.params, c.p.progressTo)
		}
	}
}
