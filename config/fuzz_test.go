package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "plain", "$", "$$", "$1", "$HOME", "${HOME}", "${HOME:-x}", "${EMPTY:-}",
		"${", "${}", "${9x}", "${a b}", "a$b${c}$$d${e:-f}g", "${A:-${B}}", "é$Ü",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Values hold no '$', so every '$' of a result comes from s.
		lookup := func(name string) (string, bool) {
			if !isName(name) {
				t.Fatalf("expand(%q) looked up the invalid name %q", s, name)
			}
			switch name[0] {
			case 'E':
				return "", true
			case 'U':
				return "", false
			}
			return "<" + name + ">", true
		}
		got, msgs := expand(s, lookup)
		if !strings.Contains(s, "$") && (got != s || msgs != nil) {
			t.Fatalf("expand(%q) = %q, %q; want it unchanged", s, got, msgs)
		}
		if msgs == nil && strings.Count(got, "$") > strings.Count(s, "$") {
			t.Fatalf("expand(%q) = %q has more '$' than its input", s, got)
		}
		// Doubling every '$' escapes it.
		escaped := strings.ReplaceAll(s, "$", "$$")
		if got, msgs := expand(escaped, lookup); got != s || msgs != nil {
			t.Fatalf("expand(%q) = %q, %q; want %q, no problems", escaped, got, msgs, s)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, `{`, `[]`, `{}`, `{"mcpServers": {}}`, `{"mcpServers": {}} x`,
		`{"mcpServers": {"a": {"command": "c", "args": ["$HOME", "${X:-y}"], "env": {"K": "v"}}}}`,
		`{"mcpServers": {"a": {"command": "c"}, "a": {"command": "d"}}}`,
		`{"mcpServers": {"a:b": {"disabled": true}, "": {"command": "c"}}}`,
		`{"mcpServers": {"w": {"type": "http", "url": "https://x"}, "v": {"url": null, "type": "stdio", "command": "${E:-}"}}}`,
		`{"mcpServers": {"a": {"command": 1, "args": [1, null], "env": {"": 2, "A=B": "$U"}, "disabled": "no"}}}`,
		"\xef\xbb\xbf{\"mcpServers\": {\"\\u00e9\": {\"command\": \"\\u0000\"}}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{Separator: ":", LookupEnv: func(name string) (string, bool) {
			switch name[0] {
			case 'E':
				return "", true
			case 'U':
				return "", false
			}
			return "v", true
		}}
		cfg, err := Parse("f.json", data, opts)
		if err != nil {
			var cerr *Error
			var serr *json.SyntaxError
			if !strings.HasPrefix(err.Error(), "config: f.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			if errors.As(err, &cerr) && len(cerr.Problems) == 0 {
				t.Fatalf("*Error without problems: %v", err)
			}
			if cerr == nil && !errors.As(err, &serr) && !strings.HasSuffix(err.Error(), "top-level value must be an object") {
				t.Fatalf("unexpected kind of error %#v", err)
			}
			return
		}
		keys := map[string]bool{}
		for _, s := range cfg.Servers {
			if s.Key == "" || s.Command == "" || s.Args == nil {
				t.Fatalf("server %#v has an empty key or command, or nil args", s)
			}
			if strings.Contains(s.Key, ":") || keys[s.Key] {
				t.Fatalf("server key %q has the separator or is a duplicate", s.Key)
			}
			keys[s.Key] = true
		}
	})
}
