package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
)

// This file is the registry's state: which listed name leads to which
// server and name, and the names reloads keep. catalog.go builds it.

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

// listed reports whether a call routed by name names a tool or prompt
// that a running server listed: a call to a server that is up is served
// without waiting for the others to start. (What is not listed yet waits,
// and is then looked up again.)
func (a *Aggregator) listed(c *call) bool {
	name, ok := c.name()
	if !ok {
		return false
	}
	r := a.reg.Load()
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

// warnOnce logs a warning once per what. Called with regMu held.
func (a *Aggregator) warnOnce(what, format string, args ...any) {
	if a.warned[what] {
		return
	}
	a.warned[what] = true
	a.log.Warnf(format, args...)
}
