package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is the error Parse and Load return for a file that is valid JSON
// but not a valid configuration. It lists every problem found.
type Error struct {
	Path     string // the file, as given to Load or Parse
	Problems []Problem
}

// Problem is one problem of a configuration file.
type Problem struct {
	Where string // a JSON path such as mcpServers.alpha.env.TOKEN
	Msg   string
}

func (p Problem) String() string {
	if p.Where == "" {
		return p.Msg
	}
	return p.Where + ": " + p.Msg
}

// Error returns the problem on one line, or several problems as a first
// line followed by one indented line per problem.
func (e *Error) Error() string {
	switch len(e.Problems) {
	case 0:
		return "config: " + e.Path + ": invalid configuration"
	case 1:
		return "config: " + e.Path + ": " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "config: %s: %d problems:", e.Path, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// child returns the JSON path of the member name of the object at parent:
// parent.name if name looks like an identifier, parent["name"] otherwise.
func child(parent, name string) string {
	if isIdent(name) {
		return parent + "." + name
	}
	return parent + "[" + strconv.Quote(name) + "]"
}

// isIdent reports whether s matches [A-Za-z_][A-Za-z0-9_-]*.
func isIdent(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return !isKeyChar(r) })
}

// isKeyChar reports whether r is one of the characters that clients accept
// in tool names: A-Z, a-z, 0-9, '_' and '-'.
func isKeyChar(r rune) bool {
	return r < 0x80 && (isNameChar(byte(r)) || r == '-')
}
