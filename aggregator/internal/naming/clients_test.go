package naming

import (
	"slices"
	"testing"
)

// settings are the defaults: no separator, no strict names asked for, a
// server name of DefaultServerNameLen characters.
var settings = Settings{ServerNameLen: DefaultServerNameLen}

func TestFor(t *testing.T) {
	for _, tt := range []struct {
		s      Settings
		client string
		want   Scheme
	}{
		{settings, "claude-ai", Scheme{Sep: "__", Strict: true, Max: 64}},
		{settings, "claude-code", Scheme{Sep: ":", Max: 64 - len("mcp__") - 16 - len("__"), View: KeepsStrict}},
		{settings, "codex-mcp-client", Scheme{Sep: ":", Max: 64 - len("mcp__") - 16 - len("__"), View: KeepsStrict}},
		{settings, "gemini-cli-mcp-client", Scheme{Sep: ":", Max: 63 - len("mcp_") - 16 - len("_"), View: KeepsGemini}},
		{settings, "cursor-vscode", Scheme{Sep: ":", Max: 60 - 16}},
		{settings, "Visual Studio Code", Scheme{Sep: ":", Max: 64 - len("mcp_") - 13 - len("_")}},
		{settings, "", Scheme{Sep: ":"}},
		{settings, "some-client", Scheme{Sep: ":"}},
		{Settings{ServerNameLen: 3}, "claude-code", Scheme{Sep: ":", Max: 64 - len("mcp__all__"), View: KeepsStrict}},
		{Settings{ServerNameLen: 3}, "Visual Studio Code - Insiders", Scheme{Sep: ":", Max: 64 - len("mcp_all_")}},
		{Settings{ServerNameLen: 3}, "claude-ai", Scheme{Sep: "__", Strict: true, Max: 64}},
		{Settings{Sep: ":", ServerNameLen: 16}, "claude-ai", Scheme{Sep: ":", Strict: true, Max: 64}},
		{Settings{Sep: ".", ServerNameLen: 16}, "claude-code", Scheme{Sep: ".", Max: 41, View: KeepsStrict}},
		{Settings{Strict: true, ServerNameLen: 16}, "some-client", Scheme{Sep: "__", Strict: true, Max: 64}},
		{Settings{Strict: true, ServerNameLen: 16}, "claude-code", Scheme{Sep: "__", Strict: true, Max: 41, View: KeepsStrict}},
		{Settings{Strict: true, Sep: "-", ServerNameLen: 16}, "", Scheme{Sep: "-", Strict: true, Max: 64}},
	} {
		if got := tt.s.For(tt.client); got != tt.want {
			t.Errorf("%+v for %q: got %+v, want %+v", tt.s, tt.client, got, tt.want)
		}
	}
}

// A client that replaces characters (Claude Code, Codex: all outside
// [a-zA-Z0-9_-]; Gemini CLI: all outside [a-zA-Z0-9_.:-]) gets names that
// stay apart once it has replaced them: else one tool is lost, or the
// model API refuses every request for two tools of one name. The one that
// needs no replacing keeps its name, whatever the order.
func TestNamesStayApartAsTheClientShowsThem(t *testing.T) {
	entries := []Entry{{"k", "a.b"}, {"k", "a_b"}, {"k", "a b"}, {"k.x", "y"}, {"k_x", "y"}, {"k", "x_y"}, {"k", "ok"}}
	for _, client := range []string{"claude-code", "codex-mcp-client", "gemini-cli-mcp-client"} {
		n := settings.For(client)
		k, _ := LookupClient(client)
		reversed := slices.Clone(entries)
		slices.Reverse(reversed)
		for _, order := range [][]Entry{entries, reversed} {
			seen := map[string]string{}
			got := n.Assign(order)
			for i, a := range got {
				if a.Hidden {
					t.Errorf("%s: %v hidden", client, order[i])
					continue
				}
				v := k.Chars.Seen(a.Name) // as the client shows it
				if other, dup := seen[v]; dup {
					t.Errorf("%s shows %q and %q both as %q", client, other, a.Name, v)
				}
				seen[v] = a.Name
			}
			for i, e := range order {
				if e == (Entry{"k", "a_b"}) && got[i].Name != "k:a_b" {
					t.Errorf("%s: k:a_b listed as %q, want its own name", client, got[i].Name)
				}
			}
		}
	}
}
