package capabilities

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

func TestClientCapabilitiesRelayedToChildren(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{}`},
		// As the client wrote them, byte for byte, unknown keys included.
		{`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`,
			`{ "sampling" : {"tools":{}}, "roots":{"listChanged":true},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}},"future":[1] }`},
		{`{"elicitation":{"form":{},"url":{}}}`, `{"elicitation":{"form":{},"url":{}}}`},
		{`{"sampling":{},"tasks":{"list":{}},"x":1}`, `{"sampling":{},"tasks":{"list":{}},"x":1}`},
		{`null`, `{}`},
	} {
		caps := ParseClient([]byte(tc.in))
		if string(caps.Raw()) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.in, caps.Raw(), tc.want)
		}
	}
	caps := ParseClient([]byte(`{"sampling":{},"roots":null,"experimental":{}}`))
	if !caps.Declared("sampling") || caps.Declared("roots") || caps.Declared("elicitation") {
		t.Errorf("declared: %v", caps.relayed)
	}
}

// TestParseClient: the raw capabilities servers get, byte for byte (or {}
// for what is not an object), and which of the relayed capabilities the
// client declared: every member of them that is not null.
func TestParseClient(t *testing.T) {
	for _, tc := range []struct {
		name, in, raw string
		declared      []string // of sampling, elicitation, roots, tasks
	}{
		{"empty", `{}`, `{}`, nil},
		{"missing", ``, `{}`, nil},
		{"null", `null`, `{}`, nil},
		{"array", `[{"sampling":{}}]`, `{}`, nil},
		{"string", `"sampling"`, `{}`, nil},
		{"every relayed one", `{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true},"tasks":{"requests":{}}}`,
			`{"sampling":{},"elicitation":{"form":{}},"roots":{"listChanged":true},"tasks":{"requests":{}}}`,
			[]string{"sampling", "elicitation", "roots", "tasks"}},
		{"null members", `{"sampling":null,"roots":{},"tasks":null}`, `{"sampling":null,"roots":{},"tasks":null}`, []string{"roots"}},
		// Only null leaves one out: false, [] or a string declare it.
		{"false and odd values", `{"sampling":false,"elicitation":"yes","roots":[]}`, `{"sampling":false,"elicitation":"yes","roots":[]}`,
			[]string{"sampling", "elicitation", "roots"}},
		{"extensions and experimental kept", `{ "extensions" : { "io.modelcontextprotocol/ui" : { "mimeTypes" : [ "text/html;profile=mcp-app" ] } } , "experimental":{"x" :1} }`,
			`{ "extensions" : { "io.modelcontextprotocol/ui" : { "mimeTypes" : [ "text/html;profile=mcp-app" ] } } , "experimental":{"x" :1} }`, nil},
		{"unknown keys kept", `{"future":[1,2],"elicitation":{},"a\u0062":"\u00e9"}`, `{"future":[1,2],"elicitation":{},"a\u0062":"\u00e9"}`,
			[]string{"elicitation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []byte
			if tc.in != "" {
				in = []byte(tc.in)
			}
			caps := ParseClient(in)
			if got := string(caps.Raw()); got != tc.raw {
				t.Errorf("Raw() = %s, want %s", got, tc.raw)
			}
			for _, name := range []string{"sampling", "elicitation", "roots", "tasks", "extensions", "experimental", "future"} {
				want := slices.Contains(tc.declared, name)
				if got := caps.Declared(name); got != want {
					t.Errorf("Declared(%q) = %v, want %v", name, got, want)
				}
			}
			if !caps.Declared("") {
				t.Errorf(`Declared("") = false, want true`)
			}
		})
	}
}

// TestZeroClient: before the client declared anything.
func TestZeroClient(t *testing.T) {
	var caps Client
	if got := string(caps.Raw()); got != `{}` {
		t.Errorf("Raw() = %s, want {}", got)
	}
	if caps.Declared("sampling") || !caps.Declared("") {
		t.Errorf(`Declared("sampling") = %v, Declared("") = %v; want false, true`, caps.Declared("sampling"), caps.Declared(""))
	}
}

// describe is what a Server holds, in one line: the flags set, then the
// raw members kept for Merge.
func describe(s Server) string {
	var parts []string
	for _, f := range []struct {
		on   bool
		name string
	}{
		{s.Tools, "tools"}, {s.Prompts, "prompts"}, {s.Resources, "resources"}, {s.Subscribe, "subscribe"},
		{s.Logging, "logging"}, {s.Completions, "completions"}, {s.Apps, "apps"}, {s.TasksList, "tasks.list"},
	} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	if s.tasks != nil {
		parts = append(parts, "tasks="+string(s.tasks))
	}
	for _, ms := range []struct {
		name string
		ms   []jsonrpc.RawMember
	}{{"extensions", s.extensions}, {"experimental", s.experimental}, {"others", s.others}} {
		if ms.ms != nil {
			parts = append(parts, ms.name+"="+string(appendObject(nil, ms.ms)))
		}
	}
	return strings.Join(parts, " ")
}

// TestParseServer: which members a server declared (null and false are
// not declared), with the ones Merge passes on kept byte for byte.
func TestParseServer(t *testing.T) {
	for _, tc := range []struct{ name, result, want string }{
		{"no capabilities", `{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}`, ``},
		{"null", `{"capabilities":null}`, ``},
		{"array", `{"capabilities":[{"tools":{}}]}`, ``},
		{"string", `{"capabilities":"tools"}`, ``},
		{"empty", `{"capabilities":{}}`, ``},
		{"each list", `{"capabilities":{"tools":{},"prompts":{"listChanged":true},"resources":{},"logging":{},"completions":{}}}`,
			`tools prompts resources logging completions`},
		{"null and false", `{"capabilities":{"tools":null,"prompts":false,"resources":null,"logging":false,"completions":null}}`, ``},
		{"true", `{"capabilities":{"tools":true}}`, `tools`},
		{"subscribe", `{"capabilities":{"resources":{ "subscribe" : true }}}`, `resources subscribe`},
		{"subscribe false", `{"capabilities":{"resources":{"subscribe":false,"listChanged":true}}}`, `resources`},
		{"subscribe not a boolean", `{"capabilities":{"resources":{"subscribe":"true"}}}`, `resources`},
		{"apps", `{"capabilities":{"extensions":{ "io.modelcontextprotocol/ui" : { "a" : 1 } , "x/y":[] }}}`,
			`apps extensions={"io.modelcontextprotocol/ui":{ "a" : 1 },"x/y":[]}`},
		{"apps null", `{"capabilities":{"extensions":{"io.modelcontextprotocol/ui":null}}}`, `apps extensions={"io.modelcontextprotocol/ui":null}`},
		{"extensions empty", `{"capabilities":{"extensions":{}}}`, ``},
		{"extensions null", `{"capabilities":{"extensions":null}}`, ``},
		{"experimental", `{"capabilities":{"experimental":{"b" : [1, 2],"a":{ }}}}`, `experimental={"b":[1, 2],"a":{ }}`},
		{"experimental not an object", `{"capabilities":{"experimental":"on"}}`, ``},
		{"tasks", `{"capabilities":{"tasks":{ "cancel" : { } }}}`, `tasks={ "cancel" : { } }`},
		{"tasks.list", `{"capabilities":{"tasks":{"list":{},"requests":{"tools":{"call":{}}}}}}`,
			`tasks.list tasks={"list":{},"requests":{"tools":{"call":{}}}}`},
		{"tasks null", `{"capabilities":{"tasks":null}}`, ``},
		{"tasks false", `{"capabilities":{"tasks":false}}`, ``},
		{"unknown keys", `{"capabilities":{"future":{ "x" : 1 },"later":null,"sampling":{}}}`, `others={"future":{ "x" : 1 },"later":null,"sampling":{}}`},
		{"discover result", `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"tasks":{"list":{}}},"_meta":{}}`,
			`tools tasks.list tasks={"list":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describe(ParseServer([]byte(tc.result))); got != tc.want {
				t.Errorf("ParseServer(%s)\n got %s\nwant %s", tc.result, got, tc.want)
			}
		})
	}
}
