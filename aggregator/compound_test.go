package aggregator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// compoundConfig parses a config whose top-level tools is tools and
// returns its compound tools.
func compoundConfig(t *testing.T, tools string) []config.Compound {
	t.Helper()
	cfg, err := config.Parse("test.json", []byte(`{"mcpServers": {}, "tools": `+tools+`}`), config.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Compound
}

const filesCompound = `{"files": {"description": "Work with files.", "subtools": {
	"fs": {"tools": [{"name": "read", "description": "Read a file."}, {"name": "list"}]},
	"db": {"tools": [{"name": "query"}]}}}}`

// A compound tool is listed with its subtools, their descriptions and
// arguments, and enums for server and tool; a call reaches the subtool
// under its own name with args as its arguments, and its answer comes
// back byte for byte; a subtool it does not list, or that its server's
// entry hides, is refused and reaches no server.
func TestCompoundTool(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	h := filterHarness(t, f, Options{Compound: compoundConfig(t, filesCompound)},
		filtered(t, "fs", `"excludeTools": ["list"]`, "read", "list", "write"),
		filtered(t, "db", `"excludeTools": null`, "query"))
	line := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var list struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &list); err != nil {
		t.Fatal(err)
	}
	tools := list.Result.Tools
	if len(tools) != 4 || tools[3].Name != "files" {
		t.Fatalf("tools/list: %s", line)
	}
	wantDesc := "Work with files.\n\nCall one of these tools with {\"server\": ..., \"tool\": ..., \"args\": {...}}, args being that tool's arguments:\n" +
		"- server \"fs\", tool \"read\": Read a file.\n  args: read_arg (string)\n" +
		"- server \"db\", tool \"query\": does query\n  args: query_arg (string)"
	if tools[3].Description != wantDesc {
		t.Errorf("description:\n%s\nwant\n%s", tools[3].Description, wantDesc)
	}
	wantSchema := `{"properties":{"args":{"description":"The arguments of that tool, as this tool's description lists them ({} for none)","type":"object"},` +
		`"server":{"type":"string","enum":["fs","db"],"description":"The server of the tool to call, as this tool's description lists it"},` +
		`"tool":{"type":"string","enum":["read","query"],"description":"The tool to call, as this tool's description lists it"}},"required":["server","tool","args"],"type":"object"}`
	if string(tools[3].InputSchema) != wantSchema {
		t.Errorf("schema:\n%s\nwant\n%s", tools[3].InputSchema, wantSchema)
	}

	got := h.exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"files","arguments":{"server":"fs","tool":"read","args":{"read_arg":"a.txt"}},"_meta":{"progressToken":7}}}`)
	if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"fs/read"}]}}`; got != want {
		t.Errorf("files -> fs/read:\n got %s\nwant %s", got, want)
	}
	for i, args := range []string{`{"server":"fs","tool":"list","args":{}}`, `{"server":"fs","tool":"write","args":{}}`, `{"server":"db","tool":"read"}`} {
		got := h.exchange(`{"jsonrpc":"2.0","id":` + string(rune('4'+i)) + `,"method":"tools/call","params":{"name":"files","arguments":` + args + `}}`)
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "call one of fs/read, db/query") {
			t.Errorf("files %s answered %s", args, got)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Equal(f.calls, []string{"fs/read"}) || !slices.Equal(f.args, []string{`{"read_arg":"a.txt"}`}) {
		t.Errorf("the servers got %q with %q, want only fs/read with its args", f.calls, f.args)
	}
}

// A reload that changes only compound tools updates the list with one
// tools/list_changed and restarts nothing.
func TestReloadOfCompoundToolsRestartsNothing(t *testing.T) {
	t.Parallel()
	f := &toolFleet{}
	fs := filtered(t, "fs", `"excludeTools": null`, "read", "list")
	h := filterHarness(t, f, Options{}, fs)
	changed := reloadToCompound(t, h, []config.Server{fs}, compoundConfig(t, filesCompound)...)
	if strings.Join(changed, " ") != "notifications/tools/list_changed" {
		t.Errorf("list_changed heard: %q", changed)
	}
	if got := toolNames(t, h); got != "fs:read fs:list files" {
		t.Errorf("tools: %s", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.starts["fs"] != 1 {
		t.Errorf("fs started %d times", f.starts["fs"])
	}
}

// A session that only calls a compound tool starts the one server its
// call names, waits for it, and reaches the subtool, as a session per call
// does directly (a warm start: both servers ran before).
func TestACompoundCallStartsTheServerItNames(t *testing.T) {
	t.Parallel()
	entries := []config.Server{filtered(t, "fs", `"excludeTools": null`, "read", "list"), filtered(t, "db", `"excludeTools": null`, "query")}
	warm := serveEntries(t, Options{Start: (&toolFleet{}).start, Memory: newMapMemory(), Compound: compoundConfig(t, filesCompound)}, entries...)
	warm.exchange(initAs("mcp"))
	warm.closeInput()
	warm.rest()
	f := &toolFleet{}
	h := serveEntries(t, Options{Start: f.start, Memory: warm.a.opts.Memory, Compound: compoundConfig(t, filesCompound)}, entries...)
	h.exchange(initAs("mcp"))
	got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"files","arguments":{"server":"fs","tool":"read","args":{}}}}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"fs/read"}]}}`; got != want {
		t.Errorf("files -> fs/read in a session that listed nothing:\n got %s\nwant %s", got, want)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.starts) != 1 || f.starts["fs"] != 1 {
		t.Errorf("servers started: %v, want fs alone", f.starts)
	}
}
