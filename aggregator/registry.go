package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

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
}

// route leads a listed name to its child and the child's own name.
type route struct {
	child   *child
	rawName []byte // the child's name token, as it wrote it
}

// listedName is a tool's name as its child gave it and as it is listed.
type listedName struct {
	entry naming.Entry
	naming.Assigned
}

// rebuild makes a new registry from the running children in config order.
func (a *Aggregator) rebuild() {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	r := &registry{naming: a.naming, tools: make(map[string]route), prompts: make(map[string]route)}
	var tools, prompts []registered
	var hidden []naming.Entry
	by := offeredTools{}
	for _, c := range a.children() {
		ts, ps, running := c.named()
		if running {
			v := c.toolView()
			by[c.key] = offered{c: c, tools: ts, view: v}
			a.warnUnknownTools(c, v, ts)
			shown, hid := v.exposedTools(ts)
			for _, h := range hid {
				hidden = append(hidden, naming.Entry{Key: c.key, Name: h.name})
			}
			tools = appendRegistered(tools, c, shown)
			prompts = appendRegistered(prompts, c, ps)
		}
	}
	r.hiddenTools = hiddenNames(a.naming, hidden)
	var toolList, promptList [][]byte
	pinned := a.pinned
	if pinned.naming != a.naming {
		pinned = pinnedNames{}
	}
	toolList, r.toolNames = a.register(r.tools, "tool", tools, pinned.tools)
	toolList = a.registerCompounds(r, toolList, by)
	promptList, r.promptNames = a.register(r.prompts, "prompt", prompts, pinned.prompts)
	r.toolsResult = listResult("tools", toolList)
	r.promptsResult = listResult("prompts", promptList)
	a.reg.Store(r)
}

// registered is one child's entry on its way into the registry.
type registered struct {
	child *child
	entry namedEntry
}

func appendRegistered(list []registered, c *child, entries []namedEntry) []registered {
	for _, e := range entries {
		list = append(list, registered{child: c, entry: e})
	}
	return list
}

// register names the entries (naming.Scheme.AssignKeeping), enters them
// in index and returns their listed form and their names. Called with
// regMu held.
func (a *Aggregator) register(index map[string]route, kind string, entries []registered, held map[naming.Entry]naming.Held) ([][]byte, []listedName) {
	names := make([]naming.Entry, len(entries))
	for i, e := range entries {
		names[i] = naming.Entry{Key: e.child.key, Name: e.entry.name}
	}
	assigned := a.naming.AssignKeeping(names, held)
	list := make([][]byte, 0, len(entries))
	listedNames := make([]listedName, len(entries))
	for i, e := range entries {
		listedNames[i] = listedName{names[i], assigned[i]}
		name := assigned[i].Name
		if assigned[i].Hidden {
			a.warnHidden(kind, name, e.child.key, index)
			continue
		}
		if assigned[i].Change&naming.Disambiguated != 0 && !a.naming.Strict && a.naming.View == naming.KeepsAll { // the others have their own summary (reportNames)
			a.warnOnce(kind+"\x00"+name, "%s %q of server %q is listed as %q: %q would be another server's name too", kind, e.entry.name, e.child.key, name, names[i].Key+a.naming.Sep+names[i].Name)
		}
		index[name] = route{child: e.child, rawName: e.entry.rawName}
		listed := e.entry.listedAs(e.child.key+a.naming.Sep, name)
		if assigned[i].Change&naming.Shortened != 0 {
			listed = withFullName(listed, names[i].Key+a.naming.Sep+names[i].Name)
		}
		list = append(list, listed)
	}
	return list, listedNames
}

// warnHidden reports once an entry hidden by another of the same name: a
// server that lists a name twice (or, past all odds, two equal hashes).
func (a *Aggregator) warnHidden(kind, name, key string, index map[string]route) {
	if owner := index[name].child.key; owner != key {
		a.warnOnce(kind+"\x00"+name, "%s %q of server %q is hidden by the same name from server %q", kind, name, key, owner)
		return
	}
	a.warnOnce(kind+"\x00"+name, "server %q lists the %s %q twice; the first is served", key, kind, name)
}

// warnOnce logs a warning once per what. Called with regMu held.
func (a *Aggregator) warnOnce(what, format string, args ...any) {
	if a.warned[what] {
		return
	}
	a.warned[what] = true
	a.log.Warnf(format, args...)
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

// withFullName is a listed entry whose name was shortened, with "(FULL) "
// at the start of its description (or as its
// description), so that the model still knows which tool it is: FULL is
// KEY+separator+name as the server gave it.
func withFullName(entry []byte, full string) []byte {
	text := "(" + full + ")"
	if desc, _ := jsonrpc.StringMember(entry, "description"); desc != "" {
		text += " " + desc
	}
	b, err := jsonrpc.ReplaceMember(entry, "description", jsonrpc.AppendString(nil, text))
	if err != nil { // the child's entry was parsed already: cannot happen
		return entry
	}
	return b
}

// listResult builds {"FIELD":[e1,e2,...]} from raw entries.
func listResult(field string, entries [][]byte) []byte {
	n := len(field) + 8
	for _, e := range entries {
		n += len(e) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = appendArray(b, entries)
	return append(b, '}')
}

// jsonArray is [e1,e2,...] of raw entries.
func jsonArray(entries [][]byte) []byte { return appendArray(nil, entries) }

func appendArray(b []byte, entries [][]byte) []byte {
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, ']')
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

// pinNames pins the names served now, adding to those pinned before (a
// server that comes back gets its name back, unless another took it
// meanwhile).
func (a *Aggregator) pinNames() {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	r := a.reg.Load()
	if a.pinned.naming != r.naming {
		a.pinned = pinnedNames{naming: r.naming}
	}
	a.pinned.gen++
	a.pinned.tools = pin(a.pinned.tools, r.toolNames, a.pinned.gen)
	a.pinned.prompts = pin(a.pinned.prompts, r.promptNames, a.pinned.gen)
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
