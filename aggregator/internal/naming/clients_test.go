package naming

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
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

func TestLookupClient(t *testing.T) {
	for _, tt := range []struct {
		name, label string // label "": not known
	}{
		{"claude-ai", "Claude Desktop"},
		{"claude-code", "Claude Code"},
		{"codex-mcp-client", "Codex"},
		{"gemini-cli-mcp-client", "Gemini CLI"},
		{"cursor", "Cursor"},
		{"cursor-vscode", "Cursor"},
		{"Visual Studio Code", "VS Code"},
		{"Visual Studio Code - Insiders", "VS Code"},
		{"Code - OSS", "VS Code"},
		{"claude-ai-2", ""}, // not a prefix
		{"Cursor", ""},
		{"", ""},
		{"some-client", ""},
	} {
		k, known := LookupClient(tt.name)
		if known != (tt.label != "") || k.Label != tt.label {
			t.Errorf("LookupClient(%q) = %q, %t; want %q", tt.name, k.Label, known, tt.label)
		}
	}
	if k, _ := LookupClient("some-client"); k.Prefix(16) != 0 {
		t.Errorf("a client that is not known: %+v", k)
	}
}

// Startup: a client not in the table lists once and gives up after the
// shortest budget seen; the known ones as the table says.
func TestStartup(t *testing.T) {
	for _, tt := range []struct {
		client    string
		refetches bool
		budget    time.Duration
	}{
		{"some-agent", false, 5 * time.Second},
		{"", false, 5 * time.Second},
		{"mcp", false, 5 * time.Second},
		{"continue-client", false, 20 * time.Second},
		{"codex-mcp-client", false, 30 * time.Second},
		{"claude-ai", false, 60 * time.Second},
		{"cursor-vscode", false, 5 * time.Second},
		{"claude-code", true, 30 * time.Second},
		{"gemini-cli-mcp-client", true, 10 * time.Minute},
		{"Visual Studio Code", true, 0},
		{"Cline", true, 60 * time.Second},
	} {
		refetches, budget := Startup(tt.client)
		if refetches != tt.refetches || budget != tt.budget {
			t.Errorf("Startup(%q) = %t, %v; want %t, %v", tt.client, refetches, budget, tt.refetches, tt.budget)
		}
	}
	for _, k := range Clients() {
		if k.Source == "" {
			t.Errorf("%s: the table gives no source for its start-up facts", k.Label)
		}
	}
}

// Clients hands out a copy: the table does not change.
func TestClientsIsACopy(t *testing.T) {
	c := Clients()
	c[0].Label = "changed"
	if Clients()[0].Label != "Claude Desktop" {
		t.Error("Clients() shares the table")
	}
	var names []string
	for _, k := range Clients() {
		if k2, ok := LookupClient(k.Name()); !ok || k2.Label != k.Label {
			t.Errorf("%s: its Name %q finds %q", k.Label, k.Name(), k2.Label)
		}
		names = append(names, k.Label)
	}
	if want := []string{"Claude Desktop", "Claude Code", "Codex", "Gemini CLI", "Cursor", "VS Code", "Cline", "Zed", "Continue",
		"Python SDK clients"}; !slices.Equal(names, want) {
		t.Errorf("clients %q, want %q", names, want)
	}
}

func TestFate(t *testing.T) {
	desktop, _ := LookupClient("claude-ai")
	code, _ := LookupClient("claude-code")
	gemini, _ := LookupClient("gemini-cli-mcp-client")
	cursor, _ := LookupClient("cursor")
	for _, tt := range []struct {
		k               Client
		serverNameLen   int
		key, tool, name string
		want            string
	}{
		{desktop, 16, "k", "ok", "k__ok", ""},
		{desktop, 16, "k", "a.b", "k:a.b", desktop.Over},
		{desktop, 16, "k", long, "k__" + long, desktop.Over},
		{code, 16, "k", "ok", "k:ok", ""}, // the separator it replaces is not reported
		{code, 16, "k", "a.b", "k:a.b", "with characters replaced"},
		{code, 16, "k.x", "ok", "k.x:ok", "with characters replaced"},
		{code, 16, "k", "ok", "k:" + long[:41-2], ""},
		{code, 16, "k", "ok", "k:" + long[:41-1], code.Over},
		{code, 3, "k", "ok", "k:" + long[:40], ""},
		{gemini, 16, "k", "a.b", "k:a.b", ""},
		{gemini, 16, "k", "a b", "k:a b", "with characters replaced"},
		{cursor, 16, "k", "a b", "k:a b", ""},
		{cursor, 16, "k", "ok", "k:" + long[:43], "dropped"},
	} {
		if got := tt.k.Fate(tt.serverNameLen, tt.key, tt.tool, tt.name); got != tt.want {
			t.Errorf("%s, server name of %d, %q: %q, want %q", tt.k.Label, tt.serverNameLen, tt.name, got, tt.want)
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

// docs/startup.md shows the start-up facts of this table as it is: the
// table is kept here, in one place, and the doc says the same.
func TestStartupDocShowsTheTable(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/startup.md")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| client | `clientInfo.name` | budget | fetches lists again | source |\n|---|---|---|---|---|\n")
	for _, k := range Clients() {
		budget := "none"
		if k.Budget > 0 {
			budget = k.Budget.String()
		}
		again := "no"
		if k.Refetches {
			again = "yes"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", k.Label, strings.Join(k.names, "`, `"), budget, again, k.Source)
	}
	fmt.Fprintf(&b, "| any other | | %v | no | the shortest budget seen (the OpenAI Agents SDK's) |\n", UnknownBudget)
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("docs/startup.md does not show the table as it is; it should hold:\n%s", b.String())
	}
}
