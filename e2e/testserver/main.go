// Command testserver is a scriptable MCP server used as the peer under which
// mcp-simple-aggregator is tested end to end and benchmarked.
//
// It speaks newline-delimited JSON-RPC 2.0 on stdin/stdout, uses only the
// standard library and none of the project's own packages, logs only to
// stderr and exits 0 when stdin reaches EOF. Every request is served in its
// own goroutine, so a slow tool never blocks a fast one. Request ids are kept
// as raw bytes and answered exactly as received.
//
// See the flag definitions below and tools.go for what it can be asked to do.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"
)

// config holds the command-line flags.
type config struct {
	name         string
	tools        int
	toolNames    []string // tools that answer with their own name
	page         int
	instructions string
	version      string
	noise        bool
	stderrLines  int
	initDelay    time.Duration
	hangInit     bool
	exitInit     int // < 0: off
	askOnInit    string
	failList     bool
	tasks        bool
	caps         map[string]bool
	startedFile  string // append one line here at start

	hostile        bool          // list and serve the tools of hostile.go
	malformed      bool          // list and serve what clients cannot read (malformed.go)
	exitOnDiscover string        // see hostile.go
	slowRead       time.Duration // read stdin at most 64 KiB at a time, this long apart (see hostile.go)
}

var knownCaps = []string{"resources", "prompts", "logging", "completions", "subscribe"}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{caps: map[string]bool{}}
	fs := flag.NewFlagSet("testserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.name, "name", "testserver", "serverInfo.name (also used in resource URIs)")
	fs.IntVar(&cfg.tools, "tools", 0, "number of generated echo-like tools t0..t{N-1}")
	fs.IntVar(&cfg.page, "page", 0, "page size of tools/list, prompts/list, resources/list, resources/templates/list (0: one page)")
	fs.StringVar(&cfg.instructions, "instructions", "", "instructions to return from initialize")
	fs.StringVar(&cfg.version, "version", "", "protocolVersion to answer (default: echo the client's)")
	fs.BoolVar(&cfg.noise, "noise", false, "print a non-JSON line on stdout at start and before the first tools/list answer")
	fs.IntVar(&cfg.stderrLines, "stderr", 0, "print N lines 'stderr line i' to stderr at start")
	fs.DurationVar(&cfg.initDelay, "init-delay", 0, "wait this long before answering initialize")
	fs.BoolVar(&cfg.hangInit, "hang-init", false, "never answer initialize")
	fs.StringVar(&cfg.askOnInit, "ask-on-init", "", "send this request (e.g. roots/list) to the client as soon as notifications/initialized arrives; log 'asked METHOD on init: ANSWER'")
	fs.IntVar(&cfg.exitInit, "exit-init", -1, "on initialize, print 'fatal: bad init' to stderr and exit with this code (-1: off)")
	fs.BoolVar(&cfg.failList, "fail-list", false, "answer tools/list with error -32603 'list failed'")
	fs.BoolVar(&cfg.tasks, "tasks", false, "run tools/call as a task when params.task is set, and serve tasks/get, tasks/result, tasks/cancel, tasks/list (see tasks.go)")
	fs.Func("tool-names", `JSON array of names of tools that answer with the name they were called by, e.g. ["a.b","get weather"]`, func(v string) error {
		return json.Unmarshal([]byte(v), &cfg.toolNames)
	})
	fs.StringVar(&cfg.startedFile, "started-file", "", "append one line 'NAME PID' to this file at start, so a test counts the processes started")
	fs.BoolVar(&cfg.hostile, "hostile", false, "also list and serve the misbehaving tools pid, closeout, flood, samplemany, slowline (see hostile.go)")
	fs.BoolVar(&cfg.malformed, "malformed", false, "also list entries the MCP schema refuses and serve the tool shapeless (see malformed.go)")
	fs.StringVar(&cfg.exitOnDiscover, "exit-on-discover", "", "on server/discover, exit if FILE does not exist (creating it), else answer -32601 (see hostile.go)")
	fs.DurationVar(&cfg.slowRead, "slow-read", 0, "read stdin at most 64 KiB at a time, pausing this long before each read: a server that reads a large request slowly (see hostile.go)")
	caps := fs.String("caps", "", "comma list of extra capabilities: "+strings.Join(knownCaps, ","))
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	for _, c := range strings.Split(*caps, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		ok := false
		for _, k := range knownCaps {
			ok = ok || c == k
		}
		if !ok {
			return nil, fmt.Errorf("unknown capability %q (known: %s)", c, strings.Join(knownCaps, ","))
		}
		cfg.caps[c] = true
	}
	if cfg.caps["subscribe"] {
		cfg.caps["resources"] = true
	}
	if cfg.tools < 0 || cfg.page < 0 {
		return nil, errors.New("-tools and -page must not be negative")
	}
	return cfg, nil
}

func main() {
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	crashing.Lock() // a crash under way (toolCrash) exits with its own status
	os.Exit(code)
}

// crashing is held by a tool that makes the process exit, so that an end of
// stdin read meanwhile cannot make it exit 0 first.
var crashing sync.Mutex

// run serves MCP on stdin/stdout until stdin reaches EOF and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "testserver:", err)
		return 2
	}
	if err := noteStart(cfg); err != nil {
		fmt.Fprintln(stderr, "testserver:", err)
		return 1
	}
	return newServer(cfg, stdout, stderr).serve(stdin)
}

// noteStart appends one line to -started-file, before anything is read or
// written: one write with O_APPEND, so that processes starting together
// each leave a whole line.
func noteStart(cfg *config) error {
	if cfg.startedFile == "" {
		return nil
	}
	f, err := os.OpenFile(cfg.startedFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s %d\n", cfg.name, os.Getpid())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// server is the state of one MCP session.
type server struct {
	cfg  *config
	out  *lineWriter
	logs *log.Logger

	listNoise sync.Once

	readGate sync.Mutex // held by the "deaf" tool: stdin is not read meanwhile

	mu             sync.Mutex
	initialized    bool            // notifications/initialized arrived
	initParams     json.RawMessage // the client's initialize params, raw
	inflight       map[string]*call
	pending        map[string]chan *message // our requests to the client, by id
	nextID         int64                    // next id of our requests to the client
	added          []string                 // tools added by the "change" tool
	addedPrompts   []string                 // prompts added by it
	addedResources []string                 // resources added by it
	subs           map[string]bool          // subscribed resource URIs

	tasks taskTable // with -tasks
}

// call is one client request being served; cancel is fired by notifications/cancelled.
type call struct {
	cancel context.CancelFunc
}

func newServer(cfg *config, stdout, stderr io.Writer) *server {
	return &server{
		cfg:      cfg,
		out:      &lineWriter{w: stdout},
		logs:     log.New(stderr, "", 0),
		inflight: map[string]*call{},
		pending:  map[string]chan *message{},
		subs:     map[string]bool{},
	}
}

func (s *server) logf(format string, args ...any) {
	s.logs.Printf(format, args...)
}

func (s *server) serve(in io.Reader) int {
	if s.cfg.noise {
		s.out.writeLine([]byte(noiseLine))
	}
	for i := 0; i < s.cfg.stderrLines; i++ {
		s.logf("stderr line %d", i)
	}
	if s.cfg.slowRead > 0 {
		in = &slowReader{r: in, pause: s.cfg.slowRead}
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		s.readGate.Lock() // wait while "deaf"
		s.readGate.Unlock()
		line, err := r.ReadBytes('\n') // no line-length limit
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.handleLine(line)
		}
		if err != nil {
			if err != io.EOF {
				s.logf("read stdin: %v", err)
				return 1
			}
			return 0
		}
	}
}

const noiseLine = "this is not json"

func (s *server) handleLine(line []byte) {
	if line[0] == '[' {
		s.logf("batch received: not supported")
		s.out.writeLine(errorLine(nil, &rpcError{code: -32600, message: "batches are not supported"}))
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		s.logf("parse error: %v", err)
		s.out.writeLine(errorLine(nil, &rpcError{code: -32700, message: "Parse error"}))
		return
	}
	switch {
	case m.Method != "" && m.hasID():
		s.startRequest(&m)
	case m.Method != "":
		s.handleNotification(&m)
	case m.hasID():
		s.handleResponse(&m)
	default:
		s.logf("invalid message: %s", truncate(line, 200))
	}
}

// startRequest registers the request (so that a notifications/cancelled read
// right after it finds it) and serves it in its own goroutine.
func (s *server) startRequest(m *message) {
	if m.Method == "initialize" && s.cfg.exitInit >= 0 {
		// On the reader goroutine, so that an end of stdin right behind
		// initialize cannot make the server exit 0 first.
		s.logf("fatal: bad init")
		os.Exit(s.cfg.exitInit)
	}
	if m.Method == "server/discover" {
		s.exitOnDiscover() // with -exit-on-discover (hostile.go)
	}
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{cancel: cancel}
	s.mu.Lock()
	initialized := s.initialized
	s.inflight[key] = c
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			if s.inflight[key] == c {
				delete(s.inflight, key)
			}
			s.mu.Unlock()
			cancel()
		}()
		result, rerr := s.handleRequest(ctx, m, initialized)
		switch {
		case rerr == errNoReply:
		case rerr != nil:
			s.out.writeLine(errorLine(m.ID, rerr))
		default:
			s.out.writeLine(resultLine(m.ID, result))
		}
	}()
}

// handleRequest answers one request; initialized tells whether
// notifications/initialized had arrived when the request was read.
func (s *server) handleRequest(ctx context.Context, m *message, initialized bool) ([]byte, *rpcError) {
	switch m.Method {
	case "initialize":
		return s.initialize(ctx, m.Params)
	case "ping":
		return []byte("{}"), nil
	case "tools/list":
		if s.cfg.noise { // a non-JSON line mid-session, right before the first tools/list answer
			defer s.listNoise.Do(func() { s.out.writeLine([]byte(noiseLine)) })
		}
		if !initialized {
			s.logf("tools/list before notifications/initialized")
			return nil, &rpcError{code: -32002, message: "not initialized"}
		}
		return s.listTools(m.Params)
	case "tools/call":
		return s.callTool(ctx, m.ID, m.Params)
	}
	if run := taskMethods[m.Method]; run != nil && s.cfg.tasks {
		return run(s, ctx, m.Params)
	}
	if s.cfg.caps["resources"] {
		switch m.Method {
		case "resources/list":
			return s.listResources(m.Params)
		case "resources/templates/list":
			return s.listResourceTemplates(m.Params)
		case "resources/read":
			return s.readResource(m.Params)
		case "resources/subscribe":
			return s.subscribe(m.Params, true)
		case "resources/unsubscribe":
			return s.subscribe(m.Params, false)
		}
	}
	if s.cfg.caps["prompts"] {
		switch m.Method {
		case "prompts/list":
			return s.listPrompts(m.Params)
		case "prompts/get":
			return s.getPrompt(m.Params)
		}
	}
	if s.cfg.caps["completions"] && m.Method == "completion/complete" {
		return s.complete(m.Params)
	}
	if s.cfg.caps["logging"] && m.Method == "logging/setLevel" {
		return s.setLevel(m.Params)
	}
	return nil, &rpcError{code: -32601, message: "Method not found: " + m.Method}
}

func (s *server) initialize(ctx context.Context, params json.RawMessage) ([]byte, *rpcError) {
	if s.cfg.hangInit {
		<-ctx.Done()
		return nil, errNoReply
	}
	if s.cfg.initDelay > 0 {
		select {
		case <-time.After(s.cfg.initDelay):
		case <-ctx.Done():
			return nil, errNoReply
		}
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{code: -32602, message: "invalid initialize params: " + err.Error()}
		}
	}
	s.mu.Lock()
	s.initParams = append(json.RawMessage(nil), params...)
	s.mu.Unlock()

	version := s.cfg.version
	if version == "" {
		version = p.ProtocolVersion
	}
	if version == "" {
		version = "2025-11-25"
	}
	b := []byte(`{"protocolVersion":`)
	b = append(b, jsonString(version)...)
	b = append(b, `,"capabilities":{"tools":{"listChanged":true}`...)
	if s.cfg.caps["resources"] {
		if s.cfg.caps["subscribe"] {
			b = append(b, `,"resources":{"subscribe":true,"listChanged":true}`...)
		} else {
			b = append(b, `,"resources":{"listChanged":true}`...)
		}
	}
	if s.cfg.caps["prompts"] {
		b = append(b, `,"prompts":{"listChanged":true}`...)
	}
	if s.cfg.caps["logging"] {
		b = append(b, `,"logging":{}`...)
	}
	if s.cfg.caps["completions"] {
		b = append(b, `,"completions":{}`...)
	}
	if s.cfg.tasks {
		b = append(b, taskCapability...)
	}
	b = append(b, `},"serverInfo":{"name":`...)
	b = append(b, jsonString(s.cfg.name)...)
	b = append(b, `,"version":"1.0.0"}`...)
	if s.cfg.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = append(b, jsonString(s.cfg.instructions)...)
	}
	b = append(b, '}')
	return b, nil
}

func (s *server) handleNotification(m *message) {
	switch m.Method {
	case "notifications/initialized":
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
		if method := s.cfg.askOnInit; method != "" {
			go func() {
				id, ch := s.sendRequest(method, []byte(`{}`))
				m := s.await(context.Background(), id, ch)
				if m != nil {
					s.logf("asked %s on init: %s%s", method, m.Result, m.Error)
				}
			}()
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || len(p.RequestID) == 0 {
			s.logf("bad notifications/cancelled: %s", truncate(m.Params, 200))
			return
		}
		s.mu.Lock()
		c := s.inflight[idKey(p.RequestID)]
		s.mu.Unlock()
		if c == nil {
			s.logf("cancel for unknown request %s", p.RequestID)
			return
		}
		c.cancel()
	case "notifications/roots/list_changed":
		s.logf("roots changed")
	case "notifications/progress":
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.logf("client progress %s", p.ProgressToken)
	}
}

// paginate returns the page of items that starts at cursor ("" = first page)
// and the cursor of the next page ("" = none).
func paginate(items [][]byte, params json.RawMessage, size int) (page [][]byte, next string, rerr *rpcError) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", &rpcError{code: -32602, message: "invalid params: " + err.Error()}
		}
	}
	start := 0
	if p.Cursor != nil {
		if _, err := fmt.Sscanf(*p.Cursor, "cursor-%d", &start); err != nil || start < 0 || start > len(items) {
			return nil, "", &rpcError{code: -32602, message: "invalid cursor"}
		}
	}
	end := len(items)
	if size > 0 && start+size < end {
		end = start + size
		next = fmt.Sprintf("cursor-%d", end)
	}
	return items[start:end], next, nil
}

// listResult builds {"<key>":[items...],"nextCursor":next}.
func listResult(key string, items [][]byte, next string) []byte {
	n := len(key) + 32
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":`...)
		b = append(b, jsonString(next)...)
	}
	return append(b, '}')
}
