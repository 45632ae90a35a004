package aggregator

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// childHints are a child's hints for its discover result and its lists,
// as it last gave them; guarded by the child's mu.
type childHints struct {
	discover, tools, prompts, resources, templates eras.Hint
}

// childLists are a child's lists as it last gave them; guarded by the
// child's mu.
type childLists struct {
	tools        []namedEntry
	prompts      []namedEntry
	resources    map[string][]byte // uri -> raw entry
	resourceList [][]byte          // raw entries in the child's order
	templates    []resourceTemplate

	// reported are the malformed entries already reported, by list
	// method and entry (shape.go): a list fetched again warns once.
	reported map[string]bool

	// stored says, by list method, when the fetch of the list stored
	// began (its number in fetches): a fetch that began earlier and ended
	// later never overwrites what a later one stored.
	stored map[string]uint64
}

// fetches counts the list fetches of every child, in the order they begin.
var fetches atomic.Uint64

// storable reports, with the child's mu held, whether the list of method
// fetched from began may be stored: no fetch of it that began later
// stored first. It records the store.
func (l *childLists) storable(method string, began uint64) bool {
	if l.stored == nil {
		l.stored = make(map[string]uint64)
	}
	if l.stored[method] > began {
		return false
	}
	l.stored[method] = began
	return true
}

// namedEntry is a tool or prompt as a child listed it.
type namedEntry struct {
	name    string // the child's name, decoded; a renamed tool's exposed name (filter.go)
	rawName []byte // the child's name token, as it wrote it
	raw     []byte // the whole entry
	renamed bool   // name is the exposed name its config entry gives it, not the child's
}

// resourceTemplate is a child's resource template with its matcher.
type resourceTemplate struct {
	uriTemplate string
	match       *regexp.Regexp
	rank        templateRank // how specific it is (owners.go)
	raw         []byte
}

// fetchLists reads every list the child offers (listKinds). Only a failing
// list of a kind asked of every server (tools) that the child declared is
// an error; the other lists are best effort.
func (c *child) fetchLists(ctx context.Context) error {
	caps := c.capabilities()
	for i := range listKinds {
		k := &listKinds[i]
		if !k.offered(caps) {
			continue
		}
		for _, l := range k.fetch {
			err := l.refresh(c, ctx)
			switch {
			case err == nil:
			case k.always && k.declared(caps):
				return err
			case k.always:
				c.host.log.Debugf("server %q declared no %s and %s failed: %v", c.key, k.name, l.method, err)
			default:
				c.host.log.Warnf("server %q: %s: %v", c.key, l.method, err)
			}
		}
	}
	return nil
}

func (c *child) refreshTools(ctx context.Context) error {
	return c.refreshNamed(ctx, "tools/list", "tools", &c.lists.tools, &c.hints.tools)
}

func (c *child) refreshPrompts(ctx context.Context) error {
	return c.refreshNamed(ctx, "prompts/list", "prompts", &c.lists.prompts, &c.hints.prompts)
}

// refreshNamed replaces *list and *hint (guarded by c.mu) with the child's
// current entries of a named list.
func (c *child) refreshNamed(ctx context.Context, method, field string, list *[]namedEntry, hint *eras.Hint) error {
	began := fetches.Add(1)
	entries, h, err := c.listNamed(ctx, method, field)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.lists.storable(method, began) {
		*list, *hint = entries, h
	}
	c.mu.Unlock()
	return nil
}

func (c *child) refreshResources(ctx context.Context) error {
	began := fetches.Add(1)
	items, hint, err := c.fetchAllPages(ctx, "resources/list", "resources")
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
	if c.lists.storable("resources/list", began) {
		c.lists.resources, c.lists.resourceList, c.hints.resources = byURI, items, hint
	}
	c.mu.Unlock()
	return nil
}

func (c *child) refreshTemplates(ctx context.Context) error {
	began := fetches.Add(1)
	items, hint, err := c.fetchAllPages(ctx, "resources/templates/list", "resourceTemplates")
	if err != nil {
		return err
	}
	var ts []resourceTemplate
	for _, it := range items {
		t, ok := jsonrpc.StringMember(it, "uriTemplate")
		if !ok {
			continue
		}
		ts = append(ts, resourceTemplate{uriTemplate: t, match: templateMatcher(t), rank: rankTemplate(t), raw: it})
	}
	c.mu.Lock()
	if c.lists.storable("resources/templates/list", began) {
		c.lists.templates, c.hints.templates = ts, hint
	}
	c.mu.Unlock()
	return nil
}

// listNamed fetches a list of named entries; the registry names them.
func (c *child) listNamed(ctx context.Context, method, field string) ([]namedEntry, eras.Hint, error) {
	items, hint, err := c.fetchAllPages(ctx, method, field)
	if err != nil {
		return nil, hint, err
	}
	entries := make([]namedEntry, 0, len(items))
	for i, it := range items {
		rawName, ok := jsonrpc.Member(it, "name")
		name, isString := jsonrpc.String(rawName)
		if !ok || !isString || name == "" {
			c.host.log.Warnf("server %q: %s: entry %d has no name; left out", c.key, method, i)
			continue
		}
		entries = append(entries, namedEntry{name: name, rawName: rawName, raw: it})
	}
	return entries, hint, nil
}

// maxPages bounds the pages of one list, against a child that never stops
// handing out cursors.
const maxPages = 10000

// fetchAllPages calls a list method page by page and returns the raw
// entries of field from every page, and the pages' caching hint merged
// (a legacy child's says nothing).
func (c *child) fetchAllPages(ctx context.Context, method, field string) ([][]byte, eras.Hint, error) {
	var all [][]byte
	var params []byte
	var hints []eras.Hint
	seen := make(map[string]bool)
	listed := 0 // entries of the earlier pages
	for page := 0; page < maxPages; page++ {
		resp, err := c.call(ctx, method, params)
		if err != nil {
			return nil, eras.Hint{}, err
		}
		if resp.Error != nil {
			return nil, eras.Hint{}, c.errorf("answered %s with an error: %s", method, resp.Error)
		}
		items, err := c.listEntries(resp, method, field)
		if err != nil {
			return nil, eras.Hint{}, err
		}
		all = c.appendWellFormed(all, method, items, listed)
		listed += len(items)
		if h, ok := c.era().listHint(resp.Result); ok {
			hints = append(hints, h)
		}
		cursor, ok := jsonrpc.Member(resp.Result, "nextCursor")
		if !ok || string(cursor) == "null" {
			if len(hints) == 0 {
				return all, eras.Hint{}, nil
			}
			return all, eras.MergeHints(hints, time.Now()), nil
		}
		if seen[string(cursor)] {
			return nil, eras.Hint{}, c.errorf("repeated the cursor %s in %s", cursor, method)
		}
		seen[string(cursor)] = true
		params = append(append([]byte(`{"cursor":`), cursor...), '}')
	}
	return nil, eras.Hint{}, c.errorf("answered %s in more than %d pages", method, maxPages)
}

// listChanged is the child's list_changed of the list kind k: the list is
// refreshed, then the client told once, on a goroutine of its own (the
// child's reader must go on). A flood of notifications costs no more than
// two refreshes at a time: while one runs, the notifications that come
// only ask for one more after it.
func (c *child) listChanged(k *listKind) {
	s := c.refreshes[k.changed]
	if !s.claim() {
		return
	}
	started := c.host.life.goServe(func() {
		for {
			c.refreshList(k)
			if !s.again() {
				return
			}
		}
	})
	if !started {
		s.again()
	}
}

// refreshList refreshes a list, one refresh of the child at a time, and
// tells the client once.
func (c *child) refreshList(k *listKind) {
	if !c.initialized() {
		return
	}
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	ctx, cancel := context.WithTimeout(c.host.life.ctx, c.host.settings.startupTimeout)
	defer cancel()
	if err := k.refresh(c, ctx); err != nil {
		if c.host.life.ctx.Err() == nil {
			c.host.log.Warnf("server %q: refreshing after %s: %v", c.key, k.changed, err)
		}
		return
	}
	c.host.session.rebuild()
	if c.initialized() {
		c.host.session.tellClient(k.changed)
	}
}

// refreshState coalesces a child's notifications that one list changed: at
// most one refresh runs, and at most one more is due after it.
type refreshState struct {
	mu      sync.Mutex // protects the fields below
	running bool
	due     bool // a notification came while a refresh ran
}

// claim reports whether the caller is to run the refresh; when one runs
// already, it is asked to run once more instead.
func (s *refreshState) claim() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.due = true
		return false
	}
	s.running = true
	return true
}

// again reports whether the refresh is to run once more, and gives up the
// claim when it is not.
func (s *refreshState) again() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.due {
		s.due = false
		return true
	}
	s.running = false
	return false
}

// named returns the child's tools and prompts while it runs.
func (c *child) named() (tools, prompts []namedEntry, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists.tools, c.lists.prompts, c.state == stateRunning
}

// servesApp reports whether the child serves MCP Apps (it declared the
// extension or lists a ui:// resource) and lists a tool named name that
// its entry does not hide.
func (c *child) servesApp(name string) bool {
	if _, exposed := c.toolView().expose(name); !exposed {
		return false // a hidden tool is called by no name
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateRunning || !slices.ContainsFunc(c.lists.tools, func(e namedEntry) bool { return e.name == name }) {
		return false
	}
	if c.caps.Apps {
		return true
	}
	for uri := range c.lists.resources {
		if strings.HasPrefix(uri, "ui://") {
			return true
		}
	}
	return false
}

// hasResource reports whether the child listed uri.
func (c *child) hasResource(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.lists.resources[uri]
	return ok
}

// templateFor reports whether one of the child's templates is exactly
// uriTemplate.
func (c *child) templateFor(uriTemplate string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.lists.templates {
		if t.uriTemplate == uriTemplate {
			return true
		}
	}
	return false
}

// templateMatch returns the rank of the most specific of the child's
// templates that matches uri, and whether one does.
func (c *child) templateMatch(uri string) (templateRank, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best templateRank
	found := false
	for _, t := range c.lists.templates {
		if t.match.MatchString(uri) && (!found || t.rank.moreSpecific(best)) {
			best, found = t.rank, true
		}
	}
	return best, found
}

// resourceEntries and templateEntries return the raw entries of the
// child's resource lists, in its order.
func (c *child) resourceEntries() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists.resourceList
}

func (c *child) templateEntries() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw := make([][]byte, 0, len(c.lists.templates))
	for _, t := range c.lists.templates {
		raw = append(raw, t.raw)
	}
	return raw
}
