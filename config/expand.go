package config

import (
	"fmt"
	"slices"
	"strings"
)

// expand expands the environment variables in s, looked up with lookup:
//
//   - ${NAME} and $NAME are replaced by the value of NAME, where NAME is a
//     letter or '_' followed by letters, digits and '_' ($NAME takes the
//     longest such run). A variable that is unset or empty is a problem.
//   - ${NAME:-default} is replaced by the value of NAME, or by the literal
//     default text if NAME is unset or empty. The default may be empty and
//     may hold anything except '}' and "${" (a problem: ${A:-${B}} would
//     otherwise end at the first '}'); it is not expanded.
//   - $$ is replaced by a single $.
//   - A $ followed by anything else ($1, $-, a $ at the end) is kept as is.
//
// "${" without a closing "}", and braces that hold no valid name ("${}",
// "${9x}", "${a b}"), are problems. It returns the expansion and every
// problem of s, in order and without repeats.
func expand(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var msgs []string
	report := func(format string, args ...any) {
		if m := fmt.Sprintf(format, args...); !slices.Contains(msgs, m) {
			msgs = append(msgs, m)
		}
	}
	value := func(name string) {
		switch v, ok := lookup(name); {
		case v != "":
			b.WriteString(v)
		case ok:
			report("environment variable %s is empty", name)
		default:
			report("environment variable %s is not set", name)
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch c := s[i+1]; {
		case c == '$':
			b.WriteByte('$')
			i += 2
		case c == '{':
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				report("unterminated ${...}")
				return b.String(), msgs
			}
			name, def, hasDef := strings.Cut(s[i+2:i+2+end], ":-")
			i += 2 + end + 1
			switch {
			case !isName(name):
				report("invalid variable name %q", name)
			case hasDef && strings.Contains(def, "${"):
				report("the default of ${%s:-...} holds ${: a default is literal text, without ${...} or }", name)
			case hasDef:
				if v, _ := lookup(name); v != "" {
					b.WriteString(v)
				} else {
					b.WriteString(def)
				}
			default:
				value(name)
			}
		case isNameStart(c):
			j := i + 2
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			value(s[i+1 : j])
			i = j
		default:
			b.WriteByte('$')
			i++
		}
	}
	return b.String(), msgs
}

// isName reports whether s is a valid variable name.
func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_'
}

func isNameChar(c byte) bool {
	return isNameStart(c) || '0' <= c && c <= '9'
}
