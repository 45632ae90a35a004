package config

import (
	"reflect"
	"slices"
	"testing"
)

// The coordinator's top-level "tools": compound tools, each subtool with
// where it is written; a subtool of a server the config does not run
// gets a warning; mistakes name their place.
func TestParseCompoundTools(t *testing.T) {
	t.Parallel()
	cfg, err := Parse(testPath, []byte(`{"mcpServers": {"fs": {"command": "c"}},
		"tools": {"files": {"description": "Work with files", "subtools": {
			"fs": {"tools": [{"name": "read", "description": "Read one"}, "list"]},
			"gone": {"tools": [{"name": "x"}]}}}}}`), testOpts)
	if err != nil {
		t.Fatal(err)
	}
	want := []Compound{{Name: "files", Description: "Work with files", Where: "tools.files", Subtools: []Subtool{
		{"fs", "read", "Read one", "tools.files.subtools.fs.tools[0]"},
		{"fs", "list", "", "tools.files.subtools.fs.tools[1]"},
		{"gone", "x", "", "tools.files.subtools.gone.tools[0]"},
	}}}
	if !reflect.DeepEqual(cfg.Compound, want) {
		t.Errorf("Compound =\n%#v\nwant\n%#v", cfg.Compound, want)
	}
	if w := testPath + `: tools.files.subtools.gone.tools[0]: server "gone" is not one the config runs: this subtool is not offered`; !slices.Contains(cfg.Warnings, w) {
		t.Errorf("Warnings %q lack %q", cfg.Warnings, w)
	}
	for _, tt := range []struct{ tools, want string }{
		{`[]`, `tools: must be an object of compound tools: {"NAME": {"description", "subtools"}}`},
		{`{"a:b": {"subtools": {}}}`, `tools["a:b"]: a compound tool's name must be letters, digits, - and single _ (at most 64)`},
		{`{"f": {"description": 1, "subtools": {"fs": {"tools": ["r"]}}}}`, `tools.f.description: must be a string`},
		{`{"f": {"subtools": {"fs": {"tools": "r"}}}}`, `tools.f.subtools.fs.tools: must be an array of {"name", "description"}`},
		{`{"f": {"subtools": {"fs": {"tools": [{"description": "d"}]}}}}`, `tools.f.subtools.fs.tools[0].name: must be a non-empty string: the server's own tool name`},
		{`{"f": {"description": "d"}}`, `tools.f.subtools: missing: the tools it bundles, {"KEY": {"tools": [{"name": ...}]}}`},
	} {
		_, err := Parse(testPath, []byte(`{"mcpServers": {}, "tools": `+tt.tools+`}`), testOpts)
		if want := "config: " + testPath + ": " + tt.want; err == nil || err.Error() != want {
			t.Errorf("tools %s: error\n%v\nwant\n%s", tt.tools, err, want)
		}
	}
}
