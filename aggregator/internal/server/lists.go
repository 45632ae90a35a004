package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/uritemplate"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A server's lists (Kinds): fetched page by page when it starts and again
// on its list_changed, each entry checked (checks.go), stored whole, and
// read by the session as a snapshot (Lists).

// Lists are a server's lists as it last gave them, and their caching
// hints. A snapshot: the session reads it and never changes it.
type Lists struct {
	Tools        []Entry
	Prompts      []Entry
	Resources    map[string][]byte // uri -> raw entry
	ResourceList [][]byte          // raw entries in the server's order
	Templates    []Template
	Hints        Hints
}

// Hints are a server's caching hints for its discover result and its
// lists, as it last gave them.
type Hints struct {
	Discover, Tools, Prompts, Resources, Templates eras.Hint
}

// Entry is a tool or prompt as a server listed it.
type Entry struct {
	Name    string // the server's name, decoded
	RawName []byte // the server's name token, as it wrote it
	Raw     []byte // the whole entry
}

// Template is a server's resource template with its matcher.
type Template struct {
	uritemplate.Template
	Raw []byte
}

// fetches counts the list fetches of every server, in the order they begin.
var fetches atomic.Uint64

// storable reports, with s.mu held, whether the list of method fetched
// from began may be stored: no fetch of it that began later stored first.
// It records the store.
func (s *Server) storable(method string, began uint64) bool {
	if s.stored == nil {
		s.stored = make(map[string]uint64)
	}
	if s.stored[method] > began {
		return false
	}
	s.stored[method] = began
	return true
}

// listHint is the caching hint of a page of a list, for a modern server;
// a legacy server's lists have none.
func (s *Server) listHint(result []byte) (eras.Hint, bool) {
	if !s.modern.Load() {
		return eras.Hint{}, false
	}
	return eras.ReadHint(result, time.Now()), true
}

// fetchLists reads every list the server offers (Kinds). Only a failing
// list of a kind asked of every server (tools) that the server declared is
// an error; the other lists are best effort.
func (s *Server) fetchLists(ctx context.Context) error {
	caps := s.Status().Caps
	for i := range Kinds {
		k := &Kinds[i]
		if !k.Offered(caps) {
			continue
		}
		for _, l := range k.Lists {
			err := l.refresh(s, ctx)
			switch {
			case err == nil:
			case k.Always && k.Declared(caps):
				return err
			case k.Always:
				s.set.Log.Debugf("server %q declared no %s and %s failed: %v", s.key, k.Name, l.Method, err)
			default:
				s.set.Log.Warnf("server %q: %s: %v", s.key, l.Method, err)
			}
		}
	}
	return nil
}

func (s *Server) refreshTools(ctx context.Context) error {
	return s.refreshNamed(ctx, "tools/list", "tools", &s.lists.Tools, &s.lists.Hints.Tools)
}

func (s *Server) refreshPrompts(ctx context.Context) error {
	return s.refreshNamed(ctx, "prompts/list", "prompts", &s.lists.Prompts, &s.lists.Hints.Prompts)
}

// refreshNamed replaces *list and *hint (guarded by s.mu) with the server's
// current entries of a named list.
func (s *Server) refreshNamed(ctx context.Context, method, field string, list *[]Entry, hint *eras.Hint) error {
	began := fetches.Add(1)
	entries, h, err := s.listNamed(ctx, method, field)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.storable(method, began) {
		*list, *hint = entries, h
	}
	s.mu.Unlock()
	return nil
}

func (s *Server) refreshResources(ctx context.Context) error {
	began := fetches.Add(1)
	items, hint, err := s.fetchAllPages(ctx, "resources/list", "resources")
	if err != nil {
		return err
	}
	byURI := resourceIndex(items)
	s.mu.Lock()
	if s.storable("resources/list", began) {
		s.lists.Resources, s.lists.ResourceList, s.lists.Hints.Resources = byURI, items, hint
	}
	s.mu.Unlock()
	return nil
}

func (s *Server) refreshTemplates(ctx context.Context) error {
	began := fetches.Add(1)
	items, hint, err := s.fetchAllPages(ctx, "resources/templates/list", "resourceTemplates")
	if err != nil {
		return err
	}
	ts := templates(items)
	s.mu.Lock()
	if s.storable("resources/templates/list", began) {
		s.lists.Templates, s.lists.Hints.Templates = ts, hint
	}
	s.mu.Unlock()
	return nil
}

// listNamed fetches a list of named entries; the registry names them.
func (s *Server) listNamed(ctx context.Context, method, field string) ([]Entry, eras.Hint, error) {
	items, hint, err := s.fetchAllPages(ctx, method, field)
	if err != nil {
		return nil, hint, err
	}
	entries := namedEntries(items, func(i int) {
		s.set.Log.Warnf("server %q: %s: entry %d has no name; left out", s.key, method, i)
	})
	return entries, hint, nil
}

// namedEntries are the entries of a list of named entries (tools,
// prompts); those without a name are left out, each told to leftOut.
func namedEntries(items [][]byte, leftOut func(i int)) []Entry {
	entries := make([]Entry, 0, len(items))
	for i, it := range items {
		rawName, ok := jsonrpc.Member(it, "name")
		name, isString := jsonrpc.String(rawName)
		if !ok || !isString || name == "" {
			leftOut(i)
			continue
		}
		entries = append(entries, Entry{Name: name, RawName: rawName, Raw: it})
	}
	return entries
}

// resourceIndex is a resource list's entries by URI (the first of a URI
// listed twice).
func resourceIndex(items [][]byte) map[string][]byte {
	byURI := make(map[string][]byte, len(items))
	for _, it := range items {
		if uri, ok := jsonrpc.StringMember(it, "uri"); ok {
			if _, dup := byURI[uri]; !dup {
				byURI[uri] = it
			}
		}
	}
	return byURI
}

// templates are a template list's entries with their matchers.
func templates(items [][]byte) []Template {
	var ts []Template
	for _, it := range items {
		t, ok := jsonrpc.StringMember(it, "uriTemplate")
		if !ok {
			continue
		}
		ts = append(ts, Template{Template: uritemplate.Parse(t), Raw: it})
	}
	return ts
}

// maxPages bounds the pages of one list, against a server that never stops
// handing out cursors.
const maxPages = 10000

// fetchAllPages calls a list method page by page and returns the raw
// entries of field from every page, and the pages' caching hint merged
// (a legacy server's says nothing).
func (s *Server) fetchAllPages(ctx context.Context, method, field string) ([][]byte, eras.Hint, error) {
	var all [][]byte
	var params []byte
	var hints []eras.Hint
	seen := make(map[string]bool)
	listed := 0 // entries of the earlier pages
	for page := 0; page < maxPages; page++ {
		resp, err := s.Call(ctx, method, params)
		if err != nil {
			return nil, eras.Hint{}, err
		}
		if resp.Error != nil {
			return nil, eras.Hint{}, s.Errorf("answered %s with an error: %s", method, resp.Error)
		}
		items, err := s.ListEntries(resp, method, field)
		if err != nil {
			return nil, eras.Hint{}, err
		}
		all = s.appendWellFormed(all, method, items, listed)
		listed += len(items)
		if h, ok := s.listHint(resp.Result); ok {
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
			return nil, eras.Hint{}, s.Errorf("repeated the cursor %s in %s", cursor, method)
		}
		seen[string(cursor)] = true
		params = append(append([]byte(`{"cursor":`), cursor...), '}')
	}
	return nil, eras.Hint{}, s.Errorf("answered %s in more than %d pages", method, maxPages)
}

// listChanged is the server's list_changed of the list kind k: the list is
// refreshed, then the client told once, on a goroutine of its own (the
// server's reader must go on). A flood of notifications costs no more than
// two refreshes at a time: while one runs, the notifications that come
// only ask for one more after it.
func (s *Server) listChanged(k *Kind) {
	r := s.refreshes[k.Changed]
	if !r.claim() {
		return
	}
	started := s.set.Life.Go(func() {
		for {
			s.refreshList(k)
			if !r.again() {
				return
			}
		}
	})
	if !started {
		r.again()
	}
}

// refreshList refreshes a list, one refresh of the server at a time, and
// tells the client once.
func (s *Server) refreshList(k *Kind) {
	if !s.Status().Initialized() {
		return
	}
	s.refreshing.Lock()
	defer s.refreshing.Unlock()
	ctx, cancel := context.WithTimeout(s.set.Life.Context(), s.set.StartupTimeout)
	defer cancel()
	if err := k.refresh(s, ctx); err != nil {
		if s.set.Life.Context().Err() == nil {
			s.set.Log.Warnf("server %q: refreshing after %s: %v", s.key, k.Changed, err)
		}
		return
	}
	if s.Status().Initialized() {
		s.remember()
		s.events.ListChanged(k.Changed)
	}
}

// refreshState coalesces a server's notifications that one list changed: at
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
