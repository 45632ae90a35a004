package aggregator

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The tests of what the aggregator does with a server's answers and list
// entries that a client cannot read (package shape).

// deep is a JSON value nested n arrays deep.
func deep(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// Every call gets one answer under its own id: the server's when it is
// well formed (byte for byte), else an error naming the server. The
// malformed ones reached the client as they were, and a client that drops
// them (the TypeScript SDK does) waited for its timeout; the one nested
// 20,000 deep was skipped as not JSON-RPC and never answered.
func TestMalformedAnswersBecomeErrorsNamingTheServer(t *testing.T) {
	answers := map[string]string{
		"errcode":  `"error":{"code":"boom","message":5}`,
		"nocode":   `"error":{"message":"no code"}`,
		"nomsg":    `"error":{"code":-32000}`,
		"fraction": `"error":{"code":1.5,"message":"x"}`,
		"null":     `"result":null`,
		"array":    `"result":[]`,
		"string":   `"result":"done"`,
		"deep":     `"result":` + deep(20000),
		"good":     `"error":{ "code" : -32000.0, "message":"kept \u0021", "data":{"a":[1, 2]} }`,
		"ok":       `"result":{ "content" : [], "x":"<&>" }`,
	}
	h := serveBadAndGood(t, `{}`, answerSession(`{"tools":{}}`, `{"name":"go","inputSchema":{"type":"object"}}`,
		func(m *jsonrpc.Message, _ []byte, out io.Writer) {
			if m.Method == "tools/call" {
				which, _ := jsonrpc.Member(m.Params, "arguments")
				tool, _ := jsonrpc.StringMember(which, "answer")
				fmt.Fprintf(out, "{\"jsonrpc\":\"2.0\",\"id\":%s,%s}\n", m.ID, answers[tool])
			}
		}))
	for i, tool := range []string{"errcode", "nocode", "nomsg", "fraction", "null", "array", "string", "deep", "good", "ok"} {
		id := fmt.Sprintf(`"c%d"`, i)
		got := h.exchange(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"bad:go","arguments":{"answer":"` + tool + `"}}}`)
		switch tool {
		case "good", "ok":
			if want := `{"jsonrpc":"2.0","id":` + id + `,` + answers[tool] + `}`; got != want {
				t.Errorf("%s: got  %s\nwant %s", tool, got, want)
			}
		default:
			prefix := `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"server \"bad\" `
			if !strings.HasPrefix(got, prefix) {
				t.Errorf("%s: got %.300s\nwant an error under id %s naming the server", tool, got, id)
			}
		}
	}
}

// A client's request nested too deep is answered under its own id (it was
// answered under null, which no client can match to its request).
func TestAClientRequestNestedTooDeepIsAnsweredUnderItsID(t *testing.T) {
	h := serveFakes(t, ":", map[string]func(string, []byte) string{"k": toolServer()}, "k")
	h.exchange(initLine)
	got := h.exchange(`{"jsonrpc":"2.0","id":"d1","method":"tools/call","params":{"name":"k:x","arguments":` + deep(20000) + `}}`)
	if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"d1","error":{"code":-32600,`) || !strings.Contains(got, "nested more than 10000 levels deep") {
		t.Errorf("got %s", got)
	}
}

// serveLists serves "bad", whose lists are bad's, beside "good", whose
// lists hold one entry each; both declare tools, prompts and resources.
func serveLists(t *testing.T, bad map[string]string) *harness {
	t.Helper()
	lists := func(l map[string]string) func(string, []byte) string {
		return func(method string, _ []byte) string {
			if method == "initialize" {
				return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{}},"serverInfo":{"name":"s","version":"1"}}`
			}
			return l[method]
		}
	}
	good := map[string]string{
		"tools/list":               `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`,
		"prompts/list":             `{"prompts":[{"name":"p"}]}`,
		"resources/list":           `{"resources":[{"uri":"good://r","name":"r"}]}`,
		"resources/templates/list": `{"resourceTemplates":[{"uriTemplate":"good://{x}","name":"x"}]}`,
	}
	return serve(t, ":", func(s config.Server) (Process, error) {
		if s.Key == "bad" {
			return startFake(lists(bad)), nil
		}
		return startFake(lists(good)), nil
	}, "bad", "good")
}

// One malformed entry costs its own place in the merged list, never the
// list: every good entry of every server stays, and one warning names the
// server and the entry (a client refused the whole merged list for it).
func TestAMalformedListEntryIsLeftOutAlone(t *testing.T) {
	bad := map[string]string{
		"tools/list": `{"tools":[` + strings.Join([]string{
			`{"name":"noschema"}`,
			`{"name":"stringschema","inputSchema":{"type":"string"}}`,
			`{"name":"annotated","inputSchema":{"type":"object"},"annotations":"x"}`,
			`{"name":"numdesc","description":5,"inputSchema":{"type":"object"}}`,
			`{"name":"x\r\u001b[2Kgithub:create_issue","inputSchema":{"type":"object"}}`,
			`{"name":"badprop","inputSchema":{"type":"object","properties":{"a":1}}}`,
			`{"name":"badicon","inputSchema":{"type":"object"},"icons":[{"mimeType":"image/png"}]}`,
			`{"name":"nulltitle","title":null,"inputSchema":{"type":"object"}}`,
			`{"name":"fine","title":"Fine","description":"d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"optional"},"icons":[{"src":"data:,","sizes":["any"],"theme":"dark"}],"_meta":{"k":1},"extra":"kept"}`,
		}, ",") + `]}`,
		"prompts/list": `{"prompts":[{"name":"argsx","arguments":"x"},{"name":"argnoname","arguments":[{"description":"d"}]},{"name":"bell\u0007"},{"name":"fine","arguments":[{"name":"a","required":true}]}]}`,
		"resources/list": `{"resources":[{"uri":"bad://noname"},{"uri":"bad://date","name":"d","annotations":{"lastModified":"yesterday"}},{"uri":"bad://prio","name":"p","annotations":{"priority":2}},` +
			`{"uri":"bad://fine","name":"fine","size":3,"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}}]}`,
		"resources/templates/list": `{"resourceTemplates":[{"uriTemplate":"bad://{noname}"},{"uriTemplate":"bad://{fine}","name":"fine"}]}`,
	}
	h := serveLists(t, bad)
	h.exchange(initLine)
	for _, tc := range []struct{ method, want string }{
		{"tools/list", `{"tools":[{"name":"bad:noschema","inputSchema":{"type":"object"}},{"name":"bad:fine","title":"Fine",` + bad["tools/list"][strings.Index(bad["tools/list"], `"description":"d"`):len(bad["tools/list"])-2] + `,{"name":"good:t","inputSchema":{"type":"object"}}]}`},
		{"prompts/list", `{"prompts":[{"name":"bad:fine","arguments":[{"name":"a","required":true}]},{"name":"good:p"}]}`},
		{"resources/list", `{"resources":[{"uri":"bad://fine","name":"fine","size":3,"annotations":{"audience":["user"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}},{"uri":"good://r","name":"r"}]}`},
		{"resources/templates/list", `{"resourceTemplates":[{"uriTemplate":"bad://{fine}","name":"fine"},{"uriTemplate":"good://{x}","name":"x"}]}`},
	} {
		for round := range 2 { // a list fetched again warns no more
			got := h.exchange(`{"jsonrpc":"2.0","id":2,"method":"` + tc.method + `"}`)
			if want := `{"jsonrpc":"2.0","id":2,"result":` + tc.want + `}`; got != want {
				t.Errorf("%s, round %d:\n got %s\nwant %s", tc.method, round, got, want)
			}
		}
	}
	log := h.logged()
	for _, want := range []string{
		`server "bad": tools/list: tool "noschema": "inputSchema" {"type":"object"} (any arguments) added`,
		`server "bad": tools/list: tool "stringschema": left out: "inputSchema.type" is not "object", which clients refuse`,
		`tool "annotated": left out: "annotations" is not an object`,
		`tool "numdesc": left out: "description" is not a string`,
		`tool "x\r\x1b[2Kgithub:create_issue": left out: "name" holds control characters`,
		`tool "badprop": left out: "inputSchema.properties.a" is not an object`,
		`tool "badicon": left out: "icons[0].src" is missing`,
		`tool "nulltitle": left out: "title" is not a string`,
		`server "bad": prompts/list: prompt "argsx": left out: "arguments" is not an array`,
		`prompt "argnoname": left out: "arguments[0].name" is missing`,
		`prompt "bell\a": left out: "name" holds control characters`,
		`server "bad": resources/list: entry 0: left out: "name" is missing`,
		`resource "d": left out: "annotations.lastModified" is not a date and time (RFC 3339)`,
		`resource "p": left out: "annotations.priority" is not a number from 0 to 1`,
		`server "bad": resources/templates/list: entry 0: left out: "name" is missing`,
	} {
		if strings.Count(log, want) != 1 {
			t.Errorf("the log does not say once %s:\n%s", want, log)
		}
	}
	if strings.ContainsAny(log, "\x1b\r\a") {
		t.Errorf("the log holds a raw control character:\n%q", log)
	}
}
