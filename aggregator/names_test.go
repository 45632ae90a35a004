package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
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
		{Options{}, "claude-ai", naming{sep: "__", strict: true}},
		{Options{}, "claude-code", naming{sep: ":"}},
		{Options{}, "", naming{sep: ":"}},
		{Options{Separator: ":"}, "claude-ai", naming{sep: ":", strict: true}},
		{Options{Separator: "."}, "claude-code", naming{sep: "."}},
		{Options{StrictNames: true}, "some-client", naming{sep: "__", strict: true}},
		{Options{StrictNames: true, Separator: "-"}, "", naming{sep: "-", strict: true}},
	} {
		if got := tt.opts.namingFor(tt.client); got != tt.want {
			t.Errorf("%+v for %q: got %+v, want %+v", tt.opts, tt.client, got, tt.want)
		}
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

// Each known client gets one warning naming what it will do to the names.
func TestKnownClientsAreWarned(t *testing.T) {
	for client, want := range map[string]string{
		"claude-code":           `tool names that client "claude-code" will change: 3 with characters replaced; --debug lists them`,
		"codex-mcp-client":      `tool names that client "codex-mcp-client" will change: 3 with characters replaced, 1 shortened with a hash; --debug lists them`,
		"gemini-cli-mcp-client": `tool names that client "gemini-cli-mcp-client" will change: 1 with characters replaced, 1 truncated; --debug lists them`,
		"cursor-vscode":         `tool names that client "cursor-vscode" will change: 1 dropped; --debug lists them`,
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

// fakeStarter starts fake children answering with answer.
func fakeStarter(answer func(string, []byte) string) func(config.Server) (Process, error) {
	return func(config.Server) (Process, error) { return startFake(answer), nil }
}
