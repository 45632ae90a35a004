package aggregator

// registry is an immutable snapshot of the tools and prompts of the running
// children, rebuilt whenever a child starts, changes a list or fails. List
// answers are prebuilt so that tools/list costs one lookup.
type registry struct {
	toolsResult   []byte // {"tools":[...]}
	tools         map[string]route
	promptsResult []byte // {"prompts":[...]}
	prompts       map[string]route
}

// route leads a prefixed name to its child and the child's own name.
type route struct {
	child   *child
	rawName []byte // the child's name token, as it wrote it
}

// rebuild makes a new registry from the running children in config order.
// On a name collision the first child in config order wins.
func (a *Aggregator) rebuild() {
	a.regMu.Lock()
	defer a.regMu.Unlock()
	r := &registry{tools: make(map[string]route), prompts: make(map[string]route)}
	var tools, prompts [][]byte
	for _, c := range a.children {
		ts, ps, running := c.named()
		if running {
			tools = a.register(r.tools, tools, c, "tool", ts)
			prompts = a.register(r.prompts, prompts, c, "prompt", ps)
		}
	}
	r.toolsResult = listResult("tools", tools)
	r.promptsResult = listResult("prompts", prompts)
	a.reg.Store(r)
}

// register adds a child's entries to index and their listed form to list.
// Called with regMu held.
func (a *Aggregator) register(index map[string]route, list [][]byte, c *child, kind string, entries []namedEntry) [][]byte {
	for _, e := range entries {
		name := c.key + a.opts.Separator + e.name
		if prev, taken := index[name]; taken {
			if !a.warned[kind+"\x00"+name] {
				a.warned[kind+"\x00"+name] = true
				a.log.Warnf("%s %q of server %q is hidden by the same name from server %q", kind, name, c.key, prev.child.key)
			}
			continue
		}
		index[name] = route{child: c, rawName: e.rawName}
		list = append(list, e.listed)
	}
	return list
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
	b = append(b, `":[`...)
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e...)
	}
	return append(b, "]}"...)
}
