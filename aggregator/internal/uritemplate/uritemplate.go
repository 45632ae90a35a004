// Package uritemplate matches URIs against RFC 6570 URI templates, as a
// server's resource templates give them, and ranks templates by how
// specific they are, so that of two that match a URI the more specific
// wins. Pure functions.
package uritemplate

import (
	"regexp"
	"strings"
)

// Template is a URI template with its matcher and its rank.
type Template struct {
	Text  string // the template as the server wrote it
	match *regexp.Regexp
	Rank  Rank
}

// Parse reads the URI template t.
func Parse(t string) Template { return Template{Text: t, match: matcher(t), Rank: rank(t)} }

// Matches reports whether uri is one the template can expand to.
func (t Template) Matches(uri string) bool { return t.match.MatchString(uri) }

// Rank is how specific a URI template is; of two templates that
// match a URI, the more specific wins, by these in turn: the longer
// literal prefix (the text before the first expression), the more literal
// characters, the fewer wide expressions (those that may span a "/":
// {+x}, {#x}, {/x}), the fewer expressions.
type Rank struct {
	prefix, literal, wide, exprs int
}

// rank ranks the URI template t.
func rank(t string) Rank {
	var r Rank
	r.prefix = len(t)
	if i := strings.IndexByte(t, '{'); i >= 0 {
		r.prefix = i
	}
	for len(t) > 0 {
		open := strings.IndexByte(t, '{')
		end := strings.IndexByte(t[max(open, 0):], '}')
		if open < 0 || end < 0 {
			r.literal += len(t)
			break
		}
		r.literal += open
		r.exprs++
		if expr := t[open+1 : open+end]; strings.HasPrefix(expr, "+") || strings.HasPrefix(expr, "#") || strings.HasPrefix(expr, "/") {
			r.wide++
		}
		t = t[open+end+1:]
	}
	return r
}

// MoreSpecific reports whether r ranks strictly above s.
func (r Rank) MoreSpecific(s Rank) bool {
	switch {
	case r.prefix != s.prefix:
		return r.prefix > s.prefix
	case r.literal != s.literal:
		return r.literal > s.literal
	case r.wide != s.wide:
		return r.wide < s.wide
	}
	return r.exprs < s.exprs
}

// matcher turns an RFC 6570 URI template into a regular expression
// that matches the URIs it can expand to.
func matcher(t string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for len(t) > 0 {
		open := strings.IndexByte(t, '{')
		if open < 0 {
			b.WriteString(regexp.QuoteMeta(t))
			break
		}
		b.WriteString(regexp.QuoteMeta(t[:open]))
		end := strings.IndexByte(t[open:], '}')
		if end < 0 {
			b.WriteString(regexp.QuoteMeta(t[open:]))
			break
		}
		expr := t[open+1 : open+end]
		switch {
		case strings.HasPrefix(expr, "+"), strings.HasPrefix(expr, "#"):
			b.WriteString(".*")
		case strings.HasPrefix(expr, "?"), strings.HasPrefix(expr, "&"):
			b.WriteString(`([?&][^#]*)?`)
		case strings.HasPrefix(expr, "/"):
			b.WriteString(`(/[^/?#]*)*`)
		default:
			b.WriteString(`[^/?#]*`)
		}
		t = t[open+end+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile(`^$.`) // matches nothing
	}
	return re
}
