package aggregator

import "slices"

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
		c.mu.Lock()
		if c.state == stateRunning {
			tools = a.register(r.tools, tools, c, "tool", c.tools)
			prompts = a.register(r.prompts, prompts, c, "prompt", c.prompts)
		}
		c.mu.Unlock()
	}
	r.toolsResult = listResult("tools", tools)
	r.promptsResult = listResult("prompts", prompts)
	a.reg.Store(r)
}

// register adds a child's entries to index and their listed form to list.
// Called with regMu and c.mu held.
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

// notifyListChanged tells the client that lists changed.
func (a *Aggregator) notifyListChanged(tools, prompts, resources bool) {
	if tools {
		a.tellClient("notifications/tools/list_changed")
	}
	if prompts {
		a.tellClient("notifications/prompts/list_changed")
	}
	if resources {
		a.tellClient("notifications/resources/list_changed")
	}
}

// tellClient sends a parameterless notification to the client, or, before
// the client has sent notifications/initialized, keeps it (once) until then:
// a child whose list changes while it starts is announced as it would be on
// a direct connection.
func (a *Aggregator) tellClient(method string) {
	up := a.upConn()
	if up == nil {
		return
	}
	a.mu.Lock()
	if !a.clientReady {
		if !slices.Contains(a.pendingNotes, method) {
			a.pendingNotes = append(a.pendingNotes, method)
		}
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	up.Notify(method, nil)
}

// clientIsInitialized records the client's notifications/initialized and
// sends what was kept for it: the children's held messages, in order, then
// the list changes.
func (a *Aggregator) clientIsInitialized() {
	for {
		a.mu.Lock()
		held := a.held
		a.held = nil
		if len(held) == 0 {
			// Only now: a message arriving while the held ones were
			// dispatched was held too, so the order is kept.
			a.clientReady = true
			pending := a.pendingNotes
			a.pendingNotes = nil
			a.mu.Unlock()
			for _, method := range pending {
				a.upConn().Notify(method, nil)
			}
			return
		}
		a.mu.Unlock()
		for _, h := range held {
			h.child.dispatch(h.m)
		}
	}
}
