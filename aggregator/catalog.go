package aggregator

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// catalog is the lists of names the client is served: every running
// server's tools and prompts under the names formed for the client (the
// registry, a snapshot built anew when a list changes, replaced whole and
// read without a lock), the names reloads keep (pinned), the compound
// tools, and the warnings already given. Its methods are in this file
// (the registry built from every server's lists, a name's owners, the
// names pinned, the warning of what was done to the client's names) and in
// compound.go (the compound tools). It knows the servers only as the list
// the session gives it; what each server's entry exposes is filter.go's,
// how names are formed package naming's.
type catalog struct {
	log      *Logger
	children func() []*child // the configured servers, in config order
	nameLen  int             // the length of the name the client gives the aggregator (Options.serverNameLen)

	reg      atomic.Pointer[registry]
	compound atomic.Pointer[[]config.Compound] // a reload may swap them
	// clientNaming is naming, for readers that must not wait for mu
	// (ownersOf, on the client's reader).
	clientNaming atomic.Pointer[naming.Scheme]

	mu         sync.Mutex      // serialises rebuilds; protects naming, clientName, warned and pinned
	naming     naming.Scheme   // how names are formed for this client
	clientName string          // the client's clientInfo.name
	warned     map[string]bool // warnings already given (warnOnce)
	pinned     pinnedNames     // names a reload keeps
}

// newCatalog is the catalog of a session not begun: names formed for a
// client not known, no server listed yet.
func newCatalog(opts *Options, children func() []*child) *catalog {
	n := opts.namingFor("")
	ct := &catalog{log: opts.Log, children: children, nameLen: opts.serverNameLen(), naming: n, warned: make(map[string]bool)}
	ct.clientNaming.Store(&n)
	ct.compound.Store(&opts.Compound)
	ct.reg.Store(&registry{naming: n, toolsResult: []byte(`{"tools":[]}`), promptsResult: []byte(`{"prompts":[]}`)})
	return ct
}

// registry is an immutable snapshot of the tools and prompts of the running
// children, rebuilt whenever a child starts, changes a list or fails. List
// answers are prebuilt so that tools/list costs one lookup.
type registry struct {
	naming        naming.Scheme
	toolsResult   []byte // {"tools":[...]}
	tools         map[string]route
	hiddenTools   map[string]string         // the name a hidden tool would have -> its server's key (filter.go)
	compounds     map[string]*compoundRoute // compound tools by name (compound.go)
	toolNames     []listedName              // every tool, in config order
	promptNames   []listedName              // every prompt, in config order
	promptsResult []byte                    // {"prompts":[...]}
	prompts       map[string]route
	// formerly are names listed from what a server listed when it last
	// ran (Memory) that it no longer lists, by "Tool\x00"+name or
	// "Prompt\x00"+name -> its key (formerlyListed).
	formerly map[string]string
}

// route leads a listed name to its child and the child's own name.
type route struct {
	child   *child
	rawName []byte // the child's name token, as it wrote it
	// remembered: listed from what the child listed when it last ran
	// (Memory), before it is up: a call waits for it, then is routed by
	// what it lists then.
	remembered bool
}

// compoundRoute is a compound tool's subtools as the registry found them.
type compoundRoute struct {
	name     string
	subtools map[[2]string]route // {server key, tool} -> its child and the child's name
	listed   []string            // "KEY/tool", in config order
}

// listedName is a tool's name as its child gave it and as it is listed.
type listedName struct {
	entry naming.Entry
	naming.Assigned
}

// pinnedNames are the names reloads found served, by entry, which keep
// them for the rest of the session in a collision with a name that came
// after (naming.Scheme.AssignKeeping); of two pinned, the one served more
// lately wins. Before any reload nothing is pinned, so that the names
// depend only on the config, not on which server started first.
type pinnedNames struct {
	naming         naming.Scheme // the naming they were formed with
	gen            int           // the pinning that was last
	tools, prompts map[naming.Entry]naming.Held
}

// registry is the registry now.
func (ct *catalog) registry() *registry { return ct.reg.Load() }

// rebuild makes a new registry from the running children in config order.
func (ct *catalog) rebuild() {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	r := &registry{naming: ct.naming, tools: make(map[string]route), prompts: make(map[string]route)}
	var tools, prompts []registered
	var hidden []naming.Entry
	by := offeredTools{}
	for _, c := range ct.children() {
		ts, ps, listed, remembered := c.named()
		if listed {
			v := c.toolView()
			by[c.key] = offered{c: c, tools: ts, view: v, remembered: remembered}
			ct.warnUnknownTools(c, v, ts)
			shown, hid := v.exposedTools(ts)
			for _, h := range hid {
				hidden = append(hidden, naming.Entry{Key: c.key, Name: h.name})
			}
			tools = appendRegistered(tools, c, shown, remembered)
			prompts = appendRegistered(prompts, c, ps, remembered)
		}
	}
	r.hiddenTools = hiddenNames(ct.naming, hidden)
	var toolList, promptList [][]byte
	pinned := ct.pinned
	if pinned.naming != ct.naming {
		pinned = pinnedNames{}
	}
	toolList, r.toolNames = ct.register(r.tools, "tool", tools, pinned.tools)
	toolList = ct.registerCompounds(r, toolList, by)
	promptList, r.promptNames = ct.register(r.prompts, "prompt", prompts, pinned.prompts)
	r.toolsResult = listResult("tools", toolList)
	r.promptsResult = listResult("prompts", promptList)
	r.formerly = formerlyListed(ct.reg.Load(), r)
	ct.reg.Store(r)
}

// register names the entries (naming.Scheme.AssignKeeping), enters them
// in index and returns their listed form and their names. Called with
// mu held.
func (ct *catalog) register(index map[string]route, kind string, entries []registered, held map[naming.Entry]naming.Held) ([][]byte, []listedName) {
	names := make([]naming.Entry, len(entries))
	for i, e := range entries {
		names[i] = naming.Entry{Key: e.child.key, Name: e.entry.name}
	}
	assigned := ct.naming.AssignKeeping(names, held)
	list := make([][]byte, 0, len(entries))
	listedNames := make([]listedName, len(entries))
	for i, e := range entries {
		listedNames[i] = listedName{names[i], assigned[i]}
		name := assigned[i].Name
		if assigned[i].Hidden {
			ct.warnHidden(kind, name, e.child.key, index)
			continue
		}
		if assigned[i].Change&naming.Disambiguated != 0 && !ct.naming.Strict && ct.naming.View == naming.KeepsAll { // the others have their own summary (reportNames)
			ct.warnOnce(kind+"\x00"+name, "%s %q of server %q is listed as %q: %q would be another server's name too", kind, e.entry.name, e.child.key, name, names[i].Key+ct.naming.Sep+names[i].Name)
		}
		index[name] = route{child: e.child, rawName: e.entry.rawName, remembered: e.remembered}
		listed := e.entry.listedAs(e.child.key+ct.naming.Sep, name)
		if assigned[i].Change&naming.Shortened != 0 {
			listed = withFullName(listed, names[i].Key+ct.naming.Sep+names[i].Name)
		}
		list = append(list, listed)
	}
	return list, listedNames
}

// warnHidden reports once an entry hidden by another of the same name: a
// server that lists a name twice (or, past all odds, two equal hashes).
func (ct *catalog) warnHidden(kind, name, key string, index map[string]route) {
	if owner := index[name].child.key; owner != key {
		ct.warnOnce(kind+"\x00"+name, "%s %q of server %q is hidden by the same name from server %q", kind, name, key, owner)
		return
	}
	ct.warnOnce(kind+"\x00"+name, "server %q lists the %s %q twice; the first is served", key, kind, name)
}

// warnUnknownTools warns once of each name the child's entry filters or
// renames that the child does not offer, with the closest name it does.
// Called with mu held.
func (ct *catalog) warnUnknownTools(c *child, v *toolView, tools []namedEntry) {
	refs := v.tools.Refs()
	if len(refs) == 0 {
		return
	}
	names := make([]string, len(tools))
	offered := make(map[string]bool, len(tools))
	for i, t := range tools {
		names[i] = t.name
		offered[t.name] = true
	}
	for _, r := range refs {
		if offered[r.Name] {
			continue
		}
		closest := "it offers no tools"
		if near := config.Closest(r.Name, names); near != "" {
			closest = fmt.Sprintf("the closest it offers is %q", near)
		}
		ct.warnOnce("filter\x00"+c.key+"\x00"+r.Where+"\x00"+r.Name,
			"server %q: %s: %q is not a tool of this server (%s; see README.md#choose-what-each-server-offers)", c.key, r.Where, r.Name, closest)
	}
}

// registered is one child's entry on its way into the registry.
type registered struct {
	child      *child
	entry      namedEntry
	remembered bool // listed from what the child listed when it last ran (Memory)
}

func appendRegistered(list []registered, c *child, entries []namedEntry, remembered bool) []registered {
	for _, e := range entries {
		list = append(list, registered{child: c, entry: e, remembered: remembered})
	}
	return list
}

// formerlyListed are the names listed from memory in before, or formerly
// in it, that after does not list: a call of one is told that its server
// no longer offers it (routeByName).
func formerlyListed(before, after *registry) map[string]string {
	formerly := make(map[string]string)
	for _, kind := range []struct {
		prefix        string
		before, after map[string]route
	}{{"Tool\x00", before.tools, after.tools}, {"Prompt\x00", before.prompts, after.prompts}} {
		for name, rt := range kind.before {
			if _, still := kind.after[name]; rt.remembered && !still {
				formerly[kind.prefix+name] = rt.child.key
			}
		}
	}
	for name, key := range before.formerly {
		kind, listed, _ := strings.Cut(name, "\x00")
		index := after.tools
		if kind == "Prompt" {
			index = after.prompts
		}
		if _, still := index[listed]; !still {
			formerly[name] = key
		}
	}
	return formerly
}

// listedAs is the entry as the child listed it, with name in place of the
// child's own name. When name is prefix and the child's name, the child's
// name keeps its escapes as the child wrote them.
func (e namedEntry) listedAs(prefix, name string) []byte {
	var token []byte
	if name == prefix+e.name && !e.renamed {
		token = jsonrpc.AppendString(nil, prefix)
		token = append(token[:len(token)-1], e.rawName[1:]...) // `"KEY:` + `name"`
	} else {
		token = jsonrpc.AppendString(nil, name)
	}
	b, err := jsonrpc.ReplaceMember(e.raw, "name", token)
	if err != nil { // the child's entry was parsed already: cannot happen
		return e.raw
	}
	return b
}
