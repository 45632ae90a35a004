package config

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// parseOne parses a config with the one entry fs and returns it.
func parseOne(t *testing.T, entry string) Server {
	t.Helper()
	cfg, err := Parse(testPath, []byte(`{"mcpServers": {"fs": `+entry+`}}`), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 1 {
		t.Fatalf("%d servers", len(cfg.Servers))
	}
	return cfg.Servers[0]
}

// Every dialect is read, with where each name is written.
func TestParseToolFilters(t *testing.T) {
	t.Parallel()
	s := parseOne(t, `{"command": "c",
		"includeTools": ["a", "b"], "excludeTools": ["b"],
		"enabled_tools": ["a"], "disabled_tools": [],
		"disabledTools": ["x"],
		"exposedTools": ["a", {"original": "read_file", "exposed": "cat"}, {"original": "same"}], "hiddenTools": ["h"]}`)
	want := Tools{
		Lists: []ToolList{
			{"includeTools", true, []ToolRef{{"a", "mcpServers.fs.includeTools[0]"}, {"b", "mcpServers.fs.includeTools[1]"}}},
			{"excludeTools", false, []ToolRef{{"b", "mcpServers.fs.excludeTools[0]"}}},
			{"enabled_tools", true, []ToolRef{{"a", "mcpServers.fs.enabled_tools[0]"}}},
			{"disabled_tools", false, nil},
			{"disabledTools", false, []ToolRef{{"x", "mcpServers.fs.disabledTools[0]"}}},
			{"exposedTools", true, []ToolRef{{"a", "mcpServers.fs.exposedTools[0]"}, {"read_file", "mcpServers.fs.exposedTools[1]"}, {"same", "mcpServers.fs.exposedTools[2]"}}},
			{"hiddenTools", false, []ToolRef{{"h", "mcpServers.fs.hiddenTools[0]"}}},
		},
		Renames: []Rename{{"read_file", "cat", "mcpServers.fs.exposedTools[1]"}},
	}
	if !reflect.DeepEqual(s.Tools, want) {
		t.Errorf("Tools =\n%#v\nwant\n%#v", s.Tools, want)
	}
	if !s.Tools.Equal(want) || s.Tools.Equal(Tools{}) || s.Tools.IsZero() || !(Tools{}).IsZero() {
		t.Error("Equal or IsZero is wrong")
	}
}

// An allow list exposes only what it names, a deny list removes, deny
// wins whatever the dialect; several allow lists expose what each names.
func TestToolsExpose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, entry string
		exposed     []string // of the tools a, b, c, read_file: the exposed names
	}{
		{"no filter", `{"disabledTools": null}`, []string{"a", "b", "c", "read_file"}},
		{"Gemini include", `{"includeTools": ["a", "c"]}`, []string{"a", "c"}},
		{"Gemini exclude wins", `{"includeTools": ["a", "c"], "excludeTools": ["c"]}`, []string{"a"}},
		{"Codex", `{"enabled_tools": ["a", "b"], "disabled_tools": ["b"]}`, []string{"a"}},
		{"Roo", `{"disabledTools": ["read_file"]}`, []string{"a", "b", "c"}},
		{"deny of another dialect wins", `{"exposedTools": ["a", "b"], "disabledTools": ["a"]}`, []string{"b"}},
		{"coordinator rename", `{"exposedTools": [{"original": "read_file", "exposed": "cat"}, "a"], "hiddenTools": ["a"]}`, []string{"cat"}},
		{"two allow lists", `{"includeTools": ["a", "b"], "enabled_tools": ["b", "c"]}`, []string{"b"}},
		{"empty allow list", `{"includeTools": []}`, nil},
		{"names are exact", `{"excludeTools": ["A", "read"]}`, []string{"a", "b", "c", "read_file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := parseOne(t, `{"command": "c", `+strings.TrimPrefix(tt.entry, "{"))
			var got []string
			for _, name := range []string{"a", "b", "c", "read_file"} {
				if e, ok := s.Tools.Expose(name); ok {
					got = append(got, e)
				}
			}
			if !slices.Equal(got, tt.exposed) {
				t.Errorf("exposed %q, want %q", got, tt.exposed)
			}
		})
	}
}

// A filter of the wrong type, or exposed names that would be one, is a
// problem naming the place.
func TestParseToolFilterProblems(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, entry, want string }{
		{"not an array", `"excludeTools": "delete_repo"`, "mcpServers.fs.excludeTools: must be an array of tool names"},
		{"not an array of names", `"enabled_tools": ["a", 5]`, "mcpServers.fs.enabled_tools[1]: must be a tool name (a string)"},
		{"object outside exposedTools", `"includeTools": [{"original": "a"}]`, "mcpServers.fs.includeTools[0]: must be a tool name (a string)"},
		{"exposedTools not an array", `"exposedTools": {"a": "b"}`, `mcpServers.fs.exposedTools: must be an array of tool names or {"original", "exposed"} objects`},
		{"empty name", `"hiddenTools": [""]`, "mcpServers.fs.hiddenTools[0]: must not be empty"},
		{"rename without original", `"exposedTools": [{"exposed": "cat"}]`, "mcpServers.fs.exposedTools[0].original: missing: the server's own name of the tool"},
		{"rename to a number", `"exposedTools": [{"original": "a", "exposed": 1}]`, "mcpServers.fs.exposedTools[0].exposed: must be a non-empty string"},
		{"two renames onto one name", `"exposedTools": [{"original": "a", "exposed": "x"}, {"original": "b", "exposed": "x"}]`,
			`mcpServers.fs.exposedTools[1]: exposes "x", which mcpServers.fs.exposedTools[0] exposes too: two tools cannot have one name`},
		{"rename onto an exposed name", `"exposedTools": ["cat", {"original": "read_file", "exposed": "cat"}]`,
			`mcpServers.fs.exposedTools[1]: exposes "cat", which mcpServers.fs.exposedTools[0] exposes too: two tools cannot have one name`},
		{"renamed twice", `"exposedTools": [{"original": "a", "exposed": "x"}, {"original": "a", "exposed": "y"}]`,
			`mcpServers.fs.exposedTools[1]: tool "a" is listed again (first at mcpServers.fs.exposedTools[0]): give it one exposed name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(testPath, []byte(`{"mcpServers": {"fs": {"command": "c", `+tt.entry+`}}}`), testOpts)
			if want := "config: " + testPath + ": " + tt.want; err == nil || err.Error() != want {
				t.Errorf("error =\n%v\nwant\n%s", err, want)
			}
		})
	}
}

// A remote entry is skipped with one warning naming it, and listed as
// skipped; an empty allow list gets a warning.
func TestParseSkipsRemoteServers(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(testPath, []byte(`{"mcpServers": {
		"web": {"type": "http", "url": "https://x", "headers": {"A": "b"}},
		"a": {"command": "c", "includeTools": []},
		"sse": {"url": "https://x/sse"}}}`), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := []Skipped{{"web", `a remote server ("type": "http")`}, {"sse", `a remote server (it has a "url")`}}
	if !reflect.DeepEqual(cfg.Skipped, wantSkipped) {
		t.Errorf("Skipped = %q, want %q", cfg.Skipped, wantSkipped)
	}
	wantWarnings := []string{
		testPath + `: mcpServers.web: skipped: a remote server ("type": "http"); only stdio servers are served, the others are`,
		testPath + `: mcpServers.a.includeTools: an empty allow list: no tool of this server is exposed`,
		testPath + `: mcpServers.sse: skipped: a remote server (it has a "url"); only stdio servers are served, the others are`,
	}
	if !slices.Equal(cfg.Warnings, wantWarnings) {
		t.Errorf("Warnings =\n%s\nwant\n%s", strings.Join(cfg.Warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0].Key != "a" {
		t.Errorf("Servers = %v", cfg.Servers)
	}
}

// What a server exposes is not what it runs: a reload does not restart a
// server for it; a cwd is.
func TestSameIgnoresTools(t *testing.T) {
	t.Parallel()
	a := Server{Key: "a", Command: "c", Args: []string{}}
	b := a
	b.Tools = Tools{Lists: []ToolList{{Field: "excludeTools", Names: []ToolRef{{"x", "w"}}}}}
	if !a.Same(b) {
		t.Error("a server whose filters changed is not the Same")
	}
	b.Dir = "/tmp"
	if a.Same(b) {
		t.Error("a server whose cwd changed is the Same")
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	names := []string{"read_file", "write_file", "delete_repo"}
	for word, want := range map[string]string{"delete_repos": "delete_repo", "Read_File": "read_file", "xyz": "read_file"} {
		if got := Closest(word, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	if got := Closest("x", nil); got != "" {
		t.Errorf("Closest of none = %q", got)
	}
}
