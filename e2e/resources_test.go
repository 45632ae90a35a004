package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Resources, prompts, completion, logging, what initialize advertises and
// list changes.

// rawList returns the raw entries of the array member field of a result.
func rawList(t *testing.T, result json.RawMessage, field string) []string {
	t.Helper()
	var r map[string]json.RawMessage
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("not an object: %s", clip(result))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(r[field], &items); err != nil {
		t.Fatalf("no array %q in %s", field, clip(result))
	}
	var out []string
	for _, it := range items {
		out = append(out, string(it))
	}
	return out
}

func resourceEntry(server string, i int) string {
	return fmt.Sprintf(`{"uri":"test://%s/r%d","name":"r%d","mimeType":"text/plain"}`, server, i, i)
}

func templateEntry(server string) string {
	return `{"uriTemplate":"test://` + server + `/t/{id}","name":"t","mimeType":"text/plain"}`
}

func TestResourceListsAreMergedOverChildrenInConfigOrder(t *testing.T) {
	s := startConfig(t, []server{
		ts("zeta", "-caps", "resources", "-page", "1"),
		wiretapped("plain"),
		ts("alpha", "-caps", "resources", "-page", "1"),
	})
	s.initialize("2025-11-25", clientCapsAll)

	var want []string
	for _, key := range []string{"zeta", "alpha"} {
		for i := range 3 {
			want = append(want, resourceEntry(key, i))
		}
	}
	if got := rawList(t, s.result("resources/list", "{}"), "resources"); !slices.Equal(got, want) {
		t.Errorf("resources/list (every page of each child, in config order, bytes unchanged):\n got %v\nwant %v", got, want)
	}
	want = []string{templateEntry("zeta"), templateEntry("alpha")}
	if got := rawList(t, s.result("resources/templates/list", ""), "resourceTemplates"); !slices.Equal(got, want) {
		t.Errorf("resources/templates/list:\n got %v\nwant %v", got, want)
	}
	// The child without the resources capability is not even asked.
	settleStderr(s, "plain")
	if n := tappedCount(s, "plain", func(m *msg) bool { return strings.HasPrefix(m.Method, "resources/") }); n != 0 {
		t.Errorf("the child without the resources capability was sent %d resources requests:\n%s", n, s.stderrText())
	}
}

func TestResourceRequestsAreRoutedByURI(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-caps", "subscribe"), ts("beta", "-caps", "subscribe")})
	s.initialize("2025-11-25", clientCapsAll)

	// The test server of one child knows none of the other's URIs: a
	// result shows the request reached the owner.
	for _, uri := range []string{"test://alpha/r1", "test://beta/r1", "test://beta/t/42", "test://alpha/t/x"} {
		got := s.result("resources/read", `{"uri":"`+uri+`"}`)
		want := `{"contents":[{"uri":"` + uri + `","mimeType":"text/plain","text":"content of ` + uri + `"}]}`
		if string(got) != want {
			t.Errorf("resources/read %s:\n got %s\nwant %s", uri, got, want)
		}
	}
	for _, method := range []string{"resources/read", "resources/subscribe", "resources/unsubscribe"} {
		m := s.call(method, `{"uri":"test://nobody/r1"}`)
		if code, _ := m.errorCode(); code != -32002 {
			t.Errorf("%s of an unknown URI: %s, want error -32002", method, m.line)
		}
	}

	for _, tc := range []struct{ method, uri, log string }{
		{"resources/subscribe", "test://beta/r2", "[beta] subscribed test://beta/r2\n"},
		{"resources/subscribe", "test://alpha/t/7", "[alpha] subscribed test://alpha/t/7\n"},
		{"resources/unsubscribe", "test://beta/r2", "[beta] unsubscribed test://beta/r2\n"},
	} {
		if got := s.result(tc.method, `{"uri":"`+tc.uri+`"}`); string(got) != "{}" {
			t.Errorf("%s %s: %s", tc.method, tc.uri, got)
		}
		s.waitStderr(tc.log)
	}
	settleStderr(s, "alpha", "beta")
	if text := s.stderrText(); strings.Contains(text, "[alpha] subscribed test://beta") || strings.Contains(text, "[beta] subscribed test://alpha") {
		t.Errorf("a subscription reached the wrong child:\n%s", text)
	}

	s.result("tools/call", `{"name":"beta:notify","arguments":{"uri":"test://beta/r2"}}`)
	n := s.notification("notifications/resources/updated")
	if string(n.Params) != `{"uri":"test://beta/r2"}` {
		t.Errorf("notifications/resources/updated params %s, want the child's {\"uri\":\"test://beta/r2\"}", n.Params)
	}
}

func TestResourceListedByOneChildBeatsTheTemplateOfAnother(t *testing.T) {
	// "wide" serves the template test://shared/t/{id}; "exact" lists
	// test://shared/t/r0 (its name is "shared/t"). Both could read that
	// URI, but it belongs to the child that listed it.
	s := startConfig(t, []server{
		ts("wide", "-name", "shared", "-caps", "subscribe"),
		ts("exact", "-name", "shared/t", "-caps", "subscribe"),
	})
	s.initialize("2025-11-25", clientCapsAll)
	s.result("resources/subscribe", `{"uri":"test://shared/t/r0"}`)
	s.waitStderr("[exact] subscribed test://shared/t/r0\n")
	s.result("resources/subscribe", `{"uri":"test://shared/t/other"}`)
	s.waitStderr("[wide] subscribed test://shared/t/other\n")
	settleStderr(s, "wide", "exact")
	if text := s.stderrText(); strings.Contains(text, "[wide] subscribed test://shared/t/r0") || strings.Contains(text, "[exact] subscribed test://shared/t/other") {
		t.Errorf("a subscription reached the wrong child:\n%s", text)
	}
}

func TestPromptsAreListedPrefixedAndRoutedByName(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-caps", "prompts"), ts("gamma"), ts("beta", "-caps", "prompts")})
	s.initialize("2025-11-25", "{}")

	const greet = `{"name":"%s:greet","description":"say hello","arguments":[{"name":"name","description":"who to greet","required":false}]}`
	want := []string{fmt.Sprintf(greet, "alpha"), fmt.Sprintf(greet, "beta")}
	if got := rawList(t, s.result("prompts/list", ""), "prompts"); !slices.Equal(got, want) {
		t.Errorf("prompts/list:\n got %v\nwant %v", got, want)
	}

	got := s.result("prompts/get", `{"name":"alpha:greet","arguments":{"name":"<Zoë> & co"}}`)
	if w := `{"description":"greeting from alpha","messages":[{"role":"user","content":{"type":"text","text":"Hello <Zoë> & co"}}]}`; string(got) != w {
		t.Errorf("prompts/get alpha:greet:\n got %s\nwant %s", got, w)
	}
	got = s.result("prompts/get", `{"name":"beta:greet"}`)
	if !strings.Contains(string(got), `"text":"Hello beta"`) {
		t.Errorf("prompts/get beta:greet did not reach beta: %s", got)
	}
	for _, name := range []string{"greet", "alpha:nope", "gamma:greet", "delta:greet"} {
		if m := s.call("prompts/get", `{"name":"`+name+`"}`); m.Error == nil {
			t.Errorf("prompts/get %s: %s, want an error", name, m.line)
		}
	}
}

func TestCompletionIsRoutedByPromptNameAndTemplateOwner(t *testing.T) {
	caps := []string{"-caps", "prompts,resources,completions"}
	s := startConfig(t, []server{ts("alpha", caps...), ts("beta", caps...)})
	s.initialize("2025-11-25", "{}")
	for _, tc := range []struct{ ref, server, echo string }{
		{`{"type":"ref/prompt","name":"beta:greet"}`, "beta", "ref/prompt:greet"},
		{`{"type":"ref/prompt","name":"alpha:greet"}`, "alpha", "ref/prompt:greet"},
		{`{"type":"ref/resource","uri":"test://beta/t/{id}"}`, "beta", "ref/resource:test://beta/t/{id}"},
		{`{"type":"ref/resource","uri":"test://alpha/t/{id}"}`, "alpha", "ref/resource:test://alpha/t/{id}"},
	} {
		got := s.result("completion/complete", `{"ref":`+tc.ref+`,"argument":{"name":"id","value":"4"}}`)
		want := fmt.Sprintf(`{"completion":{"values":["%s-a","%s-b","%s"],"total":3,"hasMore":false}}`, tc.server, tc.server, tc.echo)
		if string(got) != want {
			t.Errorf("completion/complete %s:\n got %s\nwant %s", tc.ref, got, want)
		}
	}
	if m := s.call("completion/complete", `{"ref":{"type":"ref/prompt","name":"gamma:greet"},"argument":{"name":"n","value":""}}`); m.Error == nil {
		t.Errorf("completion of an unknown prompt: %s, want an error", m.line)
	}
}

func TestSetLevelFansOutToChildrenWithLoggingAndMessagesComeBack(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-caps", "logging"), wiretapped("beta"), ts("gamma", "-caps", "logging")})
	s.initialize("2025-11-25", clientCapsAll)
	if got := s.result("logging/setLevel", `{"level":"debug"}`); string(got) != "{}" {
		t.Errorf("logging/setLevel answered %s, want {}", got)
	}
	s.waitStderr("[alpha] level set to debug\n")
	s.waitStderr("[gamma] level set to debug\n")
	settleStderr(s, "beta")
	if n := tappedCount(s, "beta", func(m *msg) bool { return m.Method == "logging/setLevel" }); n != 0 {
		t.Errorf("logging/setLevel reached the child that did not declare logging:\n%s", s.stderrText())
	}

	s.result("tools/call", `{"name":"gamma:log","arguments":{"text":"<&> é \u2028"}}`)
	n := s.notification("notifications/message")
	if want := `{"level":"info","logger":"testserver","data":"<&> é \u2028"}`; string(n.Params) != want {
		t.Errorf("notifications/message params:\n got %s\nwant %s", n.Params, want)
	}
}

// advertisedInit is the part of our initialize result the tests look at.
type advertisedInit struct {
	ProtocolVersion string                     `json:"protocolVersion"`
	Capabilities    map[string]json.RawMessage `json:"capabilities"`
	Instructions    *string                    `json:"instructions"`
}

func parseAdvertisedInit(t *testing.T, raw json.RawMessage) advertisedInit {
	t.Helper()
	var r advertisedInit
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("initialize result: %v: %s", err, raw)
	}
	return r
}

// The initialize answer says what the servers declare, exactly, and
// nothing they do not: on a fresh start (an empty cache directory) it
// starts them and waits for them; in a later session (what they declared
// remembered in the cache directory) it says the same, starting none.
func TestInitializeAdvertisesWhatTheChildrenOffer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		servers []server
		caps    []string // capability names the servers declare
	}{
		{"all", []server{ts("alpha"), ts("beta", "-caps", "subscribe,prompts,logging,completions")},
			[]string{"completions", "logging", "prompts", "resources", "tools"}},
		{"resources", []server{ts("alpha"), ts("beta", "-caps", "resources")}, []string{"resources", "tools"}},
		{"tools only", []server{ts("alpha"), ts("beta")}, []string{"tools"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "started")
			for i := range tc.servers {
				tc.servers[i].args = append(tc.servers[i].args, "-started-file", started)
			}
			cache, cfg := t.TempDir(), writeConfig(t, tc.servers...)
			check := func(session int, s *session) {
				r := parseAdvertisedInit(t, s.initialize("2025-11-25", "{}"))
				for _, name := range tc.caps {
					if _, ok := r.Capabilities[name]; !ok {
						t.Errorf("session %d: capabilities %v: no %s", session, r.Capabilities, name)
					}
				}
				for name, value := range r.Capabilities {
					if !slices.Contains(tc.caps, name) {
						t.Errorf("session %d: capabilities offer %s %s, which no server declared", session, name, value)
					}
				}
				var tools struct{ ListChanged bool }
				if json.Unmarshal(r.Capabilities["tools"], &tools); !tools.ListChanged {
					t.Errorf("tools capability %s, want listChanged true", r.Capabilities["tools"])
				}
				if r.Instructions != nil {
					t.Errorf("instructions %q, but no child has any", *r.Instructions)
				}
			}
			first := startCached(t, cache, "--config", cfg)
			check(1, first)
			first.startServers()
			first.closeAndWait()
			second := startCached(t, cache, "--config", cfg)
			check(2, second)
			second.closeAndWait()
			if b, _ := os.ReadFile(started); bytes.Count(b, []byte("\n")) != len(tc.servers) {
				t.Errorf("server processes started:\n%s\nwant one a server, in the first session (the second's initialize is answered from memory)", b)
			}
		})
	}
}

func TestInitializeJoinsTheChildrensInstructionsUnderTheirKeys(t *testing.T) {
	cache, cfg := t.TempDir(), writeConfig(t,
		ts("alpha", "-instructions", "First <one> & only."),
		ts("mid"),
		ts("beta", "-instructions", "Second one."),
	)
	first := startCached(t, cache, "--config", cfg)
	first.initialize("2025-11-25", "{}")
	first.startServers()
	first.closeAndWait()
	r := parseAdvertisedInit(t, startCached(t, cache, "--config", cfg).initialize("2025-11-25", "{}"))
	if r.Instructions == nil {
		t.Fatalf("no instructions in the initialize result of a session after the servers started once")
	}
	text := *r.Instructions
	a, first1, b, second := strings.Index(text, "alpha"), strings.Index(text, "First <one> & only."), strings.Index(text, "beta"), strings.Index(text, "Second one.")
	if a < 0 || first1 < 0 || b < 0 || second < 0 || !(a < first1 && first1 < b && b < second) {
		t.Errorf("instructions should hold each child's under its key, in config order:\n%s", text)
	}
	if strings.Contains(text, "mid") {
		t.Errorf("the child without instructions is mentioned:\n%s", text)
	}
}

// initialize waits for no server; a server too slow for the start-up
// timeout is dropped, and the others serve.
func TestLateChildIsLeftOutOfInitialize(t *testing.T) {
	s := startConfig(t, []server{
		ts("alpha"),
		ts("late", "-init-delay", "3s", "-caps", "prompts,logging", "-instructions", "Late words."),
	}, "--startup-timeout", "500ms")
	r := parseAdvertisedInit(t, s.initialize("2025-11-25", "{}"))
	if r.Instructions != nil && strings.Contains(*r.Instructions, "Late words.") {
		t.Errorf("the late child's instructions are included: %q", *r.Instructions)
	}
	s.startServers()
	s.waitFor("stderr to report the late child", func() bool {
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(line, "late") && strings.Contains(line, "timeout") && !strings.HasPrefix(line, "[late]") {
				return true
			}
		}
		return false
	})
	for _, name := range toolNames(t, s.result("tools/list", "")) {
		if !strings.HasPrefix(name, "alpha:") {
			t.Errorf("tools/list has %s", name)
		}
	}
	if text := toolText(t, s.result("tools/call", `{"name":"alpha:echo","arguments":{"a":1}}`)); text != `{"a":1}` {
		t.Errorf("alpha:echo: %s", text)
	}
}

func TestChildToolListChangeIsRefreshedAndToldOnce(t *testing.T) {
	s := startConfig(t, []server{ts("alpha"), ts("beta")})
	s.initialize("2025-11-25", "{}")
	before := toolNames(t, s.result("tools/list", ""))
	if text := toolText(t, s.result("tools/call", `{"name":"beta:change"}`)); text != "added1" {
		t.Fatalf("beta:change: %s", text)
	}
	s.notification("notifications/tools/list_changed")
	after := toolNames(t, s.result("tools/list", ""))
	want := append(slices.Clone(before), "beta:added1")
	if !slices.Equal(after, want) {
		t.Errorf("tools/list after the change:\n got %v\nwant %v", after, want)
	}
	if text := toolText(t, s.result("tools/call", `{"name":"beta:added1","arguments":{"x":1}}`)); text != `{"x":1}` {
		t.Errorf("beta:added1: %s", text)
	}
	if n := s.count(func(m *msg) bool { return m.Method == "notifications/tools/list_changed" }); n != 1 {
		t.Errorf("the client was told %d times that tools changed, want once", n)
	}
}

func TestChildPromptAndResourceListChangesAreRefreshedAndToldOnce(t *testing.T) {
	s := startConfig(t, []server{ts("alpha", "-caps", "prompts,resources")})
	s.initialize("2025-11-25", "{}")

	s.result("tools/call", `{"name":"alpha:change","arguments":{"kind":"prompts"}}`)
	s.notification("notifications/prompts/list_changed")
	if got := string(s.result("prompts/list", "")); !strings.Contains(got, `"name":"alpha:added1"`) {
		t.Errorf("prompts/list after the change: %s", got)
	}

	s.result("tools/call", `{"name":"alpha:change","arguments":{"kind":"resources"}}`)
	s.notification("notifications/resources/list_changed")
	if got := string(s.result("resources/list", "")); !strings.Contains(got, `"uri":"test://alpha/added1"`) {
		t.Errorf("resources/list after the change: %s", got)
	}

	for _, method := range []string{"notifications/prompts/list_changed", "notifications/resources/list_changed"} {
		if n := s.count(func(m *msg) bool { return m.Method == method }); n != 1 {
			t.Errorf("%s sent %d times, want once", method, n)
		}
	}
}
