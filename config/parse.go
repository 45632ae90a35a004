package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// parser checks the members of the top-level object and collects every
// problem and warning it finds.
type parser struct {
	lookup   func(string) (string, bool)
	vars     []EnvVar // the variables expanded in the server being read (Server.Vars)
	sep      string
	problems []Problem
	warnings []Problem
	skipped  []Skipped
	bundles  []Compound
}

func (p *parser) problem(where, format string, args ...any) {
	p.problems = append(p.problems, Problem{Where: where, Msg: fmt.Sprintf(format, args...)})
}

// parse returns the enabled servers of the top-level object.
func (p *parser) parse(top []member) []Server {
	var raw json.RawMessage
	found := false
	for _, m := range top {
		if m.name == "tools" {
			p.bundles = p.compounds(m.value)
		}
		if m.name != "mcpServers" {
			continue
		}
		if found {
			p.problem("mcpServers", "duplicate field")
			continue
		}
		found, raw = true, m.value
	}
	if !found {
		p.problem("mcpServers", "missing%s", nearKey(top))
		return nil
	}
	entries, ok := objectMembers(raw)
	if !ok {
		p.problem("mcpServers", "must be an object")
		return nil
	}
	servers := []Server{}
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		at := child("mcpServers", e.name)
		if seen[e.name] {
			p.problem(at, "duplicate server key")
			continue
		}
		seen[e.name] = true
		if s, ok := p.server(at, e.name, e.value); ok {
			servers = append(servers, s)
		}
	}
	p.checkCompounds(p.bundles, servers)
	return servers
}

// nearKey suggests the top-level member that was probably meant to be
// mcpServers: ` (found "mcpServer": a typo?)`, or "".
func nearKey(top []member) string {
	for _, m := range top {
		if Nearest(m.name, []string{"mcpServers"}) != "" {
			return fmt.Sprintf(" (found %q: a typo?)", m.name)
		}
	}
	return ""
}

// serverFields are the fields of a server entry that this package reads,
// besides the filter fields of toolFields.
var serverFields = map[string]bool{
	"command": true, "args": true, "env": true, "disabled": true, "type": true, "url": true, "cwd": true,
}

// remoteTypes are the values of "type" of a remote server (Claude Code's
// .mcp.json, VS Code, Cursor), which is skipped.
var remoteTypes = map[string]bool{
	"http": true, "sse": true, "streamable-http": true, "streamableHttp": true, "ws": true, "websocket": true,
}

// server checks the entry at (JSON path) with the given key. It reports
// false if the server is disabled or has problems.
func (p *parser) server(at, key string, raw json.RawMessage) (Server, bool) {
	members, ok := objectMembers(raw)
	if !ok {
		p.problem(at, "must be an object")
		return Server{}, false
	}
	// The first copy of each field this package reads, in file order.
	var fields []member
	get := map[string]json.RawMessage{}
	var dups []string
	for _, m := range members {
		if _, filter := toolFields[m.name]; !serverFields[m.name] && !filter {
			continue
		}
		if _, dup := get[m.name]; dup {
			dups = append(dups, m.name)
			continue
		}
		get[m.name] = m.value
		fields = append(fields, m)
	}

	if d, ok := get["disabled"]; ok && kind(d) == 't' {
		return Server{}, false
	}
	nproblems := len(p.problems)
	switch {
	case key == "":
		p.problem(at, "server key must not be empty")
	case p.sep != "" && strings.Contains(key, p.sep):
		p.problem(at, "server key must not contain the separator %q (it joins server key and tool name)", p.sep)
	case strings.ContainsFunc(key, func(r rune) bool { return !isKeyChar(r) }):
		p.warnings = append(p.warnings, Problem{Where: at,
			Msg: `server key has characters other than A-Z, a-z, 0-9, "_" and "-": clients with strict tool names (Claude Desktop) see each as "_"`})
	}
	if d, ok := get["disabled"]; ok && kind(d) != 'f' && kind(d) != 'n' {
		p.problem(child(at, "disabled"), "must be a boolean")
	}
	for _, name := range dups {
		p.problem(child(at, name), "duplicate field")
	}
	if p.remote(at, key, get) {
		return Server{}, false
	}

	s := Server{Key: key, Args: []string{}}
	p.vars = nil
	for _, f := range fields {
		switch f.name {
		case "command":
			s.Command = p.command(child(at, "command"), f.value)
		case "args":
			p.args(&s, child(at, "args"), f.value)
		case "env":
			p.env(&s, child(at, "env"), f.value)
		case "cwd":
			s.Dir = p.dir(child(at, "cwd"), f.value)
		default:
			if _, filter := toolFields[f.name]; filter {
				p.toolList(&s, child(at, f.name), f.name, f.value)
			}
		}
	}
	s.Vars = p.vars
	p.checkExposed(s)
	if _, ok := get["command"]; !ok {
		p.problem(child(at, "command"), "must be a non-empty string")
	}
	return s, len(p.problems) == nproblems
}

// remote reports whether the entry is a remote server ("type" "http",
// "sse", ..., or a "url"), which is skipped with a warning and shown by
// --check; a "type" that is neither stdio nor remote is a problem.
// A url beside "type": "stdio" is ignored.
func (p *parser) remote(at, key string, get map[string]json.RawMessage) bool {
	why, stdio := "", false
	if t, ok := get["type"]; ok && kind(t) != 'n' {
		s, isString := asString(t)
		switch {
		case !isString:
			p.problem(child(at, "type"), "must be a string")
		case remoteTypes[s]:
			why = fmt.Sprintf("a remote server (\"type\": %q)", s)
		case s == "stdio":
			stdio = true
		default:
			p.problem(child(at, "type"), "unknown server type %q: \"stdio\", or a remote type (\"http\", \"sse\"), which is skipped", s)
		}
	}
	// A url of an entry that says it is stdio, or an empty one, is
	// ignored.
	if u, ok := get["url"]; ok && kind(u) != 'n' && string(u) != `""` && why == "" && !stdio {
		why = "a remote server (it has a \"url\")"
	}
	if why == "" {
		return false
	}
	p.skipped = append(p.skipped, Skipped{Key: key, Why: why})
	p.warnings = append(p.warnings, Problem{Where: at, Msg: "skipped: " + why + "; only stdio servers are served, the others are"})
	return true
}

// dir reads "cwd", the directory the server runs in, expanded as args are.
func (p *parser) dir(at string, raw json.RawMessage) string {
	if kind(raw) == 'n' {
		return ""
	}
	d, ok := asString(raw)
	if !ok {
		p.problem(at, "must be a string (a directory)")
		return ""
	}
	d, _ = p.expand(at, d)
	return d
}

func (p *parser) command(at string, raw json.RawMessage) string {
	cmd, ok := asString(raw)
	if !ok || cmd == "" {
		p.problem(at, "must be a non-empty string")
		return ""
	}
	cmd, ok = p.expand(at, cmd)
	if ok && cmd == "" {
		p.problem(at, "is empty after expansion")
	}
	return cmd
}

func (p *parser) args(s *Server, at string, raw json.RawMessage) {
	if kind(raw) == 'n' {
		return
	}
	var elems []json.RawMessage
	if kind(raw) != '[' || json.Unmarshal(raw, &elems) != nil {
		p.problem(at, "must be an array of strings")
		return
	}
	for i, e := range elems {
		where := fmt.Sprintf("%s[%d]", at, i)
		arg, ok := asString(e)
		if !ok {
			p.problem(where, "must be a string")
			continue
		}
		arg, _ = p.expand(where, arg)
		s.Args = append(s.Args, arg)
	}
}

func (p *parser) env(s *Server, at string, raw json.RawMessage) {
	if kind(raw) == 'n' {
		return
	}
	vars, ok := objectMembers(raw)
	if !ok {
		p.problem(at, "must be an object")
		return
	}
	seen := make(map[string]bool, len(vars))
	for _, v := range vars {
		where := child(at, v.name)
		switch {
		case v.name == "":
			p.problem(where, "environment variable name must not be empty")
			continue
		case strings.ContainsAny(v.name, "=\x00"):
			p.problem(where, "environment variable name must not contain \"=\" or NUL")
			continue
		case seen[v.name]:
			p.problem(where, "duplicate variable")
			continue
		}
		seen[v.name] = true
		val, ok := asString(v.value)
		if !ok {
			p.problem(where, "must be a string")
			continue
		}
		val, _ = p.expand(where, val)
		s.Env = append(s.Env, EnvVar{Name: v.name, Value: val})
	}
}

// expand expands s and reports each of its problems at where; the
// variables it expands are noted in p.vars.
func (p *parser) expand(where, s string) (string, bool) {
	out, msgs := expand(s, func(name string) (string, bool) {
		v, ok := p.lookup(name)
		if v != "" && !slices.Contains(p.vars, EnvVar{name, v}) {
			p.vars = append(p.vars, EnvVar{name, v})
		}
		return v, ok
	})
	for _, m := range msgs {
		p.problems = append(p.problems, Problem{Where: where, Msg: m})
	}
	return out, len(msgs) == 0
}

// A member is one name and value of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers returns the members of the JSON object raw in their order,
// or false if raw is not an object. raw must be valid JSON.
func objectMembers(raw json.RawMessage) ([]member, bool) {
	if kind(raw) != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	var ms []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, ok := tok.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{name, v})
	}
	return ms, true
}

// kind returns the first byte of the JSON value raw: '{', '[', '"', 't',
// 'f', 'n', or a digit or '-' for a number; 0 if raw is empty.
func kind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// asString returns the JSON string raw, or false if raw is not a string.
func asString(raw json.RawMessage) (string, bool) {
	var s string
	if kind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
