package aggregator

import (
	"fmt"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
)

// The catalog's names: how they are formed for this client, who owns one,
// the names a reload keeps (pinned), the warnings given once, and the
// report of the names served.

// setNaming sets how names are formed for the client, before any child
// has listed a name. A --separator that breaks the strict form is kept
// (an explicit choice wins), with a warning.
func (ct *catalog) setNaming(clientName string, n naming.Scheme) {
	ct.mu.Lock()
	ct.naming, ct.clientName = n, clientName
	ct.clientNaming.Store(&n)
	ct.mu.Unlock()
	ct.log.Debugf("names for client %q: %q between server key and name, strict form: %t", clientName, n.Sep, n.Strict)
	if n.Strict && !naming.Conforms("k"+n.Sep+"t") {
		ct.log.Warnf("%s accepts only tool names matching %s, and withholds every tool of a server when one name does not: --separator %q breaks it in every name; without --separator it gets %q",
			clientLabel(clientName), naming.StrictPattern, n.Sep, naming.StrictSep)
	}
}

// clientsName is the client's clientInfo.name.
func (ct *catalog) clientsName() string {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	return ct.clientName
}

// ownersOf are the configured servers a prefixed name may belong to, as
// names are formed for the client (ct.clientNaming: the registry's is the
// client's only once a server is up): the server whose key and the
// separator begin it (the longest such key); and, only for a name that
// may have been shortened to fit the client (its key cut), after that one,
// those whose key begins with what stands before the separator.
func (ct *catalog) ownersOf(name string) []*child {
	n := ct.clientNaming.Load()
	var exact *child
	var cut []*child
	head, _, prefixed := strings.Cut(name, n.Sep)
	for _, c := range ct.children() {
		key := n.ServedKey(c.key)
		switch {
		case strings.HasPrefix(name, key+n.Sep):
			if exact == nil || len(key) > len(n.ServedKey(exact.key)) {
				exact = c
			}
		case prefixed && head != "" && strings.HasPrefix(key, head):
			cut = append(cut, c)
		}
	}
	var owners []*child
	if exact != nil {
		owners = append(owners, exact)
	}
	if n.MayBeShortened(name) {
		owners = append(owners, cut...)
	}
	return owners
}

// listed reports whether a call routed by name names a tool or prompt
// that a running server listed: a call to a server that is up is served
// without waiting for the others to start. (What is not listed yet waits,
// and is then looked up again.)
func (ct *catalog) listed(c *call) bool {
	name, ok := c.name()
	if !ok {
		return false
	}
	r := ct.reg.Load()
	var rt route
	switch c.method {
	case "tools/call":
		rt, ok = r.tools[string(name)]
	case "prompts/get":
		rt, ok = r.prompts[string(name)]
	default:
		ok = false
	}
	return ok && !rt.remembered
}

// pinNames pins the names served now, adding to those pinned before (a
// server that comes back gets its name back, unless another took it
// meanwhile).
func (ct *catalog) pinNames() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	r := ct.reg.Load()
	if ct.pinned.naming != r.naming {
		ct.pinned = pinnedNames{naming: r.naming}
	}
	ct.pinned.gen++
	ct.pinned.tools = pin(ct.pinned.tools, r.toolNames, ct.pinned.gen)
	ct.pinned.prompts = pin(ct.pinned.prompts, r.promptNames, ct.pinned.gen)
}

func pin(held map[naming.Entry]naming.Held, listed []listedName, gen int) map[naming.Entry]naming.Held {
	if held == nil {
		held = make(map[naming.Entry]naming.Held, len(listed))
	}
	for _, l := range listed {
		if !l.Hidden {
			held[l.entry] = naming.Held{Name: l.Name, Gen: gen}
		}
	}
	return held
}

// warn logs a warning once per what.
func (ct *catalog) warn(what, format string, args ...any) {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	ct.warnOnce(what, format, args...)
}

// warnOnce is warn, called with mu held.
func (ct *catalog) warnOnce(what, format string, args ...any) {
	if ct.warned[what] {
		return
	}
	ct.warned[what] = true
	ct.log.Warnf(format, args...)
}

// reportNames writes, once the children are ready, one warning when tool
// names were changed for the client or will be changed by it, and with
// --debug one line per such name.
func (ct *catalog) reportNames() {
	clientName := ct.clientsName()
	r := ct.reg.Load()
	k, known := naming.LookupClient(clientName)
	counts := make(map[string]int)
	var order []string
	var changed int
	for _, t := range r.toolNames {
		if t.Hidden {
			continue
		}
		what := t.Change.Describe()
		if known {
			if fate := k.Fate(ct.nameLen, t.entry.Key, t.entry.Name, t.Name); fate != "" {
				what = strings.TrimPrefix(what+"; by "+clientName+": "+fate, "; ")
				if counts[fate] == 0 {
					order = append(order, fate)
				}
				counts[fate]++
			}
		}
		if what == "" {
			continue
		}
		changed++
		ct.log.Debugf("tool %q of server %q is listed as %q (%s)", t.entry.Name, t.entry.Key, t.Name, what)
	}
	if changed == 0 {
		return
	}
	ct.log.Warnf("%s; --debug lists them (see README.md#tool-names)", ct.namesSummary(r, clientName, counts, order))
}

// namesSummary is the warning of reportNames, without its end.
func (ct *catalog) namesSummary(r *registry, clientName string, counts map[string]int, order []string) string {
	var ours, fates []string
	for _, ch := range []naming.Change{naming.CharsReplaced, naming.Shortened, naming.Disambiguated, naming.AmbiguousKey} {
		n := 0
		for _, t := range r.toolNames {
			if !t.Hidden && t.Change&ch != 0 && (ch != naming.AmbiguousKey || t.Change&naming.Disambiguated == 0) {
				n++ // a key that holds the separator is told of when no hash was needed for it
			}
		}
		if n > 0 {
			ours = append(ours, fmt.Sprintf("%d %s", n, ch.Describe()))
		}
	}
	for _, f := range order {
		fates = append(fates, fmt.Sprintf("%d %s", counts[f], f))
	}
	var parts []string
	switch {
	case len(ours) == 0:
	case r.naming.Strict:
		parts = append(parts, fmt.Sprintf("tool names made to match %s for %s: %s", naming.StrictPattern, clientLabel(clientName), strings.Join(ours, ", ")))
	case r.naming.Limit() == 0: // a client with no known limit: names were only told apart
		parts = append(parts, fmt.Sprintf("tool names changed for %s: %s", clientLabel(clientName), strings.Join(ours, ", ")))
	default:
		parts = append(parts, fmt.Sprintf("tool names made to fit the %d characters %s leaves them (with its prefix, for a server name of up to %d characters: see --registered-as): %s",
			r.naming.Limit(), clientLabel(clientName), ct.nameLen, strings.Join(ours, ", ")))
	}
	if len(fates) > 0 {
		parts = append(parts, fmt.Sprintf("tool names that %s will change: %s", clientLabel(clientName), strings.Join(fates, ", ")))
	}
	return strings.Join(parts, "; ")
}

func clientLabel(name string) string {
	if name == "" {
		return "the client"
	}
	return fmt.Sprintf("client %q", name)
}
