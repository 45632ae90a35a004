package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

var strictRE = regexp.MustCompile(strictPattern)

// long is a tool name of 100 characters.
var long = strings.Repeat("very_long_tool_name_", 5)

// hash8 is the short hash of a full name, computed here independently.
func hash8(full string) string {
	sum := sha256.Sum256([]byte(full))
	return hex.EncodeToString(sum[:])[:8]
}

func TestStrictNames(t *testing.T) {
	entries := []entryName{
		{"immich", "immich.assets.list"}, // dotted
		{"w", "get weather"},             // spaced
		{"w", "météo"},                   // non-ASCII: one _ per character
		{"k", long},                      // 100 characters
		{"k", "a.b"},                     // collides with a_b, which keeps its name
		{"k", "a_b"},
		{"k", "x.y"}, // collides with x y: neither is unchanged, both get a hash
		{"k", "x y"},
		{"my.srv", "ok"}, // the key too
	}
	got := naming{sep: "__", strict: true}.assign(entries)
	head := ("k__" + long)[:55]
	want := []assignedName{
		{name: "immich__immich_assets_list", change: charsReplaced},
		{name: "w__get_weather", change: charsReplaced},
		{name: "w__m_t_o", change: charsReplaced},
		{name: head + "_" + hash8("k__"+long), change: shortened},
		{name: "k__a_b_" + hash8("k__a.b"), change: charsReplaced | disambiguated},
		{name: "k__a_b"},
		{name: "k__x_y_" + hash8("k__x.y"), change: charsReplaced | disambiguated},
		{name: "k__x_y_" + hash8("k__x y"), change: charsReplaced | disambiguated},
		{name: "my_srv__ok", change: charsReplaced},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v: got %+v, want %+v", entries[i], got[i], want[i])
		}
		if !strictRE.MatchString(got[i].name) {
			t.Errorf("%v: %q does not match %s", entries[i], got[i].name, strictPattern)
		}
	}
	if len(got[3].name) != 64 {
		t.Errorf("the shortened name has %d characters, want 64", len(got[3].name))
	}
}

// The names depend on the set of tools, never on the order they are
// listed in: names that would collide, from keys that hold the separator
// or end with a part of it ("a_" and "a", "git__hub" and "git"), or from
// characters replaced, are told apart by hashes, in strict and plain form;
// a tool one server lists twice is named once.
func TestNamesAreTheSameInAnyOrder(t *testing.T) {
	entries := []entryName{{"k", "a.b"}, {"k", "a_b"}, {"k", "a b"}, {"k", long}, {"k", long + "2"}, {"j", "a.b"}, {"k", "z"},
		{"a", "__x"}, {"a_", "_x"}, {"git__hub", "push"}, {"git", "hub__push"}, {"k", "z"}}
	for _, n := range []naming{{sep: "__", strict: true}, {sep: "__"}} {
		byEntry := func(es []entryName) map[entryName]string {
			m := map[entryName]string{}
			for i, a := range n.assign(es) {
				if !a.hidden {
					m[es[i]] = a.name
				}
			}
			return m
		}
		first := byEntry(entries)
		seen := map[string]bool{}
		for _, name := range first {
			if seen[name] {
				t.Fatalf("%+v: two tools named %q: %v", n, name, first)
			}
			seen[name] = true
		}
		if len(first) != len(entries)-1 {
			t.Errorf("%+v: %d names for %d distinct entries", n, len(first), len(entries)-1)
		}
		for _, keeps := range []entryName{{"a", "__x"}, {"git", "hub__push"}} {
			if want := keeps.key + n.sep + keeps.name; first[keeps] != want {
				t.Errorf("%+v: %v is named %q, want %q (a clean key keeps its name)", n, keeps, first[keeps], want)
			}
		}
		r := rand.New(rand.NewSource(1))
		for range 20 {
			shuffled := append([]entryName(nil), entries...)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			if got := byEntry(shuffled); fmt.Sprint(got) != fmt.Sprint(first) {
				t.Fatalf("%+v: order %v gives\n%v\nwant\n%v", n, shuffled, got, first)
			}
		}
	}
}

func TestPlainNamesAreKeyAndName(t *testing.T) {
	got := naming{sep: ":"}.assign([]entryName{{"k", "a.b"}, {"k", "get weather"}, {"k", long}, {"k", "a.b"}})
	want := []assignedName{{name: "k:a.b"}, {name: "k:get weather"}, {name: "k:" + long}, {name: "k:a.b", hidden: true}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestNamingFor(t *testing.T) {
	for _, tt := range []struct {
		opts   Options
		client string
		want   naming
	}{
		{Options{}, "claude-ai", naming{sep: "__", strict: true, max: 64}},
		{Options{}, "claude-code", naming{sep: ":", max: 64 - len("mcp__") - 16 - len("__"), view: keepsStrict}},
		{Options{}, "codex-mcp-client", naming{sep: ":", max: 64 - len("mcp__") - 16 - len("__"), view: keepsStrict}},
		{Options{}, "gemini-cli-mcp-client", naming{sep: ":", max: 63 - len("mcp_") - 16 - len("_"), view: keepsGemini}},
		{Options{}, "cursor-vscode", naming{sep: ":", max: 60 - 16}},
		{Options{}, "Visual Studio Code", naming{sep: ":", max: 64 - len("mcp_") - 13 - len("_")}},
		{Options{}, "", naming{sep: ":"}},
		{Options{}, "some-client", naming{sep: ":"}},
		{Options{ServerNameLen: 3}, "claude-code", naming{sep: ":", max: 64 - len("mcp__all__"), view: keepsStrict}},
		{Options{ServerNameLen: 3}, "Visual Studio Code - Insiders", naming{sep: ":", max: 64 - len("mcp_all_")}},
		{Options{ServerNameLen: 3}, "claude-ai", naming{sep: "__", strict: true, max: 64}},
		{Options{Separator: ":"}, "claude-ai", naming{sep: ":", strict: true, max: 64}},
		{Options{Separator: "."}, "claude-code", naming{sep: ".", max: 41, view: keepsStrict}},
		{Options{StrictNames: true}, "some-client", naming{sep: "__", strict: true, max: 64}},
		{Options{StrictNames: true}, "claude-code", naming{sep: "__", strict: true, max: 41, view: keepsStrict}},
		{Options{StrictNames: true, Separator: "-"}, "", naming{sep: "-", strict: true, max: 64}},
	} {
		if got := tt.opts.namingFor(tt.client); got != tt.want {
			t.Errorf("%+v for %q: got %+v, want %+v", tt.opts, tt.client, got, tt.want)
		}
	}
}

// A name too long for the room is its key, the separator, the start of
// its own name, "_" and the hash of the full name: readable, the same on
// every run; a long key keeps a third of the room.
func TestShortenedNamesAreReadable(t *testing.T) {
	const tool = "add_pull_request_review_comment_to_pending_review"
	got := naming{sep: ":", max: 41}.assign([]entryName{{"github", tool}, {"github", "get_me"}, {"a_very_long_server_key", tool}})
	want := []assignedName{
		{name: "github:add_pull_request_review_c_" + hash8("github:"+tool), change: shortened},
		{name: "github:get_me"},
		{name: "a_very_lon:add_pull_request_revi_" + hash8("a_very_long_server_key:"+tool), change: shortened},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
		if len(got[i].name) > 41 {
			t.Errorf("%d: %q has %d characters, over 41", i, got[i].name, len(got[i].name))
		}
	}
	// A room too small for a readable name is taken to be minNameLen.
	if got := (naming{sep: ":", max: 5}).assign([]entryName{{"github", tool}})[0].name; got != "gith:add_pull_r_"+hash8("github:"+tool) {
		t.Errorf("with a room of 5: %q", got)
	}
}

// awkwardTools are a child's tools with names that strict clients refuse.
var awkwardTools = []string{
	`{"name":"immich.assets.list","description":"dotted"}`,
	`{"name":"get weather"}`,
	`{"name":"` + long + `"}`,
	`{"name":"a.b"}`,
	`{"name":"a_b"}`,
	`{"name":"ok"}`,
}

// namesServer is toolServer(awkwardTools) whose tools/call answers with
// the name it was called by.
func namesServer(method string, params []byte) string {
	if method == "tools/call" {
		name, _ := jsonrpc.StringMember(params, "name")
		return `{"content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, name)) + `}]}`
	}
	return toolServer(awkwardTools...)(method, params)
}

func initAs(client string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + client + `","version":"1"}}}`
}

// listedTools initializes as client and returns the names listed.
func listedTools(t *testing.T, h *harness, client string) []string {
	t.Helper()
	h.exchange(initAs(client))
	var list struct {
		Result struct{ Tools []struct{ Name string } }
	}
	if err := json.Unmarshal([]byte(h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)), &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// callsReachTheirTools calls each listed name and checks that the child
// was called under its own name.
func callsReachTheirTools(t *testing.T, h *harness, listed []string) {
	t.Helper()
	for i, name := range listed {
		var own string
		json.Unmarshal([]byte(awkwardTools[i]), &struct{ Name *string }{&own})
		got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, 10+i, name))
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, 10+i, own)
		if got != want {
			t.Errorf("tools/call %q:\n got %s\nwant %s", name, got, want)
		}
	}
}

func TestClaudeDesktopGetsStrictNames(t *testing.T) {
	h := serveFakes(t, "", map[string]func(string, []byte) string{"k": namesServer}, "k")
	listed := listedTools(t, h, "claude-ai")
	want := []string{"k__immich_assets_list", "k__get_weather", ("k__" + long)[:55] + "_" + hash8("k__"+long), "k__a_b_" + hash8("k__a.b"), "k__a_b", "k__ok"}
	if fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Fatalf("tools listed to claude-ai:\n got %q\nwant %q", listed, want)
	}
	callsReachTheirTools(t, h, listed)
	log := h.logged()
	warning := `tool names made to match ^[a-zA-Z0-9_-]{1,64}$ for client "claude-ai": 3 with characters replaced, 1 shortened, 1 told apart by a hash; --debug lists them`
	if strings.Count(log, "warning:") != 1 || !strings.Contains(log, warning) {
		t.Errorf("want one warning %q, log:\n%s", warning, log)
	}
}

func TestOtherClientsGetPlainNames(t *testing.T) {
	h := serveFakes(t, "", map[string]func(string, []byte) string{"k": namesServer}, "k")
	listed := listedTools(t, h, "some-client")
	want := []string{"k:immich.assets.list", "k:get weather", "k:" + long, "k:a.b", "k:a_b", "k:ok"}
	if fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Fatalf("tools listed:\n got %q\nwant %q", listed, want)
	}
	callsReachTheirTools(t, h, listed)
	if log := h.logged(); strings.Contains(log, "warning") {
		t.Errorf("warnings for a client that is not known:\n%s", log)
	}
}

func TestStrictNamesForced(t *testing.T) {
	h := serveOptions(t, Options{StrictNames: true, Start: fakeStarter(namesServer)}, "k")
	listed := listedTools(t, h, "some-client")
	for _, name := range listed {
		if !strictRE.MatchString(name) {
			t.Errorf("%q does not match %s", name, strictPattern)
		}
	}
	callsReachTheirTools(t, h, listed)
}

func TestExplicitSeparatorWinsWithAWarning(t *testing.T) {
	h := serveOptions(t, Options{Separator: ":", Start: fakeStarter(namesServer)}, "k")
	listed := listedTools(t, h, "claude-ai")
	if listed[0] != "k:immich_assets_list" || listed[5] != "k:ok" {
		t.Errorf("tools listed to claude-ai with --separator ':': %q", listed)
	}
	log := h.logged()
	for _, want := range []string{
		`client "claude-ai" accepts only tool names matching ^[a-zA-Z0-9_-]{1,64}$, and withholds every tool of a server when one name does not: --separator ":" breaks it in every name; without --separator it gets "__"`,
		`tool names that client "claude-ai" will change: 6 refused, with every other tool of the server`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no warning %q in log:\n%s", want, log)
		}
	}
}

// Each known client gets one warning naming what was done to the names for
// it, and what it will still do to them.
func TestKnownClientsAreWarned(t *testing.T) {
	fit := func(room int, client string) string {
		return fmt.Sprintf("tool names made to fit the %d characters client %q leaves them (with its prefix, for a server name of up to 16 characters: see --registered-as): 1 shortened", room, client)
	}
	apart := ", 1 told apart by a hash" // a.b, which the client would show as a_b
	for client, want := range map[string]string{
		"claude-code":           fit(41, "claude-code") + apart + `; tool names that client "claude-code" will change: 3 with characters replaced; --debug lists them`,
		"codex-mcp-client":      fit(41, "codex-mcp-client") + apart + `; tool names that client "codex-mcp-client" will change: 3 with characters replaced; --debug lists them`,
		"gemini-cli-mcp-client": fit(42, "gemini-cli-mcp-client") + `; tool names that client "gemini-cli-mcp-client" will change: 1 with characters replaced; --debug lists them`,
		"cursor-vscode":         fit(44, "cursor-vscode") + `; --debug lists them`,
	} {
		t.Run(client, func(t *testing.T) {
			h := serveFakes(t, "", map[string]func(string, []byte) string{"k": namesServer}, "k")
			listedTools(t, h, client)
			if log := h.logged(); strings.Count(log, "warning:") != 1 || !strings.Contains(log, want) {
				t.Errorf("want one warning %q, log:\n%s", want, log)
			}
		})
	}
}

// A client that gives the aggregator a longer name than it was told is
// warned of what its model API will do.
func TestLongerServerNameIsWarned(t *testing.T) {
	h := serveOptions(t, Options{ServerNameLen: 40, Start: fakeStarter(namesServer)}, "k")
	listedTools(t, h, "claude-code")
	want := `tool names that client "claude-code" will change: 2 refused by the model API (every request fails), 2 with characters replaced`
	if log := h.logged(); !strings.Contains(log, want) {
		t.Errorf("want a warning %q, log:\n%s", want, log)
	}
}

// fakeStarter starts fake children answering with answer.
func fakeStarter(answer func(string, []byte) string) func(config.Server) (Process, error) {
	return func(config.Server) (Process, error) { return startFake(answer), nil }
}

// longTools are tools of GitHub's MCP server and longer ones, two of which
// begin and end alike (a client that cuts the middle out gets one name).
var longTools = []string{
	"add_pull_request_review_comment_to_pending_review",
	"get_me",
	"submit_pending_pull_request_review_and_request_changes_with_all_comments_from_reviewers",
	"submit_pending_pull_request_review_and_approve_changes_with_all_comments_from_reviewers",
}

// longNamesServer lists longTools and one prompt named like the first, and
// answers a call or a get with the name it was given.
func longNamesServer(method string, params []byte) string {
	name, _ := jsonrpc.StringMember(params, "name")
	switch method {
	case "initialize":
		return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{}},"serverInfo":{"name":"fake","version":"1"}}`
	case "tools/list":
		var defs []string
		for _, n := range longTools {
			defs = append(defs, `{"name":"`+n+`","description":"does `+n+`"}`)
		}
		return `{"tools":[` + strings.Join(defs, ",") + `]}`
	case "prompts/list":
		return `{"prompts":[{"name":"` + longTools[0] + `"}]}`
	case "tools/call":
		return `{"content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, name)) + `}]}`
	case "prompts/get":
		return `{"messages":[{"role":"user","content":{"type":"text","text":` + string(jsonrpc.AppendString(nil, name)) + `}}]}`
	}
	return `{}`
}

// Every known client gets names that fit its limit with its prefix (for a
// server name of DefaultServerNameLen characters), each name once, readable
// (the key and the start of the tool's name), with the full name at the
// start of the description; calls and gets reach the server under its own
// names.
func TestNamesFitEveryKnownClient(t *testing.T) {
	for _, k := range knownClients {
		client := strings.TrimSuffix(k.names[0], "*")
		t.Run(k.label, func(t *testing.T) {
			h := serveFakes(t, "", map[string]func(string, []byte) string{"github": longNamesServer}, "github")
			h.exchange(initAs(client))
			var tools struct {
				Result struct {
					Tools []struct{ Name, Description string }
				}
			}
			if err := json.Unmarshal([]byte(h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)), &tools); err != nil {
				t.Fatal(err)
			}
			sep := Options{}.namingFor(client).sep
			seen := map[string]bool{}
			for i, tool := range tools.Result.Tools {
				own := longTools[i]
				if whole := k.prefix(DefaultServerNameLen) + len(tool.Name); whole > k.limit || k.strict && !strictRE.MatchString(tool.Name) || seen[tool.Name] {
					t.Errorf("%q (%d characters with the prefix) does not fit %s's %d, or is listed twice", tool.Name, whole, k.label, k.limit)
				}
				seen[tool.Name] = true
				if tool.Name != "github"+sep+own {
					if !strings.HasPrefix(tool.Name, "github"+sep+own[:20]) || !strings.HasPrefix(tool.Description, "(github"+sep+own+") does "+own) {
						t.Errorf("shortened %q, described %q: want the key, the start of %q and the full name first in the description", tool.Name, tool.Description, own)
					}
				}
				got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, 10+i, tool.Name))
				if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, 10+i, own); got != want {
					t.Errorf("tools/call %q:\n got %s\nwant %s", tool.Name, got, want)
				}
			}
			if len(seen) != len(longTools) {
				t.Errorf("%d tools listed, want %d", len(seen), len(longTools))
			}
			var prompts struct {
				Result struct{ Prompts []struct{ Name string } }
			}
			json.Unmarshal([]byte(h.exchange(`{"jsonrpc":"2.0","id":3,"method":"prompts/list"}`)), &prompts)
			if len(prompts.Result.Prompts) != 1 || len(prompts.Result.Prompts[0].Name) != len(tools.Result.Tools[0].Name) {
				t.Fatalf("prompts listed: %+v, want one named like the tool %q", prompts.Result.Prompts, tools.Result.Tools[0].Name)
			}
			got := h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":%q}}`, prompts.Result.Prompts[0].Name))
			if !strings.Contains(got, `"text":"`+longTools[0]+`"`) {
				t.Errorf("prompts/get %q: %s", prompts.Result.Prompts[0].Name, got)
			}
		})
	}
}

// A client that replaces characters (Claude Code, Codex: all outside
// [a-zA-Z0-9_-]; Gemini CLI: all outside [a-zA-Z0-9_.:-]) gets names that
// stay apart once it has replaced them: else one tool is lost, or the
// model API refuses every request for two tools of one name. The one that
// needs no replacing keeps its name, whatever the order.
func TestNamesStayApartAsTheClientShowsThem(t *testing.T) {
	entries := []entryName{{"k", "a.b"}, {"k", "a_b"}, {"k", "a b"}, {"k.x", "y"}, {"k_x", "y"}, {"k", "x_y"}, {"k", "ok"}}
	for _, client := range []string{"claude-code", "codex-mcp-client", "gemini-cli-mcp-client"} {
		n := Options{}.namingFor(client)
		reversed := slices.Clone(entries)
		slices.Reverse(reversed)
		for _, order := range [][]entryName{entries, reversed} {
			seen := map[string]string{}
			got := n.assign(order)
			for i, a := range got {
				if a.hidden {
					t.Errorf("%s: %v hidden", client, order[i])
					continue
				}
				k, _ := lookupClient(client)
				v := k.chars.seen(a.name) // as the client shows it
				if other, dup := seen[v]; dup {
					t.Errorf("%s shows %q and %q both as %q", client, other, a.name, v)
				}
				seen[v] = a.name
			}
			for i, e := range order {
				if e == (entryName{"k", "a_b"}) && got[i].name != "k:a_b" {
					t.Errorf("%s: k:a_b listed as %q, want its own name", client, got[i].name)
				}
			}
		}
	}
}
