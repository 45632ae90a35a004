package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

type childState int

const (
	stateStarting childState = iota
	stateRunning             // initialized, lists fetched
	stateFailed              // dropped: never starts again
	stateStopped             // stopped at shutdown
)

func (s childState) String() string {
	return [...]string{"starting", "ok", "failed", "stopped"}[s]
}

// errStartupTimeout is the cause of a context that bounds a child's start.
var errStartupTimeout = errors.New("start-up timeout")

// childCapabilities are the server capabilities a child declared.
type childCapabilities struct {
	tools, prompts, resources, subscribe, logging, completions bool
}

// namedEntry is a tool or prompt as a child listed it.
type namedEntry struct {
	name    string // the child's name, decoded
	rawName []byte // the child's name token, as it wrote it
	listed  []byte // the whole entry with the name prefixed
}

// resourceTemplate is a child's resource template with its matcher.
type resourceTemplate struct {
	uriTemplate string
	match       *regexp.Regexp
	raw         []byte
}

// child is one configured server and its connection.
type child struct {
	agg    *Aggregator
	index  int
	key    string
	server config.Server

	spawned chan struct{} // closed once spawn has finished, either way
	inited  chan struct{} // closed once initialize was answered or failed
	ready   chan struct{} // closed once running with lists fetched, or failed
	once    struct{ inited, ready sync.Once }

	proc Process       // set before spawned closes; nil if spawn failed
	conn *jsonrpc.Conn // likewise
	gone chan struct{} // closed when the watcher has seen the child end

	refreshing sync.Mutex // one list refresh at a time, so an older one never wins

	mu           sync.Mutex // protects the fields below
	state        childState
	failure      error
	startedAt    time.Time
	startup      time.Duration
	version      string
	caps         childCapabilities
	instructions string
	tools        []namedEntry
	prompts      []namedEntry
	resources    map[string][]byte // uri -> raw entry
	resourceList [][]byte          // raw entries in the child's order
	templates    []resourceTemplate
	incoming     map[string]canceler // the child's requests to the client, by id: their cancel
}

func newChild(a *Aggregator, index int, s config.Server) *child {
	return &child{
		agg: a, index: index, key: s.Key, server: s,
		spawned:  make(chan struct{}),
		inited:   make(chan struct{}),
		ready:    make(chan struct{}),
		gone:     make(chan struct{}),
		incoming: make(map[string]canceler),
	}
}

// spawn starts the process and its connection.
func (c *child) spawn() {
	defer close(c.spawned)
	c.mu.Lock()
	c.startedAt = time.Now()
	c.mu.Unlock()
	proc, err := c.agg.opts.Start(c.server)
	if err != nil {
		close(c.gone)
		c.fail(err)
		return
	}
	c.proc = proc
	c.conn = jsonrpc.NewConn(proc.Stdout(), proc.Stdin(), jsonrpc.Options{
		// Writes to a child never block: one that stops reading its stdin
		// must not stall the client or the other children.
		Queue:  true,
		Handle: c.handle,
		Invalid: func(line []byte, m *jsonrpc.Message, err error) {
			c.agg.log.Warnf("server %q: skipped a line that is not JSON-RPC (%v): %s", c.key, err, clipLine(line))
			if m != nil && m.Method != "" && !isBrokenNotification(line, m) {
				// A request with a null or malformed id still gets an answer.
				c.conn.Write(errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error()))
			}
		},
		Unmatched: func(m *jsonrpc.Message) {
			c.agg.log.Debugf("server %q: dropped the answer to id %s (cancelled or timed out)", c.key, m.ID)
		},
		Cancelled: func(id json.RawMessage, cause error) {
			if !errors.Is(cause, errStartupTimeout) { // initialize is never cancelled
				sendCancelled(c.conn, id, cause)
			}
		},
	})
	go c.conn.Run()
	go c.watch()
	c.agg.log.Debugf("server %q: started %s", c.key, c.server.Command)
}

// watch waits for the child to end, at any time, and drops it.
func (c *child) watch() {
	defer close(c.gone)
	select {
	case <-c.proc.Done():
		// Let the reader drain what the child wrote before it exited.
		select {
		case <-c.conn.Done():
		case <-time.After(time.Second):
		}
		err := c.proc.Err()
		if err == nil {
			err = fmt.Errorf("server %q exited", c.key)
		}
		c.conn.Close(err)
		c.fail(err)
	case <-c.conn.Done():
		// Its stdout ended: usually because it is exiting, and then its
		// exit status says more than the end of a pipe.
		select {
		case <-c.proc.Done():
			if err := c.proc.Err(); err != nil {
				c.fail(err)
				break
			}
			c.fail(fmt.Errorf("server %q exited", c.key))
		case <-time.After(time.Second):
			c.fail(fmt.Errorf("server %q closed its stdout: %w", c.key, c.conn.Err()))
		}
		c.proc.Stop()
	}
}

// fail drops the child for good: its calls fail, its entries leave the
// registry, and the client hears that lists changed.
func (c *child) fail(err error) {
	c.mu.Lock()
	if c.state == stateFailed || c.state == stateStopped {
		c.mu.Unlock()
		return
	}
	if c.agg.isStopping() {
		c.state = stateStopped
		c.mu.Unlock()
		c.markInited()
		c.markReady()
		return
	}
	was := c.state
	c.state, c.failure = stateFailed, err
	caps := c.caps
	incoming := c.incoming
	c.incoming = make(map[string]canceler)
	c.mu.Unlock()

	c.agg.log.Errorf("server %q dropped: %v", c.key, err)
	for _, r := range incoming {
		r.cancel(fmt.Errorf("server %q is gone", c.key))
	}
	if c.conn != nil {
		c.conn.Close(err)
		go c.proc.Stop() // reap it and whatever is left of its group
	}
	c.markInited()
	c.markReady()
	if was == stateRunning {
		c.agg.rebuild()
		c.agg.notifyListChanged(true, caps.prompts, caps.resources)
	}
}

func (c *child) markInited() { c.once.inited.Do(func() { close(c.inited) }) }
func (c *child) markReady()  { c.once.ready.Do(func() { close(c.ready) }) }

// lost is the error to give the client for a call that the child could not
// answer.
func (c *child) lost(err error) error {
	if errors.Is(err, jsonrpc.ErrClosed) && c.gone != nil {
		// The watcher is about to say how the child ended.
		select {
		case <-c.gone:
		case <-time.After(2 * time.Second):
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failure != nil {
		return c.failure
	}
	if strings.HasPrefix(err.Error(), fmt.Sprintf("server %q ", c.key)) {
		return err // it says which server already
	}
	return fmt.Errorf("server %q: %w", c.key, err)
}

// running reports whether the child serves requests.
func (c *child) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateRunning
}

func (c *child) capabilities() childCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}

// stop stops the child at shutdown.
func (c *child) stop() {
	<-c.spawned
	if c.proc == nil {
		return
	}
	c.fail(errors.New("shutting down")) // marks it stopped: a shutdown is no failure
	c.proc.Stop()
	<-c.gone
}

// start initializes the child with params and, once it has answered, tells
// it initialized and fetches its lists, all within the start-up timeout.
func (c *child) start(params []byte) {
	<-c.spawned
	if c.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeoutCause(c.agg.ctx, c.agg.opts.StartupTimeout, errStartupTimeout)
	defer cancel()
	if err := c.initialize(ctx, params); err != nil {
		c.fail(c.startError("initialize", ctx, err))
		return
	}
	c.markInited()
	if err := c.fetchLists(ctx); err != nil {
		c.fail(c.startError("tools/list", ctx, err))
		return
	}
	c.mu.Lock()
	if c.state != stateStarting {
		c.mu.Unlock()
		return
	}
	c.state = stateRunning
	c.startup = time.Since(c.startedAt)
	c.mu.Unlock()
	c.agg.log.Debugf("server %q: ready in %v", c.key, c.startup)
	c.agg.rebuild()
	c.markReady()
}

func (c *child) startError(what string, ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errStartupTimeout) && ctx.Err() != nil {
		return fmt.Errorf("server %q did not answer %s within the start-up timeout of %v", c.key, what, c.agg.opts.StartupTimeout)
	}
	return c.lost(err)
}

func (c *child) initialize(ctx context.Context, params []byte) error {
	resp, err := c.conn.Call(ctx, "initialize", params)
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("server %q answered initialize with an error: %s", c.key, resp.Error)
	}
	version, _ := jsonrpc.StringMember(resp.Result, "protocolVersion")
	if !isSupported(version) {
		return fmt.Errorf("server %q answered initialize with protocol version %q, which is not one of %s", c.key, version, strings.Join(supportedVersions, ", "))
	}
	caps := parseServerCapabilities(resp.Result)
	instructions, _ := jsonrpc.StringMember(resp.Result, "instructions")
	c.mu.Lock()
	c.version, c.caps, c.instructions = version, caps, instructions
	c.mu.Unlock()
	if v := c.agg.negotiated(); v != "" && v != version {
		c.agg.log.Warnf("server %q speaks protocol version %s, the client %s; serving it as it is", c.key, version, v)
	}
	return c.conn.Notify("notifications/initialized", nil)
}

func parseServerCapabilities(result []byte) childCapabilities {
	var caps childCapabilities
	raw, ok := jsonrpc.Member(result, "capabilities")
	if !ok {
		return caps
	}
	has := func(name string) bool {
		v, ok := jsonrpc.Member(raw, name)
		return ok && string(v) != "null" && string(v) != "false"
	}
	caps.tools, caps.prompts, caps.resources = has("tools"), has("prompts"), has("resources")
	caps.logging, caps.completions = has("logging"), has("completions")
	if res, ok := jsonrpc.Member(raw, "resources"); ok {
		sub, _ := jsonrpc.Member(res, "subscribe")
		caps.subscribe = string(sub) == "true"
	}
	return caps
}

// fetchLists reads every list the child offers. Only a failing tools/list of
// a child that declared tools is an error; the other lists are best effort.
func (c *child) fetchLists(ctx context.Context) error {
	caps := c.capabilities()
	if err := c.refreshTools(ctx); err != nil {
		if caps.tools {
			return err
		}
		c.agg.log.Debugf("server %q declared no tools and tools/list failed: %v", c.key, err)
	}
	if caps.prompts {
		if err := c.refreshPrompts(ctx); err != nil {
			c.agg.log.Warnf("server %q: prompts/list: %v", c.key, err)
		}
	}
	if caps.resources {
		if err := c.refreshResources(ctx); err != nil {
			c.agg.log.Warnf("server %q: resources/list: %v", c.key, err)
		}
		if err := c.refreshTemplates(ctx); err != nil {
			c.agg.log.Warnf("server %q: resources/templates/list: %v", c.key, err)
		}
	}
	return nil
}

func (c *child) refreshTools(ctx context.Context) error {
	return c.refreshNamed(ctx, "tools/list", "tools", &c.tools)
}

func (c *child) refreshPrompts(ctx context.Context) error {
	return c.refreshNamed(ctx, "prompts/list", "prompts", &c.prompts)
}

// refreshNamed replaces *list (guarded by c.mu) with the child's current
// entries of a named list.
func (c *child) refreshNamed(ctx context.Context, method, field string, list *[]namedEntry) error {
	entries, err := c.listNamed(ctx, method, field)
	if err != nil {
		return err
	}
	c.mu.Lock()
	*list = entries
	c.mu.Unlock()
	return nil
}

func (c *child) refreshResources(ctx context.Context) error {
	items, err := c.drain(ctx, "resources/list", "resources")
	if err != nil {
		return err
	}
	byURI := make(map[string][]byte, len(items))
	for _, it := range items {
		if uri, ok := jsonrpc.StringMember(it, "uri"); ok {
			if _, dup := byURI[uri]; !dup {
				byURI[uri] = it
			}
		}
	}
	c.mu.Lock()
	c.resources, c.resourceList = byURI, items
	c.mu.Unlock()
	return nil
}

func (c *child) refreshTemplates(ctx context.Context) error {
	items, err := c.drain(ctx, "resources/templates/list", "resourceTemplates")
	if err != nil {
		return err
	}
	var ts []resourceTemplate
	for _, it := range items {
		t, ok := jsonrpc.StringMember(it, "uriTemplate")
		if !ok {
			continue
		}
		ts = append(ts, resourceTemplate{uriTemplate: t, match: templateMatcher(t), raw: it})
	}
	c.mu.Lock()
	c.templates = ts
	c.mu.Unlock()
	return nil
}

// listNamed drains a list of named entries and prefixes each name.
func (c *child) listNamed(ctx context.Context, method, field string) ([]namedEntry, error) {
	items, err := c.drain(ctx, method, field)
	if err != nil {
		return nil, err
	}
	prefix := jsonrpc.AppendString(nil, c.key+c.agg.opts.Separator)
	prefix = prefix[:len(prefix)-1] // the open string: `"KEY:`
	entries := make([]namedEntry, 0, len(items))
	for i, it := range items {
		rawName, ok := jsonrpc.Member(it, "name")
		name, isString := jsonrpc.String(rawName)
		if !ok || !isString || name == "" {
			c.agg.log.Warnf("server %q: %s: entry %d has no name; left out", c.key, method, i)
			continue
		}
		prefixed := append(append([]byte{}, prefix...), rawName[1:]...)
		listed, err := jsonrpc.ReplaceMember(it, "name", prefixed)
		if err != nil {
			return nil, err
		}
		entries = append(entries, namedEntry{name: name, rawName: rawName, listed: listed})
	}
	return entries, nil
}

// maxPages bounds the pages of one list, against a child that never stops
// handing out cursors.
const maxPages = 10000

// drain calls a list method page by page and returns the raw entries of
// field from every page.
func (c *child) drain(ctx context.Context, method, field string) ([][]byte, error) {
	var all [][]byte
	var params []byte
	seen := make(map[string]bool)
	for page := 0; page < maxPages; page++ {
		resp, err := c.conn.Call(ctx, method, params)
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("server %q answered %s with an error: %s", c.key, method, resp.Error)
		}
		list, ok := jsonrpc.Member(resp.Result, field)
		if !ok {
			return nil, fmt.Errorf("server %q answered %s without %q", c.key, method, field)
		}
		items, err := jsonrpc.Elements(list)
		if err != nil {
			return nil, fmt.Errorf("server %q answered %s: %q is not an array", c.key, method, field)
		}
		all = append(all, items...)
		cursor, ok := jsonrpc.Member(resp.Result, "nextCursor")
		if !ok || string(cursor) == "null" {
			return all, nil
		}
		if seen[string(cursor)] {
			return nil, fmt.Errorf("server %q repeated the cursor %s in %s", c.key, cursor, method)
		}
		seen[string(cursor)] = true
		params = append(append([]byte(`{"cursor":`), cursor...), '}')
	}
	return nil, fmt.Errorf("server %q: %s has more than %d pages", c.key, method, maxPages)
}

// templateMatcher turns an RFC 6570 URI template into a regular expression
// that matches the URIs it can expand to.
func templateMatcher(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for len(t) > 0 {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(t))
			break
		}
		b.WriteString(regexp.QuoteMeta(t[:open]))
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			b.WriteString(regexp.QuoteMeta(t[open:]))
			break
		}
		expr := t[open+1 : open+end]
		switch {
		case strings.HasPrefix(expr, "+"), strings.HasPrefix(expr, "#"):
			b.WriteString(".*")
		case strings.HasPrefix(expr, "?"), strings.HasPrefix(expr, "&"):
			b.WriteString(`([?&][^#]*)?`)
		case strings.HasPrefix(expr, "/"):
			b.WriteString(`(/[^/?#]*)*`)
		default:
			b.WriteString(`[^/?#]*`)
		}
		t = t[open+end+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(`^$.`) // matches nothing
	}
	return re
}

func clipLine(line []byte) string {
	const max = 200
	if len(line) > max {
		return fmt.Sprintf("%s... (%d bytes)", line[:max], len(line))
	}
	return string(line)
}
