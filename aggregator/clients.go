package aggregator

import (
	"fmt"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
)

// How names are formed, and what known clients do with them, is in
// internal/naming; here is what depends on Options, and the warning of
// what was done to a client's names.

// reportNames writes, once the children are ready, one warning when tool
// names were changed for the client or will be changed by it, and with
// --debug one line per such name.
func (a *Aggregator) reportNames() {
	a.regMu.Lock()
	clientName := a.clientName
	a.regMu.Unlock()
	r := a.reg.Load()
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
			if fate := k.Fate(a.opts.serverNameLen(), t.entry.Key, t.entry.Name, t.Name); fate != "" {
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
		a.log.Debugf("tool %q of server %q is listed as %q (%s)", t.entry.Name, t.entry.Key, t.Name, what)
	}
	if changed == 0 {
		return
	}
	a.log.Warnf("%s; --debug lists them (see README.md#tool-names)", a.namesSummary(r, clientName, counts, order))
}

// namesSummary is the warning of reportNames, without its end.
func (a *Aggregator) namesSummary(r *registry, clientName string, counts map[string]int, order []string) string {
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
			r.naming.Limit(), clientLabel(clientName), a.opts.serverNameLen(), strings.Join(ours, ", ")))
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
