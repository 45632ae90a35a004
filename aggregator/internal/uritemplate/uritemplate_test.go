package uritemplate

import "testing"

func TestTemplateMatcher(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		template, uri string
		match         bool
	}{
		{"test://x/t/{id}", "test://x/t/42", true},
		{"test://x/t/{id}", "test://x/t/42/more", false},
		{"test://x/t/{id}", "test://y/t/42", false},
		{"file:///{+path}", "file:///a/b/c.txt", true},
		{"search://q{?query,limit}", "search://q?query=a&limit=2", true},
		{"search://q{?query}", "search://q", true},
		{"a.b://{x}", "aXb://1", false}, // the dot is literal
		{"repo://{owner}/{name}{/path}", "repo://me/r/a/b", true},
	} {
		if got := Parse(tc.template).Matches(tc.uri); got != tc.match {
			t.Errorf("%s ~ %s: got %v, want %v", tc.template, tc.uri, got, tc.match)
		}
	}
}

// Of two templates that match a URI, the more specific wins: the longer
// literal prefix, then more literal text, then fewer wide expressions,
// then fewer expressions.
func TestTemplateRank(t *testing.T) {
	t.Parallel()
	rank := func(s string) Rank { return Parse(s).Rank }
	for _, tc := range []struct{ more, less string }{
		{"file:///docs/{name}", "file:///{+path}"},
		{"db://users/{id}", "db://{table}/rows"},
		{"x://a/{b}/c", "x://a/{b}/{c}"},
		{"x://a/{b}", "x://a/{+b}"},
		{"x://a/{b}", "x://a/{/b}"},
		{"x://a/{b}", "x://a/{b}{c}"},
	} {
		if !rank(tc.more).MoreSpecific(rank(tc.less)) || rank(tc.less).MoreSpecific(rank(tc.more)) {
			t.Errorf("%s must rank above %s", tc.more, tc.less)
		}
	}
	if r := rank("x://{a}"); r.MoreSpecific(r) {
		t.Error("a template ranks above itself")
	}
}
