package aggregator

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
)

// How names are formed, and what known clients do with them, is in
// internal/naming; here is what depends on Options, and the warning of
// what was done to a client's names.

// DefaultServerNameLen is the length assumed for the name the client gives
// the aggregator in its config (which no client sends) when
// Options.ServerNameLen is 0: names are made to fit each known client's
// limit with its prefix for a server name of up to this many characters.
const DefaultServerNameLen = naming.DefaultServerNameLen

// serverNameLen is the length of the name the client gives the aggregator.
func (o Options) serverNameLen() int {
	if o.ServerNameLen > 0 {
		return o.ServerNameLen
	}
	return DefaultServerNameLen
}

// namingFor is the naming a client gets (naming.Settings.For) with
// Options.Separator, Options.StrictNames and Options.ServerNameLen.
func (o Options) namingFor(clientName string) naming.Scheme {
	return naming.Settings{Sep: o.Separator, Strict: o.StrictNames, ServerNameLen: o.serverNameLen()}.For(clientName)
}

// listWait is how long the first lists wait for servers still starting,
// from the first request that needs them: for a client known to fetch a
// list again on list_changed, FastListWait (the rest follows with
// list_changed); for any other, as long as its own budget allows
// (naming.Startup: a client not in the table gives up after 5 s), and
// answered inside it (listWaitShare), but no longer than the start-up
// timeout.
func (o Options) listWait(clientName string) time.Duration {
	refetches, budget := naming.Startup(clientName)
	return o.listWaitFor(refetches, budget)
}

// listWaitFor is listWait for a client that fetches the lists again, or
// not, with its budget.
func (o Options) listWaitFor(refetches bool, budget time.Duration) time.Duration {
	switch {
	case refetches:
		return o.FastListWait
	case budget == 0:
		return o.StartupTimeout
	}
	return min(o.StartupTimeout, budget-budget/listWaitShare)
}

// listWaitShare: the first list of a client that lists once is answered
// when a listWaitShare-th of its budget is left (4 s of 5 s, 24 s of 30 s),
// room for the client's own clock starting before the request reached us.
const listWaitShare = 5

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
