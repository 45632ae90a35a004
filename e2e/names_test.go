package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// awkwardNames are tool names that Claude Desktop refuses: dotted, spaced,
// 100 characters long, and two that collide once made strict.
var awkwardNames = []string{"immich.assets.list", "get weather", strings.Repeat("a_hundred_chars_", 6) + "long", "a.b", "a_b"}

var strictName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// awkwardServer is a test server whose only tools besides the built-in
// ones are awkwardNames, answering with the name they were called by.
func awkwardServer(t *testing.T, key string) server {
	names, _ := json.Marshal(awkwardNames)
	return ts(key, "-tool-names", string(names))
}

// initializeAs performs the handshake as the client named client.
func (s *session) initializeAs(client string) {
	s.t.Helper()
	s.result("initialize", fmt.Sprintf(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}`, client))
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// awkwardListed returns the names listed for awkwardNames (the last
// len(awkwardNames) tools of a single awkward server).
func awkwardListed(t *testing.T, s *session) []string {
	t.Helper()
	names := toolNames(t, s.result("tools/list", ""))
	if len(names) < len(awkwardNames) {
		t.Fatalf("tools/list has %d tools: %q", len(names), names)
	}
	return names[len(names)-len(awkwardNames):]
}

// Claude Desktop (clientInfo.name "claude-ai") gets every name in the form
// it accepts, and each call reaches the tool under its own name.
func TestStrictNamesForClaudeDesktop(t *testing.T) {
	s := startConfig(t, []server{awkwardServer(t, "im")})
	s.initializeAs("claude-ai")
	all := toolNames(t, s.result("tools/list", ""))
	for _, name := range all {
		if !strictName.MatchString(name) {
			t.Errorf("listed to claude-ai: %q does not match %s", name, strictName)
		}
	}
	listed := awkwardListed(t, s)
	if listed[0] != "im__immich_assets_list" || listed[1] != "im__get_weather" || listed[4] != "im__a_b" ||
		len(listed[2]) != 64 || !strings.HasPrefix(listed[2], "im__a_hundred_chars_") || !strings.HasPrefix(listed[3], "im__a_b_") {
		t.Errorf("names listed to claude-ai: %q", listed)
	}
	for i, name := range listed {
		if got := toolText(t, s.result("tools/call", fmt.Sprintf(`{"name":%q}`, name))); got != awkwardNames[i] {
			t.Errorf("tools/call %q reached %q, want %q", name, got, awkwardNames[i])
		}
	}
	s.waitStderr("tool names made to match ^[a-zA-Z0-9_-]{1,64}$ for client \"claude-ai\": 3 with characters replaced, 1 shortened, 1 told apart by a hash; --debug lists them")
	if n := strings.Count(s.stderrText(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, s.stderrText())
	}

	// The same names on another run: a model's references stay valid.
	again := startConfig(t, []server{awkwardServer(t, "im")})
	again.initializeAs("claude-ai")
	if second := awkwardListed(t, again); strings.Join(second, " ") != strings.Join(listed, " ") {
		t.Errorf("second run lists %q, first %q", second, listed)
	}
}

// Another client gets KEY:name as the server wrote it.
func TestPlainNamesForOtherClients(t *testing.T) {
	s := startConfig(t, []server{awkwardServer(t, "im")})
	s.initializeAs("some-client")
	listed := awkwardListed(t, s)
	for i, name := range listed {
		if name != "im:"+awkwardNames[i] {
			t.Errorf("listed %q, want %q", name, "im:"+awkwardNames[i])
		}
		if got := toolText(t, s.result("tools/call", fmt.Sprintf(`{"name":%q}`, name))); got != awkwardNames[i] {
			t.Errorf("tools/call %q reached %q", name, got)
		}
	}
}

// --strict-names gives any client the strict form; --debug lists each
// changed name.
func TestStrictNamesFlag(t *testing.T) {
	s := startConfig(t, []server{awkwardServer(t, "im")}, "--strict-names", "--debug")
	s.initializeAs("some-client")
	for _, name := range toolNames(t, s.result("tools/list", "")) {
		if !strictName.MatchString(name) {
			t.Errorf("%q does not match %s", name, strictName)
		}
	}
	s.waitStderr(`tool "get weather" of server "im" is listed as "im__get_weather" (with characters replaced)`)
}

// An explicit --separator wins, with a warning when the client refuses it.
func TestSeparatorGivenForClaudeDesktop(t *testing.T) {
	s := startConfig(t, []server{awkwardServer(t, "im")}, "--separator", ":")
	s.initializeAs("claude-ai")
	if listed := awkwardListed(t, s); listed[0] != "im:immich_assets_list" {
		t.Errorf("listed %q", listed)
	}
	s.waitStderr(`--separator ":" breaks it in every name; without --separator it gets "__"`)
}

// --check shows the name a strict client gets where it differs by more
// than the separator.
func TestCheckShowsStrictNames(t *testing.T) {
	r := runToExit(t, nil, "", "--check", "--config", writeConfig(t, awkwardServer(t, "im")))
	if r.code != 0 {
		t.Fatalf("--check exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	rep := parseCheck(t, r.stdout)
	if got := rep.clients["im:get weather"]["Claude Desktop"]; got != "im__get_weather" {
		t.Errorf("strict name of im:get weather: %q\n%s", got, r.stdout)
	}
	if got, ok := rep.clients["im:echo"]; ok {
		t.Errorf("im:echo shows names %q though only the separator differs", got)
	}
	if want := `Strict clients (Claude Desktop, or any with --strict-names) get "__" between server key and tool name.`; rep.strictNote != want {
		t.Errorf("note %q, want %q", rep.strictNote, want)
	}
}

// --check shows, per tool, the name each known client gets where it
// differs, shortened to fit the client's limit with its prefix for a
// server name of 16 characters; --registered-as states the real name.
func TestCheckShowsEachClientsName(t *testing.T) {
	const long = "add_pull_request_review_comment_to_pending_review"
	cfg := writeConfig(t, ts("github", "-tool-names", `["`+long+`"]`))
	sum := sha256.Sum256([]byte("github:" + long))
	hash := hex.EncodeToString(sum[:4])
	// shortened is the name in a room of n characters: the key, the start
	// of the tool's name, "_" and the hash of the full name.
	shortened := func(n int) string { return "github:" + long[:n-len("github:")-len("_")-8] + "_" + hash }
	for _, tt := range []struct {
		flags []string
		want  map[string]string // client -> name; "" for none shown
	}{
		{nil, map[string]string{
			"Claude Code": shortened(64 - len("mcp__") - 16 - len("__")),
			"Codex":       shortened(64 - len("mcp__") - 16 - len("__")),
			"Gemini CLI":  shortened(63 - len("mcp_") - 16 - len("_")),
			"Cursor":      shortened(60 - 16),
			"VS Code":     shortened(64 - len("mcp_") - 13 - len("_")),
		}},
		{[]string{"--registered-as", "aggregator"}, map[string]string{
			"Claude Code": shortened(64 - len("mcp__aggregator__")),
			"Cursor":      shortened(60 - len("aggregator")),
		}},
		{[]string{"--registered-as", "3"}, map[string]string{
			"Claude Code": shortened(64 - len("mcp__all__")),
			"Cursor":      "", // 56 characters fit in 60 - 3
		}},
	} {
		r := runToExit(t, nil, "", append([]string{"--check", "--config", cfg}, tt.flags...)...)
		if r.code != 0 {
			t.Fatalf("--check %q exit %d:\n%s\n%s", tt.flags, r.code, r.stdout, r.stderr)
		}
		got := parseCheck(t, r.stdout).clients["github:"+long]
		for client, want := range tt.want {
			if got[client] != want {
				t.Errorf("--check %q: %s gets %q, want %q\n%s", tt.flags, client, got[client], want, r.stdout)
			}
		}
	}
}

// --registered-as takes a name or a length from 1 to 64; anything else is
// a usage error.
func TestRegisteredAsFlag(t *testing.T) {
	cfg := writeConfig(t, ts("github"))
	for _, bad := range []string{"0", "65", ""} {
		r := runToExit(t, nil, "", "--config", cfg, "--registered-as", bad)
		if r.code != 2 || !strings.Contains(r.stderr, "--registered-as "+bad+":") {
			t.Errorf("--registered-as %q: exit %d, stderr:\n%s", bad, r.code, r.stderr)
		}
	}
}
