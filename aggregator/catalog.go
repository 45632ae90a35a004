package aggregator

import (
	"fmt"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file builds the registry (registry.go) from every server's lists:
// the names each server's entry exposes (filter.go), its compound tools
// (compound.go), and the names formed for the client (internal/naming),
// with a warning for what was hidden or renamed.

// rebuild makes a new registry from the running children in config order.
func (a *Aggregator) rebuild() {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	r := &registry{naming: a.naming, tools: make(map[string]route), prompts: make(map[string]route)}
	var tools, prompts []registered
	var hidden []naming.Entry
	by := offeredTools{}
	for _, c := range a.children() {
		ts, ps, listed, remembered := c.named()
		if listed {
			v := c.toolView()
			by[c.key] = offered{c: c, tools: ts, view: v, remembered: remembered}
			a.warnUnknownTools(c, v, ts)
			shown, hid := v.exposedTools(ts)
			for _, h := range hid {
				hidden = append(hidden, naming.Entry{Key: c.key, Name: h.name})
			}
			tools = appendRegistered(tools, c, shown, remembered)
			prompts = appendRegistered(prompts, c, ps, remembered)
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
	r.formerly = formerlyListed(a.reg.Load(), r)
	a.reg.Store(r)
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
		index[name] = route{child: e.child, rawName: e.entry.rawName, remembered: e.remembered}
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

// warnUnknownTools warns once of each name the child's entry filters or
// renames that the child does not offer, with the closest name it does.
// Called with regMu held.
func (a *Aggregator) warnUnknownTools(c *child, v *toolView, tools []namedEntry) {
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
		a.warnOnce("filter\x00"+c.key+"\x00"+r.Where+"\x00"+r.Name,
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
