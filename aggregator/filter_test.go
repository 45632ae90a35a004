package aggregator

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// toolFleet starts children that list the tools their entry's args name,
// each with a description and a schema, answer a call with KEY/NAME, and
// keeps every call that reached them and how often each key started.
type toolFleet struct {
	mu     sync.Mutex
	calls  []string // KEY/NAME
	args   []string // the arguments of each call, raw
	starts map[string]int
}

func (f *toolFleet) start(s config.Server) (Process, error) {
	var tools []string
	for _, name := range s.Args {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"description":"does %s","inputSchema":{"type":"object","properties":{"%s_arg":{"type":"string"}}}}`, name, name, name))
	}
	f.mu.Lock()
	if f.starts == nil {
		f.starts = map[string]int{}
	}
	f.starts[s.Key]++
	f.mu.Unlock()
	return startScripted(func(m *jsonrpc.Message, _ []byte, out io.Writer) {
		answer := func(result string) { out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
		switch m.Method {
		case "initialize":
			answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"f","version":"1"}}`)
		case "tools/list":
			answer(`{"tools":[` + strings.Join(tools, ",") + `]}`)
		case "tools/call":
			name, _ := jsonrpc.StringMember(m.Params, "name")
			args, _ := jsonrpc.Member(m.Params, "arguments")
			f.mu.Lock()
			f.calls = append(f.calls, s.Key+"/"+name)
			f.args = append(f.args, string(args))
			f.mu.Unlock()
			answer(`{"content":[{"type":"text","text":"` + s.Key + "/" + name + `"}]}`)
		}
	}), nil
}

func (f *toolFleet) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// filtered is an entry of the fleet with tools (its args) and the filter
// fields given as JSON members, read as the config package reads them.
func filtered(t testing.TB, key, fields string, tools ...string) config.Server {
	t.Helper()
	args, _ := jsonMarshal(tools)
	src := fmt.Sprintf(`{"mcpServers": {%q: {"command": "fake", "args": %s, %s}}}`, key, args, fields)
	cfg, err := config.Parse("test.json", []byte(src), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Servers[0]
}

func jsonMarshal(ss []string) (string, error) {
	var b []byte
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, s)
	}
	return string(append(b, ']')), nil
}

// filterHarness serves the entries, initialized, every child up.
func filterHarness(t testing.TB, f *toolFleet, opts Options, entries ...config.Server) *harness {
	t.Helper()
	opts.Start = f.start
	h := serveEntries(t, opts, entries...)
	h.exchange(initLine)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.exchange(`{"jsonrpc":"2.0","id":"l0","method":"tools/list"}`)
	return h
}

func callTool(h *harness, id int, name string) string {
	h.t.Helper()
	return h.exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, name))
}

// A hidden tool is absent from tools/list, and a call to it is refused
// with a clear error and never reaches its server, in every dialect.
func TestFilterHidesTools(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	h := filterHarness(t, f, Options{},
		filtered(t, "gh", `"excludeTools": ["delete_repo"]`, "create_issue", "delete_repo"),
		filtered(t, "db", `"enabled_tools": ["query"], "disabled_tools": ["query"], "disabledTools": ["x"]`, "query", "drop_table"),
		filtered(t, "fs", `"includeTools": ["read_file", "write_file"], "hiddenTools": ["write_file"]`, "read_file", "write_file", "move"),
		filtered(t, "plain", `"disabledTools": null`, "a", "b"),
	)
	if got := toolNames(t, h); got != "gh:create_issue fs:read_file plain:a plain:b" {
		t.Errorf("tools: %s", got)
	}
	for i, name := range []string{"gh:delete_repo", "db:query", "db:drop_table", "fs:write_file", "fs:move"} {
		got := callTool(h, 10+i, name)
		key, _, _ := strings.Cut(name, ":")
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Tool not available: %s is hidden by the aggregator's config (server \"%s\")"}}`, 10+i, name, key)
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	if got := callTool(h, 20, "gh:create_issue"); !strings.Contains(got, `"text":"gh/create_issue"`) {
		t.Errorf("gh:create_issue answered %s", got)
	}
	if got := f.called(); !slices.Equal(got, []string{"gh/create_issue"}) {
		t.Errorf("the servers got the calls %q, want only gh/create_issue", got)
	}
}

// A renamed tool is listed under its new name with its server's
// description and schema, and reaches its server under its own name; its
// own name is not served.
func TestFilterRenamesTools(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	h := filterHarness(t, f, Options{},
		filtered(t, "fs", `"exposedTools": [{"original": "read_file", "exposed": "cat"}, "list"]`, "read_file", "list", "delete"))
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"tools":[` +
		`{"name":"fs:cat","description":"does read_file","inputSchema":{"type":"object","properties":{"read_file_arg":{"type":"string"}}}},` +
		`{"name":"fs:list","description":"does list","inputSchema":{"type":"object","properties":{"list_arg":{"type":"string"}}}}]}}`
	if got != want {
		t.Errorf("tools/list:\n got %s\nwant %s", got, want)
	}
	if got := callTool(h, 3, "fs:cat"); !strings.Contains(got, `"text":"fs/read_file"`) {
		t.Errorf("fs:cat answered %s", got)
	}
	if got := callTool(h, 4, "fs:read_file"); !strings.Contains(got, `"error"`) {
		t.Errorf("fs:read_file (renamed) answered %s", got)
	}
	if got := f.called(); !slices.Equal(got, []string{"fs/read_file"}) {
		t.Errorf("the server got the calls %q", got)
	}
}

// Filters apply by the server's own names before naming: a client served
// strict or shortened names gets the same tools, and is refused the same.
func TestFilterAppliesWhateverTheNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("long_", 10) + "tool"
	for _, tt := range []struct {
		name, client string
		opts         Options
		want         []string // prefixes of the names listed
	}{
		{"strict", "any", Options{StrictNames: true}, []string{"fs__cat", "fs__read_file", "fs__long_long_"}},
		{"shortened for Claude Code", "claude-code", Options{}, []string{"fs:cat", "fs:read_file", "fs:long_long_"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &toolFleet{}
			h := serveEntries(t, Options{Start: f.start, StrictNames: tt.opts.StrictNames},
				filtered(t, "fs", `"excludeTools": ["delete.all"], "exposedTools": [{"original": "a.b", "exposed": "cat"}, "read_file", "delete.all", "`+long+`"]`, "a.b", "read_file", "delete.all", "x.y", long))
			h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + tt.client + `","version":"1"}}}`)
			got := strings.Fields(toolNames(t, h))
			if len(got) != len(tt.want) {
				t.Fatalf("tools: %q, want names starting %q", got, tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("tool %d is %q, want it to start %q", i, got[i], tt.want[i])
				}
			}
			if !strings.Contains(got[2], "_") || got[2] == "fs:"+long {
				t.Errorf("the long name %q is not shortened", got[2])
			}
			if got := callTool(h, 3, got[0]); !strings.Contains(got, `"text":"fs/a.b"`) {
				t.Errorf("the renamed tool answered %s", got)
			}
			if got := f.called(); !slices.Equal(got, []string{"fs/a.b"}) {
				t.Errorf("the server got the calls %q", got)
			}
		})
	}
}

// A reload that changes only what servers expose rebuilds the lists, with
// one tools/list_changed, and restarts no server.
func TestReloadOfFiltersRestartsNothing(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	h := filterHarness(t, f, Options{}, filtered(t, "a", `"disabledTools": null`, "x", "y"), filtered(t, "b", `"disabledTools": null`, "z"))
	changed := reloadTo(t, h, filtered(t, "a", `"excludeTools": ["x"]`, "x", "y"), filtered(t, "b", `"exposedTools": [{"original": "z", "exposed": "zz"}]`, "z"))
	if strings.Join(changed, " ") != "notifications/tools/list_changed" {
		t.Errorf("list_changed heard: %q, want one tools/list_changed", changed)
	}
	if got := toolNames(t, h); got != "a:y b:zz" {
		t.Errorf("tools after the reload: %s", got)
	}
	if got := callTool(h, 3, "a:x"); !strings.Contains(got, "hidden") {
		t.Errorf("a:x after the reload answered %s", got)
	}
	if got := reloadTo(t, h, filtered(t, "a", `"excludeTools": ["x"]`, "x", "y"), filtered(t, "b", `"exposedTools": [{"original": "z", "exposed": "zz"}]`, "z")); len(got) != 0 {
		t.Errorf("an unchanged reload announced %q", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.starts["a"] != 1 || f.starts["b"] != 1 {
		t.Errorf("starts %v: a reload of filters restarted a server", f.starts)
	}
}

// A filter naming a tool the server does not offer gets one warning
// naming the server, the entry and the closest real name.
func TestFilterWarnsOfUnknownTools(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	h := filterHarness(t, f, Options{}, filtered(t, "gh", `"excludeTools": ["delete_repos"]`, "create_issue", "delete_repo"))
	h.a.catalog.rebuild() // a second rebuild warns no more
	want := `warning: server "gh": mcpServers.gh.excludeTools[0]: "delete_repos" is not a tool of this server (the closest it offers is "delete_repo"; see README.md#choose-what-each-server-offers)`
	if got := h.logged(); strings.Count(got, want) != 1 {
		t.Errorf("log:\n%s\nwant once: %s", got, want)
	}
}

// An app's UI calls its server's tools by their own names: a tool the
// entry hides is not called by that name either.
func TestFilterHidesToolsFromApps(t *testing.T) {
	t.Parallel()
	app := appServer("app", "ext", "get-time", "delete")
	var reached atomic.Bool
	h := serveEntries(t, Options{Start: func(config.Server) (Process, error) {
		return startFake(func(method string, params []byte) string {
			if name, _ := jsonrpc.StringMember(params, "name"); method == "tools/call" && name == "delete" {
				reached.Store(true)
			}
			return app(method, params)
		}), nil
	}}, filtered(t, "app", `"excludeTools": ["delete"]`))
	h.exchange(initLine)
	h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if got := callTool(h, 3, "get-time"); !strings.Contains(got, "app got get-time") {
		t.Errorf("get-time answered %s", got)
	}
	if got := callTool(h, 4, "delete"); !strings.Contains(got, `"error"`) || reached.Load() {
		t.Errorf("delete (hidden) answered %s; reached the server: %v", got, reached.Load())
	}
}

// --check initializes every server with the capabilities clients declare,
// so that it lists what a client would see, and shows what each entry
// hides and renames, and the entries skipped.
func TestCheckDeclaresCapabilitiesAndShowsFilters(t *testing.T) {
	t.Parallel()
	f := newFleet()
	var out strings.Builder
	a := New(Options{Start: f.start, Servers: []config.Server{
		filtered(t, "a", `"excludeTools": ["x"], "exposedTools": [{"original": "y", "exposed": "why"}, "x"]`, "x", "y", "z"),
	}, Skipped: []config.Skipped{{Key: "web", Why: "a remote server"}}})
	if !a.Check(context.Background(), &out) {
		t.Fatalf("Check failed:\n%s", out.String())
	}
	f.mu.Lock()
	caps := f.inits["a"]
	f.mu.Unlock()
	if caps != checkCapabilities {
		t.Errorf("--check initialized the server with capabilities %s, want %s", caps, checkCapabilities)
	}
	for _, want := range []string{"\n  a:why\n", "Tools (1):", "  a: hides 2: x, z; renames y to why\n", "web     skipped", "  web: a remote server\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--check output lacks %q:\n%s", want, out.String())
		}
	}
}
