package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const testPath = "/x/mcp.json"

var testOpts = Options{Separator: ":", LookupEnv: lookupIn(testEnv)}

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		opts Options // testOpts if zero
		want []Server
	}{
		{
			name: "empty mcpServers",
			json: `{"mcpServers": {}}`,
			want: []Server{},
		},
		{
			name: "command only",
			json: `{"mcpServers": {"a": {"command": "srv"}}}`,
			want: []Server{{Key: "a", Command: "srv", Args: []string{}}},
		},
		{
			name: "full entry",
			json: `{"mcpServers": {"gh": {
				"command": "npx",
				"args": ["-y", "server-github"],
				"env": {"Z_TOKEN": "t", "A_HOST": "h"}
			}}}`,
			want: []Server{{Key: "gh", Command: "npx", Args: []string{"-y", "server-github"},
				Env: []EnvVar{{"Z_TOKEN", "t"}, {"A_HOST", "h"}}}},
		},
		{
			name: "file order kept",
			json: `{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}}}`,
			want: []Server{
				{Key: "zeta", Command: "z", Args: []string{}},
				{Key: "alpha", Command: "a", Args: []string{}},
				{Key: "mid", Command: "m", Args: []string{}},
			},
		},
		{
			name: "disabled skipped without other checks",
			json: `{"mcpServers": {
				"off": {"disabled": true, "type": "http", "args": 5, "env": {"X": "$NOPE"}},
				"a:b": {"disabled": true, "command": "x"},
				"": {"disabled": true},
				"on": {"disabled": false, "command": "on"}
			}}`,
			want: []Server{{Key: "on", Command: "on", Args: []string{}}},
		},
		{
			name: "other fields ignored",
			json: `{"globalShortcut": "x", "mcpServers": {"a": {
				"command": "c", "autoApprove": ["t"], "alwaysAllow": [], "timeout": 60,
				"headers": {"X": 1}, "transportType": 7
			}}}`,
			want: []Server{{Key: "a", Command: "c", Args: []string{}}},
		},
		{
			name: "cwd expanded as args are",
			json: `{"mcpServers": {"a": {"command": "./srv", "cwd": "${HOME}/proj"}, "b": {"command": "c", "cwd": null}}}`,
			want: []Server{{Key: "a", Command: "./srv", Args: []string{}, Dir: "/home/u/proj", Vars: []EnvVar{{"HOME", "/home/u"}}}, {Key: "b", Command: "c", Args: []string{}}},
		},
		{
			name: "remote entries skipped, the others served",
			json: `{"mcpServers": {
				"web": {"type": "http", "url": "https://x"},
				"a": {"command": "c"},
				"sse": {"url": "https://x/sse"},
				"local": {"type": "stdio", "command": "c", "url": ""}
			}}`,
			want: []Server{{Key: "a", Command: "c", Args: []string{}}, {Key: "local", Command: "c", Args: []string{}}},
		},
		{
			name: "type stdio and nulls accepted",
			json: `{"mcpServers": {"a": {"type": "stdio", "command": "c", "args": null, "env": null, "url": null, "disabled": null}}}`,
			want: []Server{{Key: "a", Command: "c", Args: []string{}}},
		},
		{
			name: "strings expanded, names and keys not",
			json: `{"mcpServers": {"$HOME": {
				"command": "${HOME}/bin/srv",
				"args": ["--token=$TOKEN", "$$1", "${NOPE:-dflt}"],
				"env": {"$TOKEN": "${TOKEN}", "PATHS": "$HOME:${EMPTY:-/usr}"}
			}}}`,
			opts: Options{LookupEnv: lookupIn(testEnv)},
			want: []Server{{Key: "$HOME", Command: "/home/u/bin/srv",
				Args: []string{"--token=s3cret", "$1", "dflt"},
				Env:  []EnvVar{{"$TOKEN", "s3cret"}, {"PATHS", "/home/u:/usr"}},
				Vars: []EnvVar{{"HOME", "/home/u"}, {"TOKEN", "s3cret"}}}}, // each once, NOPE and EMPTY not (unset, empty)
		},
		{
			name: "escaped key decoded",
			json: `{"mcpServers": {"\u0061lpha": {"command": "c"}}}`,
			want: []Server{{Key: "alpha", Command: "c", Args: []string{}}},
		},
		{
			name: "no separator check when Separator is empty",
			json: `{"mcpServers": {"a:b": {"command": "c"}}}`,
			opts: Options{LookupEnv: lookupIn(nil)},
			want: []Server{{Key: "a:b", Command: "c", Args: []string{}}},
		},
		{
			name: "byte order mark skipped",
			json: "\xef\xbb\xbf" + `{"mcpServers": {"a": {"command": "c"}}}`,
			want: []Server{{Key: "a", Command: "c", Args: []string{}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts.LookupEnv == nil {
				opts = testOpts
			}
			cfg, err := Parse(testPath, []byte(tt.json), opts)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if cfg.Path != testPath {
				t.Errorf("Path = %q, want %q", cfg.Path, testPath)
			}
			if !reflect.DeepEqual(cfg.Servers, tt.want) {
				t.Errorf("Servers =\n%#v\nwant\n%#v", cfg.Servers, tt.want)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		json string
		want string // the whole error message, without the "config: /x/mcp.json: " prefix
	}{
		{"no mcpServers", `{"tools": {}}`, "mcpServers: missing"},
		{"VS Code's servers", `{"servers": {}}`, `mcpServers: missing (found "servers": a typo?)`},
		{"mcpServers misspelt", `{"mcpServer": {}}`, `mcpServers: missing (found "mcpServer": a typo?)`},
		{"mcpServers in snake case", `{"mcp_servers": {}}`, `mcpServers: missing (found "mcp_servers": a typo?)`},
		{"mcpServers in other case", `{"MCPServers": {}}`, `mcpServers: missing (found "MCPServers": a typo?)`},
		{"mcpServers array", `{"mcpServers": []}`, "mcpServers: must be an object"},
		{"mcpServers null", `{"mcpServers": null}`, "mcpServers: must be an object"},
		{"mcpServers twice", `{"mcpServers": {}, "mcpServers": {}}`, "mcpServers: duplicate field"},
		{"duplicate key", `{"mcpServers": {"alpha": {"command": "a"}, "alpha": {"command": "b"}}}`,
			"mcpServers.alpha: duplicate server key"},
		{"duplicate key disabled", `{"mcpServers": {"alpha": {"command": "a"}, "alpha": {"disabled": true}}}`,
			"mcpServers.alpha: duplicate server key"},
		{"empty key", `{"mcpServers": {"": {"command": "a"}}}`,
			`mcpServers[""]: server key must not be empty`},
		{"separator in key", `{"mcpServers": {"a:b": {"command": "a"}}}`,
			`mcpServers["a:b"]: server key must not contain the separator ":" (it joins server key and tool name)`},
		{"entry not object", `{"mcpServers": {"alpha": "npx"}}`, "mcpServers.alpha: must be an object"},
		{"command missing", `{"mcpServers": {"alpha": {"args": []}}}`,
			"mcpServers.alpha.command: must be a non-empty string"},
		{"command empty", `{"mcpServers": {"alpha": {"command": ""}}}`,
			"mcpServers.alpha.command: must be a non-empty string"},
		{"command not string", `{"mcpServers": {"alpha": {"command": ["npx"]}}}`,
			"mcpServers.alpha.command: must be a non-empty string"},
		{"command empty after expansion", `{"mcpServers": {"alpha": {"command": "${NOPE:-}"}}}`,
			"mcpServers.alpha.command: is empty after expansion"},
		{"args not array", `{"mcpServers": {"alpha": {"command": "c", "args": "-v"}}}`,
			"mcpServers.alpha.args: must be an array of strings"},
		{"arg not string", `{"mcpServers": {"alpha": {"command": "c", "args": ["a", "b", 3]}}}`,
			"mcpServers.alpha.args[2]: must be a string"},
		{"env not object", `{"mcpServers": {"alpha": {"command": "c", "env": ["A=b"]}}}`,
			"mcpServers.alpha.env: must be an object"},
		{"env value not string", `{"mcpServers": {"alpha": {"command": "c", "env": {"PORT": 8080}}}}`,
			"mcpServers.alpha.env.PORT: must be a string"},
		{"env name empty", `{"mcpServers": {"alpha": {"command": "c", "env": {"": "x"}}}}`,
			`mcpServers.alpha.env[""]: environment variable name must not be empty`},
		{"env name with =", `{"mcpServers": {"alpha": {"command": "c", "env": {"A=B": "x"}}}}`,
			`mcpServers.alpha.env["A=B"]: environment variable name must not contain "=" or NUL`},
		{"env name twice", `{"mcpServers": {"alpha": {"command": "c", "env": {"A": "x", "A": "y"}}}}`,
			"mcpServers.alpha.env.A: duplicate variable"},
		{"field twice", `{"mcpServers": {"alpha": {"command": "c", "command": "d"}}}`,
			"mcpServers.alpha.command: duplicate field"},
		{"disabled not boolean", `{"mcpServers": {"alpha": {"command": "c", "disabled": "yes"}}}`,
			"mcpServers.alpha.disabled: must be a boolean"},
		{"type unknown", `{"mcpServers": {"web": {"type": "studio", "command": "c"}}}`,
			`mcpServers.web.type: unknown server type "studio": "stdio", or a remote type ("http", "sse"), which is skipped`},
		{"type not string", `{"mcpServers": {"web": {"type": 1, "command": "c"}}}`,
			"mcpServers.web.type: must be a string"},
		{"unset variable", `{"mcpServers": {"alpha": {"command": "c", "env": {"TOKEN": "$API_KEY"}}}}`,
			"mcpServers.alpha.env.TOKEN: environment variable API_KEY is not set"},
		{"empty variable", `{"mcpServers": {"alpha": {"command": "c", "env": {"TOKEN": "${EMPTY}"}}}}`,
			"mcpServers.alpha.env.TOKEN: environment variable EMPTY is empty"},
		{"invalid name", `{"mcpServers": {"alpha": {"command": "${9x}"}}}`,
			`mcpServers.alpha.command: invalid variable name "9x"`},
		{"unterminated", `{"mcpServers": {"alpha": {"command": "c", "args": ["ok", "${HOME"]}}}`,
			"mcpServers.alpha.args[1]: unterminated ${...}"},
		{"path quoting", `{"mcpServers": {"my server": {"command": "c", "env": {"MY VAR": 1}}}}`,
			`mcpServers["my server"].env["MY VAR"]: must be a string`},
		{"every problem at once", `{"mcpServers": {
				"a": {"args": [1]},
				"b": {"command": "c", "env": {"X": "$A and ${B}"}},
				"c": "x"
			}}`,
			"5 problems:\n" +
				"  mcpServers.a.args[0]: must be a string\n" +
				"  mcpServers.a.command: must be a non-empty string\n" +
				"  mcpServers.b.env.X: environment variable A is not set\n" +
				"  mcpServers.b.env.X: environment variable B is not set\n" +
				"  mcpServers.c: must be an object"},
		{"variables in file order", `{"mcpServers": {"a": {
				"env": {"E": "$V1"}, "args": ["$V2", "$V3"], "command": "$V4"
			}}}`,
			"4 problems:\n" +
				"  mcpServers.a.env.E: environment variable V1 is not set\n" +
				"  mcpServers.a.args[0]: environment variable V2 is not set\n" +
				"  mcpServers.a.args[1]: environment variable V3 is not set\n" +
				"  mcpServers.a.command: environment variable V4 is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Parse(testPath, []byte(tt.json), testOpts)
			if err == nil {
				t.Fatalf("Parse succeeded with %d servers, want error %q", len(cfg.Servers), tt.want)
			}
			if want := "config: " + testPath + ": " + tt.want; err.Error() != want {
				t.Errorf("error =\n%s\nwant\n%s", err, want)
			}
			var cerr *Error
			if !errors.As(err, &cerr) || cerr.Path != testPath || len(cerr.Problems) == 0 {
				t.Errorf("error %#v is not an *Error for %s with problems", err, testPath)
			}
		})
	}
}

func TestParseSyntaxError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, want string
	}{
		{"bad character", "{\n  \"mcpServers\": {\n    \"a\": {},}\n}",
			"3:13: invalid character '}' looking for beginning of object key string"},
		{"trailing garbage", "{\"mcpServers\": {}}\n\nx",
			"3:1: invalid character 'x' after top-level value"},
		{"second value", `{"mcpServers": {}} {}`,
			"1:20: invalid character '{' after top-level value"},
		{"truncated", `{"mcpServers": {`, "1:17: unexpected end of JSON input"},
		{"empty file", "", "1:1: unexpected end of JSON input"},
		{"byte order mark", "\xef\xbb\xbf{,}", "1:2: invalid character ',' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(testPath, []byte(tt.json), testOpts)
			if want := "config: " + testPath + ":" + tt.want; err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %s", err, want)
			}
			var serr *json.SyntaxError
			if !errors.As(err, &serr) {
				t.Errorf("error %#v does not wrap a *json.SyntaxError", err)
			}
		})
	}
}

func TestParseTopLevelNotObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, want string
	}{
		{"array", `[{"mcpServers": {}}]`, "1:1"},
		{"string after blank lines", "\n\n  \"mcpServers\"", "3:3"},
		{"null", "null", "1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(testPath, []byte(tt.json), testOpts)
			want := "config: " + testPath + ":" + tt.want + ": top-level value must be an object"
			if err == nil || err.Error() != want {
				t.Errorf("error = %v, want %s", err, want)
			}
		})
	}
}

func TestParseWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, key string
		want      []string
	}{
		{"plain key", "my-server_2", nil},
		{"dot", "my.server", []string{testPath + `: mcpServers["my.server"]: server key has characters other than A-Z, a-z, 0-9, "_" and "-": clients with strict tool names (Claude Desktop) see each as "_"`}},
		{"non-ASCII", "sérveur", []string{testPath + `: mcpServers["sérveur"]: server key has characters other than A-Z, a-z, 0-9, "_" and "-": clients with strict tool names (Claude Desktop) see each as "_"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{tt.key: map[string]any{"command": "c"}}})
			cfg, err := Parse(testPath, data, testOpts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Warnings, tt.want) {
				t.Errorf("Warnings = %q, want %q", cfg.Warnings, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	t.Run("file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "$TOKEN"}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path, testOpts)
		if err != nil {
			t.Fatal(err)
		}
		want := &Config{Path: path, Servers: []Server{{Key: "a", Command: "s3cret", Args: []string{}, Vars: []EnvVar{{"TOKEN", "s3cret"}}}}}
		if !reflect.DeepEqual(cfg, want) {
			t.Errorf("Load = %#v, want %#v", cfg, want)
		}
	})
	t.Run("problems name the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(path, []byte(`{}`), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, testOpts)
		if want := "config: " + path + ": mcpServers: missing"; err == nil || err.Error() != want {
			t.Errorf("error = %v, want %s", err, want)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "nope.json")
		_, err := Load(path, testOpts)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("error = %v, want one that is fs.ErrNotExist", err)
		}
		if want := "config: open " + path + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error = %v, want it to start with %q", err, want)
		}
	})
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"none", &Error{Path: "c.json"}, "config: c.json: invalid configuration"},
		{"one", &Error{Path: "c.json", Problems: []Problem{{"mcpServers.a.command", "must be a non-empty string"}}},
			"config: c.json: mcpServers.a.command: must be a non-empty string"},
		{"no where", &Error{Path: "c.json", Problems: []Problem{{"", "bad"}}}, "config: c.json: bad"},
		{"several", &Error{Path: "c.json", Problems: []Problem{{"mcpServers.a", "x"}, {"mcpServers.b", "y"}}},
			"config: c.json: 2 problems:\n  mcpServers.a: x\n  mcpServers.b: y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestChildPath(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, want string }{
		{"alpha", "p.alpha"},
		{"_a-1", "p._a-1"},
		{"my key", `p["my key"]`},
		{"9x", `p["9x"]`},
		{"-a", `p["-a"]`},
		{"", `p[""]`},
		{`a"b`, `p["a\"b"]`},
		{"é", `p["é"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := child("p", tt.name); got != tt.want {
				t.Errorf("child(%q) = %s, want %s", tt.name, got, tt.want)
			}
		})
	}
}

func TestEnviron(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		base []string
		env  []EnvVar
		want []string
	}{
		{"no env", []string{"A=1", "B=2"}, nil, []string{"A=1", "B=2"}},
		{"nil base, no env", nil, nil, []string{}},
		{"replace keeps position", []string{"A=1", "B=2", "C=3"}, []EnvVar{{"B", "x"}}, []string{"A=1", "B=x", "C=3"}},
		{"append new in order", []string{"A=1"}, []EnvVar{{"Z", "z"}, {"M", "m"}}, []string{"A=1", "Z=z", "M=m"}},
		{"replace and append", []string{"PATH=/bin", "HOME=/h"}, []EnvVar{{"NEW", "n"}, {"PATH", "/x"}},
			[]string{"PATH=/x", "HOME=/h", "NEW=n"}},
		{"later copies in base dropped", []string{"A=1", "B=2", "A=3"}, []EnvVar{{"A", "x"}}, []string{"A=x", "B=2"}},
		{"last env value wins", []string{"A=1"}, []EnvVar{{"A", "x"}, {"B", "b"}, {"A", "y"}}, []string{"A=y", "B=b"}},
		{"value with =", []string{"A=1=2"}, []EnvVar{{"A", "p=q"}}, []string{"A=p=q"}},
		{"empty value", []string{"A=1"}, []EnvVar{{"A", ""}}, []string{"A="}},
		{"prefix is not a match", []string{"AB=1", "A"}, []EnvVar{{"A", "x"}}, []string{"AB=1", "A=x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := slices.Clone(tt.base)
			got := Server{Key: "k", Command: "c", Env: tt.env}.Environ(base)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("Environ(%q) = %#v, want %#v", tt.base, got, tt.want)
			}
			if !slices.Equal(base, tt.base) {
				t.Errorf("Environ changed its base to %q", base)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	t.Parallel()
	candidates := []string{"config", "separator", "startup-timeout", "strict-names"}
	for _, tt := range []struct{ word, want string }{
		{"confg", "config"},
		{"seperator", "separator"},
		{"startup-timout", "startup-timeout"},
		{"strict", ""},
		{"x", ""},
		{"CONFIG", "config"},
	} {
		if got := Nearest(tt.word, candidates); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
