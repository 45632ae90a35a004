package aggregator

import (
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/uritemplate"
)

// What the session reads of a server's lists, each a snapshot taken under
// the server's lock (server.Status).

// named returns the child's tools and prompts, and whether it lists them:
// it runs, or it is not up yet and what it listed when it last ran is
// remembered (then remembered is true: those are listed until it is up).
func (c *child) named() (tools, prompts []namedEntry, listed, remembered bool) {
	st := c.Status()
	if st.State == server.Running {
		return namedEntries(st.Lists.Tools), namedEntries(st.Lists.Prompts), true, false
	}
	if r, ok := c.standIn(st); ok {
		return namedEntries(r.Lists.Tools), namedEntries(r.Lists.Prompts), true, true
	}
	return nil, nil, false, false
}

// servesApp reports whether the child serves MCP Apps (it declared the
// extension or lists a ui:// resource) and lists a tool named name that
// its entry does not hide.
func (c *child) servesApp(name string) bool {
	if _, exposed := c.toolView().expose(name); !exposed {
		return false // a hidden tool is called by no name
	}
	st := c.Status()
	if st.State != server.Running || !slices.ContainsFunc(st.Lists.Tools, func(e server.Entry) bool { return e.Name == name }) {
		return false
	}
	if st.Caps.Apps {
		return true
	}
	for uri := range st.Lists.Resources {
		if strings.HasPrefix(uri, "ui://") {
			return true
		}
	}
	return false
}

// hasResource reports whether the child listed uri.
func (c *child) hasResource(uri string) bool {
	_, ok := c.Status().Lists.Resources[uri]
	return ok
}

// templateFor reports whether one of the child's templates is exactly
// uriTemplate.
func (c *child) templateFor(uriTemplate string) bool {
	return slices.ContainsFunc(c.Status().Lists.Templates, func(t server.Template) bool { return t.Text == uriTemplate })
}

// templateMatch returns the rank of the most specific of the child's
// templates that matches uri, and whether one does.
func (c *child) templateMatch(uri string) (uritemplate.Rank, bool) {
	var best uritemplate.Rank
	found := false
	for _, t := range c.Status().Lists.Templates {
		if t.Matches(uri) && (!found || t.Rank.MoreSpecific(best)) {
			best, found = t.Rank, true
		}
	}
	return best, found
}

// listsResources returns the child's lists when it lists resources: it
// runs and declared them, or what it declared and listed when it last ran
// stands in for it (memory.go).
func (c *child) listsResources() (server.Lists, bool) {
	st := c.Status()
	if st.State == server.Running {
		return st.Lists, st.Caps.Resources
	}
	if r, ok := c.standIn(st); ok {
		return r.Lists, r.Caps.Resources
	}
	return server.Lists{}, false
}

// resourceEntries and templateEntries return the raw entries of the
// child's resource lists, in its order (listsResources).
func (c *child) resourceEntries() [][]byte {
	l, _ := c.listsResources()
	return l.ResourceList
}

func (c *child) templateEntries() [][]byte {
	l, _ := c.listsResources()
	ts := l.Templates
	raw := make([][]byte, 0, len(ts))
	for _, t := range ts {
		raw = append(raw, t.Raw)
	}
	return raw
}

// hint returns one of the child's caching hints.
func (c *child) hint(which func(*server.Hints) eras.Hint) eras.Hint {
	h := c.Status().Lists.Hints
	return which(&h)
}
