package e2e

// Fake model APIs for the real clients (realclients_test.go): an HTTP
// server on 127.0.0.1 that speaks one model API (Anthropic Messages,
// OpenAI Responses, Gemini) well enough for its client, refuses tool names
// as that API does (with its real 400 body), and plays a model that calls
// the tools a test chose, one after the other, then answers a final text.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeTool is a tool as a client offered it to the model.
type fakeTool struct {
	name, description string
	namespace         string // OpenAI Responses: the namespace it came in
}

// modelAPI is what differs between the model APIs.
type modelAPI interface {
	// parse reads a request: the tools offered and the results of the
	// tools called so far, in order; ok is false for what is no model
	// request (the client's own checks), answered by other.
	parse(r *http.Request, body []byte) (tools []fakeTool, results []string, ok bool)
	// refuse is the status and body the real API answers tools with
	// (0 when it takes them).
	refuse(tools []fakeTool) (int, string)
	// call answers with a call of tool with args (a JSON object); text
	// answers with a text; in a stream of events when the request asked
	// for one.
	call(w http.ResponseWriter, stream bool, tool fakeTool, id int, args string)
	text(w http.ResponseWriter, stream bool, text string)
	// other answers what parse did not take.
	other(w http.ResponseWriter, r *http.Request)
}

// fakeModel is one fake model API and what it saw.
type fakeModel struct {
	t       *testing.T
	api     modelAPI
	markers []string // texts in the names of the tools of the test's children
	calls   []string // the children's own names of the tools to call, in order
	final   string   // the last answer's text
	url     string
	// pace, when set, is a tool the model calls with {"ms":500+N} (the
	// test server's tool "slow": a call that takes half a second) while
	// the next tool to call is not offered yet, at most maxTurns times.
	pace  string
	turns int
	// argsFor, when set, gives the arguments of a scripted call (JSON;
	// "{}" for the others).
	argsFor map[string]string
	// offering is closed when the first request that offers the
	// children's tools comes.
	offering chan struct{}

	mu       sync.Mutex
	refused  []string     // the bodies of refused requests
	offered  [][]fakeTool // the child's tools offered, per model request
	results  []string     // the tool results that came back, in order
	calledAs []string     // the names the tools were called by
	missing  []string     // scripted tools the model did not find
}

// startModel serves api on 127.0.0.1 until the test ends.
func startModel(t *testing.T, api modelAPI, markers []string, calls ...string) *fakeModel {
	t.Helper()
	m := &fakeModel{t: t, api: api, markers: markers, calls: calls, final: "all " + fmt.Sprint(len(calls)) + " tools called",
		offering: make(chan struct{})}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("fake model API: listen on 127.0.0.1: %v", err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	m.url = srv.URL
	return m
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tools, results, ok := m.api.parse(r, body)
	if !ok {
		m.api.other(w, r)
		return
	}
	var asked struct{ Stream bool }
	json.Unmarshal(body, &asked)
	stream := asked.Stream || strings.Contains(r.URL.Path, "stream")
	if code, refusal := m.api.refuse(tools); code != 0 {
		m.mu.Lock()
		m.refused = append(m.refused, refusal)
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, refusal)
		return
	}
	var ours []fakeTool
	for _, tool := range tools {
		for _, marker := range m.markers {
			if strings.Contains(tool.name, marker) || strings.Contains(tool.namespace, marker) {
				ours = append(ours, tool)
				break
			}
		}
	}
	if len(ours) == 0 { // a request of the client's own (a title, a summary)
		m.api.text(w, stream, "ok")
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.offered) == 0 {
		close(m.offering)
	}
	m.offered = append(m.offered, ours)
	m.results = append(m.results[:0], results...)
	next := m.answered()
	if next >= len(m.calls) {
		m.api.text(w, stream, m.final)
		return
	}
	tool, found := findTool(ours, m.calls[next])
	args := "{}"
	if a, ok := m.argsFor[m.calls[next]]; ok {
		args = a
	}
	if !found && m.pace != "" && m.turns < maxTurns {
		tool, found = findTool(ours, m.pace)
		args = fmt.Sprintf(`{"ms":%d}`, 500+m.turns)
	}
	m.turns++
	if !found {
		m.missing = append(m.missing, m.calls[next])
		m.api.text(w, stream, "no tool "+m.calls[next])
		return
	}
	m.calledAs = append(m.calledAs, tool.name)
	m.api.call(w, stream, tool, m.turns, args)
}

// maxTurns bounds the calls of the pacing tool.
const maxTurns = 60

// answered is how many of the scripted calls came back with their tool's
// answer (a result that names the tool), in order; other results (of the
// pacing tool) are passed over. Called with mu held.
func (m *fakeModel) answered() int {
	n := 0
	for _, r := range m.results {
		if n < len(m.calls) && strings.Contains(r, m.calls[n]) {
			n++
		}
	}
	return n
}

// findTool is the tool the model takes for the child's tool own: the one
// whose name ends with it, or whose description begins with its full name
// (KEY, a separator, own) in parentheses, as a shortened name's does.
func findTool(tools []fakeTool, own string) (fakeTool, bool) {
	for _, tool := range tools {
		if strings.HasSuffix(tool.name, own) {
			return tool, true
		}
	}
	for _, tool := range tools {
		if full, _, ok := strings.Cut(strings.TrimPrefix(tool.description, "("), ") "); ok && strings.HasPrefix(tool.description, "(") && strings.HasSuffix(full, own) {
			return tool, true
		}
	}
	return fakeTool{}, false
}

// check reports what went wrong: a refused request, a scripted tool not
// offered, a tool of all not offered in the first request that offered
// the children's tools, a call that did not come back with its tool's
// answer.
func (m *fakeModel) check(t *testing.T, all []string) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.offered) == 0 {
		t.Errorf("no model request offered the children's tools")
	} else if all != nil {
		for _, own := range all {
			if _, ok := findTool(m.offered[0], own); !ok {
				t.Errorf("tool %q not offered: %s", own, toolNamesOf(m.offered[0]))
			}
		}
		if len(m.offered[0]) != len(all) {
			t.Errorf("%d of the child's tools offered, want %d: %s", len(m.offered[0]), len(all), toolNamesOf(m.offered[0]))
		}
	}
	for _, r := range m.refused {
		t.Errorf("the model API refused a request: %s", r)
	}
	if len(m.missing) > 0 {
		t.Errorf("tools not offered to the model: %q", m.missing)
	}
	if n := m.answered(); n != len(m.calls) {
		t.Errorf("%d of %d calls came back with their tool's answer: results %q (called as %q)", n, len(m.calls), m.results, m.calledAs)
	}
}

// offeredFirst reports whether the first request that offered the
// children's tools offered own.
func (m *fakeModel) offeredFirst(own string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.offered) == 0 {
		return false
	}
	_, ok := findTool(m.offered[0], own)
	return ok
}

func toolNamesOf(tools []fakeTool) string {
	var names []string
	for _, tool := range tools {
		if tool.namespace != "" {
			names = append(names, tool.namespace+"."+tool.name)
			continue
		}
		names = append(names, tool.name)
	}
	return strings.Join(names, ", ")
}

// sse writes server-sent events: name, data, name, data...
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for i := 0; i+1 < len(events); i += 2 {
		if events[i] != "" {
			fmt.Fprintf(w, "event: %s\n", events[i])
		}
		fmt.Fprintf(w, "data: %s\n\n", events[i+1])
	}
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// textOf is the text in a tool result, whatever its shape: a string, or
// blocks with text, or anything else as JSON.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// nameRule is the tool-name rule of the Anthropic API and of
// OpenAI-compatible APIs.
var nameRule = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
