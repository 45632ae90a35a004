package aggregator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Compound tools (the "coordinator" style, config.Compound): one tool
// that bundles tools of several servers. It is listed under its own name,
// with a description that lists each subtool, its description and the
// arguments it takes (from its server's schema), and an input schema
// whose server and tool are enums: {"server", "tool", "args"}. A call
// goes to that subtool of that server, under its own name, with args as
// its arguments, every other byte of params untouched; the server's
// answer comes back byte for byte. A subtool the compound tool does not
// list, or that its server's entry hides, is refused without reaching a
// server. The compound tools are the catalog's: these are its methods that
// list them, and their route (compoundRoute.route).

// setCompound makes cs the compound tools and reports whether they changed.
func (ct *catalog) setCompound(cs []config.Compound) bool {
	old := ct.compound.Load()
	if old != nil && compoundsEqual(*old, cs) {
		return false
	}
	ct.compound.Store(&cs)
	return true
}

func compoundsEqual(a, b []config.Compound) bool {
	return slices.EqualFunc(a, b, func(x, y config.Compound) bool {
		return x.Name == y.Name && x.Description == y.Description && x.Where == y.Where && slices.Equal(x.Subtools, y.Subtools)
	})
}

// compoundOwners are the servers a call of the compound tool name needs:
// the one its arguments name, when the tool bundles it, else every server
// it bundles; false when name is no compound tool's (of tools/call).
func (ct *catalog) compoundOwners(c *call, name string) ([]*child, bool) {
	cs := ct.compound.Load()
	if cs == nil || c.method != "tools/call" {
		return nil, false
	}
	i := slices.IndexFunc(*cs, func(comp config.Compound) bool { return comp.Name == name })
	if i < 0 {
		return nil, false
	}
	bundles := func(key string) bool {
		return slices.ContainsFunc((*cs)[i].Subtools, func(st config.Subtool) bool { return st.Server == key })
	}
	args, _ := jsonrpc.Member(c.params, "arguments")
	named, _ := jsonrpc.StringMember(args, "server")
	if named != "" && !bundles(named) {
		return nil, true // refused at once, when routed: no server needed
	}
	if bundles(named) {
		for _, ch := range ct.children() {
			if ch.key == named {
				return []*child{ch}, true
			}
		}
	}
	var owners []*child
	for _, ch := range ct.children() {
		if bundles(ch.key) {
			owners = append(owners, ch)
		}
	}
	return owners, true
}

// offeredTools are the running children's own tools, by key, for the
// compound tools; only the tools their entries expose.
type offeredTools map[string]offered

type offered struct {
	c          *child
	tools      []namedEntry // the child's own entries
	view       *toolView
	remembered bool // its entries are what it listed when it last ran (Memory)
}

// registerCompounds lists the compound tools after the others and enters
// them in r. Called with mu held.
func (ct *catalog) registerCompounds(r *registry, list [][]byte, by offeredTools) [][]byte {
	cs := ct.compound.Load()
	if cs == nil || len(*cs) == 0 {
		return list
	}
	r.compounds = make(map[string]*compoundRoute, len(*cs))
	for _, comp := range *cs {
		if _, taken := r.tools[comp.Name]; taken {
			ct.warnOnce("compound\x00"+comp.Name, "%s: compound tool %q has the name of another tool: left out", comp.Where, comp.Name)
			continue
		}
		cr := &compoundRoute{name: comp.Name, subtools: map[[2]string]route{}}
		var lines []string
		for _, st := range comp.Subtools {
			e, o, ok := ct.subtool(st, by)
			if !ok {
				continue
			}
			cr.subtools[[2]string{st.Server, st.Tool}] = route{child: o.c, rawName: e.rawName, remembered: o.remembered}
			cr.listed = append(cr.listed, st.Server+"/"+st.Tool)
			lines = append(lines, subtoolLine(st, e))
		}
		if len(cr.listed) == 0 {
			continue // none of its servers runs (yet)
		}
		r.compounds[comp.Name] = cr
		list = append(list, compoundEntry(comp, cr, lines))
	}
	return list
}

// subtool finds the server's entry of a subtool, warning once when the
// server does not offer it or its config entry hides it.
func (ct *catalog) subtool(st config.Subtool, by offeredTools) (namedEntry, offered, bool) {
	o, running := by[st.Server]
	if !running {
		return namedEntry{}, o, false
	}
	i := slices.IndexFunc(o.tools, func(e namedEntry) bool { return e.name == st.Tool })
	if i < 0 {
		names := make([]string, len(o.tools))
		for j, e := range o.tools {
			names[j] = e.name
		}
		ct.warnOnce("subtool\x00"+st.Where+"\x00"+st.Tool, "server %q: %s: %q is not a tool of this server (the closest it offers is %q; see README.md#choose-what-each-server-offers)",
			st.Server, st.Where, st.Tool, config.Closest(st.Tool, names))
		return namedEntry{}, o, false
	}
	if _, ok := o.view.expose(st.Tool); !ok {
		ct.warnOnce("subtool\x00"+st.Where+"\x00"+st.Tool, "server %q: %s: %q is hidden by the server's entry, which wins: not offered (see README.md#choose-what-each-server-offers)", st.Server, st.Where, st.Tool)
		return namedEntry{}, o, false
	}
	return o.tools[i], o, true
}

// subtoolLine describes a subtool for the model: its server and name, its
// description (the config's, else its server's), and its arguments from
// its server's input schema.
func subtoolLine(st config.Subtool, e namedEntry) string {
	desc := st.Description
	if desc == "" {
		desc, _ = jsonrpc.StringMember(e.raw, "description")
	}
	line := fmt.Sprintf(`- server %q, tool %q: %s`, st.Server, st.Tool, strings.TrimSpace(desc))
	if args := describeArgs(e.raw); args != "" {
		line += "\n  args: " + args
	}
	return line
}

// describeArgs lists the properties of a tool's input schema: "path
// (string, required): the file to read; depth (number)".
func describeArgs(entry []byte) string {
	var schema struct {
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	raw, ok := jsonrpc.Member(entry, "inputSchema")
	if !ok || json.Unmarshal(raw, &schema) != nil {
		return ""
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var parts []string
	for _, n := range names {
		p := schema.Properties[n]
		kind := fmt.Sprint(p.Type)
		if p.Type == nil {
			kind = "any"
		}
		if slices.Contains(schema.Required, n) {
			kind += ", required"
		}
		part := fmt.Sprintf("%s (%s)", n, kind)
		if p.Description != "" {
			part += ": " + p.Description
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, "; ")
}

// compoundEntry is the listed tool: its name, a description that lists
// its subtools, and a schema a model fills right the first time.
func compoundEntry(comp config.Compound, cr *compoundRoute, lines []string) []byte {
	var servers, tools []string
	for _, l := range cr.listed {
		s, t, _ := strings.Cut(l, "/")
		if !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	desc := strings.TrimSpace(comp.Description)
	if desc != "" {
		desc += "\n\n"
	}
	desc += `Call one of these tools with {"server": ..., "tool": ..., "args": {...}}, args being that tool's arguments:` + "\n" + strings.Join(lines, "\n")
	type str struct {
		Type        string   `json:"type"`
		Enum        []string `json:"enum"`
		Description string   `json:"description"`
	}
	entry := struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
	}{comp.Name, desc, map[string]any{
		"type": "object",
		"properties": map[string]any{
			"server": str{"string", servers, "The server of the tool to call, as this tool's description lists it"},
			"tool":   str{"string", tools, "The tool to call, as this tool's description lists it"},
			"args":   map[string]any{"type": "object", "description": "The arguments of that tool, as this tool's description lists them ({} for none)"},
		},
		"required": []string{"server", "tool", "args"},
	}}
	b, _ := json.Marshal(entry) // strings and maps of strings: cannot fail
	return b
}

// route routes a call of a compound tool to the subtool its
// arguments name, or refuses it.
func (cr *compoundRoute) route(c *call) (target, []byte) {
	invalid := func(msg string) (target, []byte) {
		return target{}, errorLine(c.id, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: %s: %s (call one of %s)", cr.name, msg, strings.Join(cr.listed, ", ")))
	}
	args, _ := jsonrpc.Member(c.params, "arguments")
	server, _ := jsonrpc.StringMember(args, "server")
	tool, _ := jsonrpc.StringMember(args, "tool")
	r, ok := cr.subtools[[2]string{server, tool}]
	if !ok {
		return invalid(fmt.Sprintf("server %q, tool %q is not one of its tools", server, tool))
	}
	if r.remembered { // its server did not come up
		return target{}, errorLine(c.id, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Tool not found: %s: server %q %s (the aggregator's log says why)", cr.name, server, r.child.downState()))
	}
	inner, ok := jsonrpc.Member(args, "args")
	if !ok || string(inner) == "null" {
		inner = []byte("{}")
	}
	params, err := jsonrpc.ReplaceMember(c.params, "name", r.rawName)
	if err == nil {
		params, err = jsonrpc.ReplaceMember(params, "arguments", inner)
	}
	if err != nil {
		return invalid(err.Error())
	}
	return to(r.child, params), nil
}

// checkedCompounds says what each compound tool bundles, for --check.
func (ct *catalog) checkedCompounds() []string {
	r := ct.reg.Load()
	var out []string
	if cs := ct.compound.Load(); cs != nil {
		for _, comp := range *cs {
			if cr := r.compounds[comp.Name]; cr != nil {
				out = append(out, fmt.Sprintf("%s: bundles %s", comp.Name, strings.Join(cr.listed, ", ")))
			} else {
				out = append(out, fmt.Sprintf("%s: bundles none of its tools (its servers are not running or do not offer them)", comp.Name))
			}
		}
	}
	return out
}
