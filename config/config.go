// Package config reads the Claude-Desktop-style configuration file, the one
// with an "mcpServers" object of child servers, checks it and expands the
// environment variables in it.
//
// A file looks like this:
//
//	{
//	  "mcpServers": {
//	    "github": {
//	      "command": "npx",
//	      "args": ["-y", "@modelcontextprotocol/server-github"],
//	      "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}
//	    },
//	    "old": {"command": "old-server", "disabled": true}
//	  }
//	}
//
// Servers keep the order of the file. Disabled servers are left out without
// further checks. Only stdio servers are served: a remote entry (a "url",
// or a "type" such as "http") is skipped with a warning. "cwd" is the
// directory a server runs in; the tool filters of other clients' files
// (includeTools, excludeTools, ...) say which tools are exposed: see
// [Tools]. Fields this package does not use (autoApprove, timeout, ...)
// are ignored.
//
// Parse reports every problem of a file at once, as an *Error whose Problems
// name the place of each one with a JSON path such as
// mcpServers.github.env.GITHUB_TOKEN. The expansion rules ($NAME, ${NAME},
// ${NAME:-default}, $$) are told at expand, in expand.go.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Options adjusts Load and Parse.
type Options struct {
	// Separator joins a server key and a tool name; server keys must not
	// contain it. "" means no check.
	Separator string
	// LookupEnv looks up the environment variables named in the file.
	// nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Config is a parsed and checked configuration file.
type Config struct {
	Path     string     // as given to Load or Parse
	Servers  []Server   // in file order, disabled and remote servers left out; never nil
	Skipped  []Skipped  // remote servers, left out with a warning
	Compound []Compound // the top-level "tools": tools that bundle servers' tools
	Warnings []string   // non-fatal remarks, each naming the file and a JSON path
}

// Skipped is a server entry left out because it is not a stdio server.
type Skipped struct {
	Key string
	Why string // "a remote server (\"type\": \"http\")"
}

// Server is one enabled stdio server of the file, with its strings expanded.
type Server struct {
	Key     string
	Command string   // never empty
	Args    []string // never nil after Load or Parse
	Env     []EnvVar // in file order
	Dir     string   // "cwd": the directory it runs in; "": the aggregator's
	Tools   Tools    // which of its tools are exposed, under which names
	// Vars are the environment variables expanded in its command, args,
	// env and cwd, with their values, in the order first used: with Env,
	// the values the aggregator's own messages must not show (the names
	// stand in for them).
	Vars []EnvVar
}

// EnvVar is one entry of a server's "env" object; Value is expanded.
type EnvVar struct{ Name, Value string }

// Load reads the file at path and parses it with Parse.
func Load(path string, opts Options) (*Config, error) {
	// Only a regular file: opening a named pipe would wait for a writer,
	// and a device could be read without end.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("config: %s: not a regular file (%s): give the path of the JSON file itself", path, fileKind(fi.Mode()))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, opts)
}

// fileKind names what a file that is not a regular one is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// Parse parses the contents of a configuration file; path is used in
// messages only. A leading UTF-8 byte order mark is skipped. A JSON syntax
// error (trailing data included) is returned with the 1-based line and
// column (counted in bytes) where it was found, wrapping the
// *json.SyntaxError. A top-level value that is not an object is reported
// with its line and column too. Every other problem is collected, and all of
// them are returned together as an *Error.
func Parse(path string, data []byte, opts Options) (*Config, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	var top json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var serr *json.SyntaxError
		if errors.As(err, &serr) {
			line, col := syntaxPosition(data, serr)
			return nil, fmt.Errorf("config: %s:%d:%d: %w", path, line, col, serr)
		}
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	members, ok := objectMembers(top)
	if !ok {
		line, col := position(data, len(data)-len(bytes.TrimLeft(data, " \t\r\n")))
		return nil, fmt.Errorf("config: %s:%d:%d: top-level value must be an object", path, line, col)
	}

	p := &parser{lookup: opts.LookupEnv, sep: opts.Separator}
	if p.lookup == nil {
		p.lookup = os.LookupEnv
	}
	servers := p.parse(members)
	if len(p.problems) > 0 {
		return nil, &Error{Path: path, Problems: p.problems}
	}
	cfg := &Config{Path: path, Servers: servers, Skipped: p.skipped, Compound: p.bundles}
	for _, w := range p.warnings {
		cfg.Warnings = append(cfg.Warnings, path+": "+w.String())
	}
	return cfg, nil
}

// syntaxPosition returns the 1-based line and column (in bytes) of a syntax
// error in data.
func syntaxPosition(data []byte, serr *json.SyntaxError) (line, col int) {
	off := int(min(max(serr.Offset, 0), int64(len(data))))
	// Offset counts the bytes read, the bad one included; at the end of
	// the input there is no bad byte, and the position is the end.
	if off > 0 && !strings.HasPrefix(serr.Error(), "unexpected end") {
		off--
	}
	return position(data, off)
}

// position returns the 1-based line and column (in bytes) of data[off].
func position(data []byte, off int) (line, col int) {
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// Environ returns base, a list of "NAME=value" strings such as os.Environ
// returns, with s.Env laid over it: a variable already in base is replaced in
// place (later copies of it dropped), a new one is appended in s.Env order.
// If s.Env names a variable twice, the last value wins. base is not changed.
// The result is never nil, so it may be given to exec.Cmd.Env as is (a nil
// Env would mean the whole environment of this process).
func (s Server) Environ(base []string) []string {
	last := make(map[string]int, len(s.Env)) // name -> index of its last entry in s.Env
	for i, v := range s.Env {
		last[v.Name] = i
	}
	out := make([]string, 0, len(base)+len(s.Env))
	done := make(map[string]bool, len(s.Env)) // names already in out
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		i, ok := last[name]
		switch {
		case !ok:
			out = append(out, kv)
		case !done[name]:
			done[name] = true
			out = append(out, name+"="+s.Env[i].Value)
		}
	}
	for i, v := range s.Env {
		if last[v.Name] == i && !done[v.Name] {
			out = append(out, v.Name+"="+v.Value)
		}
	}
	return out
}
