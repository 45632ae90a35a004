package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

var strictRE = regexp.MustCompile(naming.StrictPattern)

// long is a tool name of 100 characters.
var long = strings.Repeat("very_long_tool_name_", 5)

// hash8 is the short hash of a full name, computed here independently.
func hash8(full string) string {
	sum := sha256.Sum256([]byte(full))
	return hex.EncodeToString(sum[:])[:8]
}

// Options give the naming its settings (naming.Settings.For has the
// table of every client): a server name of DefaultServerNameLen
// characters unless Options.ServerNameLen says, the separator and the
// strict form asked for.
func TestNamingFor(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts   Options
		client string
		want   naming.Scheme
	}{
		{Options{}, "claude-code", naming.Scheme{Sep: ":", Max: 64 - len("mcp__") - DefaultServerNameLen - len("__"), View: naming.KeepsStrict}},
		{Options{}, "some-client", naming.Scheme{Sep: ":"}},
		{Options{ServerNameLen: 3}, "claude-code", naming.Scheme{Sep: ":", Max: 64 - len("mcp__all__"), View: naming.KeepsStrict}},
		{Options{Separator: "."}, "claude-code", naming.Scheme{Sep: ".", Max: 41, View: naming.KeepsStrict}},
		{Options{StrictNames: true}, "some-client", naming.Scheme{Sep: "__", Strict: true, Max: 64}},
		{Options{StrictNames: true, Separator: "-"}, "", naming.Scheme{Sep: "-", Strict: true, Max: 64}},
	} {
		if got := tt.opts.namingFor(tt.client); got != tt.want {
			t.Errorf("%+v for %q: got %+v, want %+v", tt.opts, tt.client, got, tt.want)
		}
	}
}

// awkwardTools are a child's tools with names that strict clients refuse.
var awkwardTools = []string{
	`{"name":"immich.assets.list","description":"dotted","inputSchema":{"type":"object"}}`,
	`{"name":"get weather","inputSchema":{"type":"object"}}`,
	`{"name":"` + long + `","inputSchema":{"type":"object"}}`,
	`{"name":"a.b","inputSchema":{"type":"object"}}`,
	`{"name":"a_b","inputSchema":{"type":"object"}}`,
	`{"name":"ok","inputSchema":{"type":"object"}}`,
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	h := serveOptions(t, Options{StrictNames: true, Start: fakeStarter(namesServer)}, "k")
	listed := listedTools(t, h, "some-client")
	for _, name := range listed {
		if !strictRE.MatchString(name) {
			t.Errorf("%q does not match %s", name, naming.StrictPattern)
		}
	}
	callsReachTheirTools(t, h, listed)
}

func TestExplicitSeparatorWinsWithAWarning(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
			defs = append(defs, `{"name":"`+n+`","description":"does `+n+`","inputSchema":{"type":"object"}}`)
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
	t.Parallel()
	for _, k := range naming.Clients() {
		if k.Limit == 0 && !k.Strict { // known for its start-up only
			continue
		}
		client := k.Name()
		t.Run(k.Label, func(t *testing.T) {
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
			sep := Options{}.namingFor(client).Sep
			seen := map[string]bool{}
			for i, tool := range tools.Result.Tools {
				own := longTools[i]
				if whole := k.Prefix(DefaultServerNameLen) + len(tool.Name); whole > k.Limit || k.Strict && !strictRE.MatchString(tool.Name) || seen[tool.Name] {
					t.Errorf("%q (%d characters with the prefix) does not fit %s's %d, or is listed twice", tool.Name, whole, k.Label, k.Limit)
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
