package config

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Compound is a tool of the "coordinator" style (the top-level "tools"
// object): one tool that bundles tools of several servers, called with
// {"server": KEY, "tool": NAME, "args": {...}}:
//
//	"tools": {"files": {"description": "...",
//	  "subtools": {"fs": {"tools": [{"name": "read", "description": "..."}]}}}}
type Compound struct {
	Name        string
	Description string
	Where       string // tools.files
	Subtools    []Subtool
}

// Subtool is one tool a Compound bundles: the server's key and the
// server's own tool name.
type Subtool struct {
	Server, Tool string
	Description  string // "": the server's own
	Where        string // tools.files.subtools.fs.tools[0]
}

// compoundName is what a compound tool may be named: every client takes
// it as is, and it holds no separator of a prefixed name.
var compoundName = regexp.MustCompile(`^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$`)

// compounds reads the top-level "tools" object.
func (p *parser) compounds(raw json.RawMessage) []Compound {
	if kind(raw) == 'n' {
		return nil
	}
	members, ok := objectMembers(raw)
	if !ok {
		p.problem("tools", "must be an object of compound tools: {\"NAME\": {\"description\", \"subtools\"}}")
		return nil
	}
	var out []Compound
	for _, m := range members {
		at := child("tools", m.name)
		if !compoundName.MatchString(m.name) || len(m.name) > 64 || p.sep != "" && strings.Contains(m.name, p.sep) {
			p.problem(at, "a compound tool's name must be letters, digits, - and single _ (at most 64)")
			continue
		}
		if c, ok := p.compound(at, m.name, m.value); ok {
			out = append(out, c)
		}
	}
	return out
}

// compound reads one compound tool.
func (p *parser) compound(at, name string, raw json.RawMessage) (Compound, bool) {
	fields, ok := objectMembers(raw)
	if !ok {
		p.problem(at, "must be an object with a description and subtools")
		return Compound{}, false
	}
	n := len(p.problems)
	c := Compound{Name: name, Where: at}
	for _, f := range fields {
		switch f.name {
		case "description":
			if c.Description, ok = asString(f.value); !ok {
				p.problem(child(at, "description"), "must be a string")
			}
		case "subtools":
			c.Subtools = p.subtools(child(at, "subtools"), f.value)
		}
	}
	if len(c.Subtools) == 0 && len(p.problems) == n {
		p.problem(child(at, "subtools"), "missing: the tools it bundles, {\"KEY\": {\"tools\": [{\"name\": ...}]}}")
	}
	return c, len(p.problems) == n
}

// subtools reads {"KEY": {"tools": [{"name", "description"}, ...]}}.
func (p *parser) subtools(at string, raw json.RawMessage) []Subtool {
	servers, ok := objectMembers(raw)
	if !ok {
		p.problem(at, "must be an object: {\"KEY\": {\"tools\": [{\"name\": ...}]}}")
		return nil
	}
	var out []Subtool
	for _, s := range servers {
		sat := child(at, s.name)
		members, ok := objectMembers(s.value)
		var tools json.RawMessage
		for _, m := range members {
			if m.name == "tools" {
				tools = m.value
			}
		}
		var elems []json.RawMessage
		if !ok || kind(tools) != '[' || json.Unmarshal(tools, &elems) != nil {
			p.problem(child(sat, "tools"), "must be an array of {\"name\", \"description\"}")
			continue
		}
		for i, e := range elems {
			where := fmt.Sprintf("%s[%d]", child(sat, "tools"), i)
			st := Subtool{Server: s.name, Where: where}
			name, isString := asString(e) // a name alone is taken too
			if !isString {
				fields, _ := objectMembers(e)
				for _, f := range fields {
					switch f.name {
					case "name":
						name, _ = asString(f.value)
					case "description":
						if st.Description, isString = asString(f.value); !isString {
							p.problem(child(where, "description"), "must be a string")
						}
					}
				}
			}
			if name == "" {
				p.problem(child(where, "name"), "must be a non-empty string: the server's own tool name")
				continue
			}
			st.Tool = name
			out = append(out, st)
		}
	}
	return out
}

// checkCompounds warns of subtools of servers the config does not run.
func (p *parser) checkCompounds(cs []Compound, servers []Server) {
	keys := map[string]bool{}
	for _, s := range servers {
		keys[s.Key] = true
	}
	for _, c := range cs {
		for _, st := range c.Subtools {
			if !keys[st.Server] {
				p.warnings = append(p.warnings, Problem{Where: st.Where, Msg: fmt.Sprintf("server %q is not one the config runs: this subtool is not offered", st.Server)})
			}
		}
	}
}
