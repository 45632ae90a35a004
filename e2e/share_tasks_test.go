package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Tests of --share: what each session of a shared server sees of its
// tasks, subscriptions, list changes and log messages (issue 39: "tasks
// are the session's own; list_changed goes to every session;
// resources/updated to the sessions that subscribed (subscriptions
// counted); log messages to the one session with a call in flight, at the
// most verbose level any session asked for, each session filtered to its
// own level"). Two aggregators, a and b, of one config with --share, over
// one process of the test server.

// sharedPair starts two sessions of cfg in w, initialized with version,
// each once its server runs. (Its first list may be answered from what the
// user's cache remembers while the server still starts, and a
// logging/setLevel or resources/subscribe of the client's in that window
// never reaches the server: an aggregator race, not --share's.)
func sharedPair(w *shareWorld, cfg, version string) (a, b *session) {
	w.t.Helper()
	a, b = w.start(cfg, "--debug"), w.start(cfg, "--debug")
	for _, s := range []*session{a, b} {
		s.initialize(version, `{}`)
		s.startServers()
		s.waitStderr(`server "a": ready in`)
	}
	return a, b
}

// taskIDs are the taskId of each task a tasks/list result lists.
func taskIDs(t *testing.T, result json.RawMessage) []string {
	t.Helper()
	var r struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tasks/list result %s: %v", result, err)
	}
	ids := []string{}
	for _, tk := range r.Tasks {
		ids = append(ids, tk.TaskID)
	}
	return ids
}

// createdTask is the taskId and status of a CreateTaskResult (or, for
// tasks/get, of a Task: task is then the whole result).
func createdTask(t *testing.T, result json.RawMessage) (id, status string) {
	t.Helper()
	var r struct {
		Task   *struct{ TaskID, Status string } `json:"task"`
		TaskID string                           `json:"taskId"`
		Status string                           `json:"status"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("task result %s: %v", result, err)
	}
	if r.Task != nil {
		return r.Task.TaskID, r.Task.Status
	}
	return r.TaskID, r.Status
}

// holderLogLines counts the lines of the holder's log that contain text and
// not "un"+text (so that "subscribed X" does not count "unsubscribed X").
func (w *shareWorld) holderLogLines(text string) int {
	log, _ := os.ReadFile(w.holderLog())
	n := 0
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, text) && !strings.Contains(line, "un"+text) {
			n++
		}
	}
	return n
}

func TestShareTasksAreTheSessionsOwn(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := t.TempDir() + "/started"
	cfg := writeConfig(t, ts("a", "-tasks", "-started-file", started))
	a, b := sharedPair(w, cfg, "2025-11-25")
	// a's task runs until it is cancelled.
	idA, status := createdTask(t, a.result("tools/call", `{"name":"a:slow","arguments":{"ms":60000},"task":{"ttl":60000}}`))
	if idA == "" || status != "working" {
		t.Fatalf("a's task: id %q, status %q", idA, status)
	}
	if got := taskIDs(t, a.result("tasks/list", `{}`)); len(got) != 1 || got[0] != idA {
		t.Fatalf("a's tasks/list lists %v, want its task %s", got, idA)
	}
	// b does not see it, and cannot touch it.
	if got := taskIDs(t, b.result("tasks/list", `{}`)); len(got) != 0 {
		t.Fatalf("b's tasks/list lists %v: a's task, want none", got)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		m := b.call(method, `{"taskId":"`+idA+`"}`)
		code, message := m.errorCode()
		if m.Error == nil || code != -32602 || !strings.Contains(message, "unknown task") || !strings.Contains(message, idA) {
			t.Errorf("b's %s of a's task answered %s, want -32602 naming the task unknown", method, clip(m.line))
		}
	}
	// b's own task, beside it: each lists its own only.
	idB, _ := createdTask(t, b.result("tools/call", `{"name":"a:echo","arguments":{"text":"of b"},"task":{"ttl":60000}}`))
	if idB == "" {
		t.Fatal("b's task has no id")
	}
	b.next("the status of b's task", func(m *msg) bool {
		return m.Method == "notifications/tasks/status" && strings.Contains(string(m.Params), `"status":"completed"`)
	})
	if got := taskIDs(t, b.result("tasks/list", `{}`)); len(got) != 1 || got[0] != idB {
		t.Errorf("b's tasks/list lists %v, want its own task %s only", got, idB)
	}
	if got := taskIDs(t, a.result("tasks/list", `{}`)); len(got) != 1 || got[0] != idA {
		t.Errorf("a's tasks/list lists %v, want its own task %s only", got, idA)
	}
	// a's own task is a's to ask about and to cancel.
	if id, status := createdTask(t, a.result("tasks/get", `{"taskId":"`+idA+`"}`)); id != idA || status != "working" {
		t.Errorf("a's tasks/get of its task: id %q, status %q", id, status)
	}
	if id, status := createdTask(t, a.result("tasks/cancel", `{"taskId":"`+idA+`"}`)); id != idA || status != "cancelled" {
		t.Errorf("a's tasks/cancel of its task: id %q, status %q", id, status)
	}
	// A status of a's own task, which the server sent after that of b's:
	// a never got b's.
	idA2, _ := createdTask(t, a.result("tools/call", `{"name":"a:echo","arguments":{"text":"of a"},"task":{"ttl":60000}}`))
	a.next("the status of a's second task", func(m *msg) bool {
		return m.Method == "notifications/tasks/status" && strings.Contains(string(m.Params), `"taskId":"`+idA2+`"`)
	})
	if n := a.count(func(m *msg) bool { return m.Method == "notifications/tasks/status" }); n != 1 {
		t.Errorf("a got %d task statuses, want 1 (of its own second task; none of b's)", n)
	}
	if n := b.count(func(m *msg) bool { return m.Method == "notifications/tasks/status" }); n != 1 {
		t.Errorf("b got %d task statuses, want 1 (of its own task; none of a's)", n)
	}
	if n := len(startedPids(t, started)); n != 1 {
		t.Errorf("%d processes of a, want 1 (shared)", n)
	}
}

func TestShareSubscriptionsAreCounted(t *testing.T) {
	w := newShareWorld(t, "1s")
	cfg := writeConfig(t, ts("a", "-caps", "subscribe"))
	a, b := sharedPair(w, cfg, "2025-06-18")
	const r0, r1 = "test://a/r0", "test://a/r1"
	updated := func(s *session, uri string) *msg {
		s.t.Helper()
		return s.next("resources/updated of "+uri, func(m *msg) bool {
			return m.Method == "notifications/resources/updated" && strings.Contains(string(m.Params), `"uri":"`+uri+`"`)
		})
	}
	countUpdated := func(s *session, uri string) int {
		return s.count(func(m *msg) bool {
			return m.Method == "notifications/resources/updated" && strings.Contains(string(m.Params), `"uri":"`+uri+`"`)
		})
	}
	a.result("resources/subscribe", `{"uri":"`+r0+`"}`)
	b.result("resources/subscribe", `{"uri":"`+r0+`"}`)
	// b's own subscription of r1 reaches the server after b's of r0 was
	// answered: its line in the server's log is the barrier.
	b.result("resources/subscribe", `{"uri":"`+r1+`"}`)
	w.waitLog("subscribed " + r1)
	if n := w.holderLogLines("subscribed " + r0); n != 1 {
		t.Fatalf("the server got %d subscribes of %s for two sessions, want 1", n, r0)
	}
	// An update reaches both.
	a.result("tools/call", `{"name":"a:notify","arguments":{"uri":"`+r0+`"}}`)
	updated(a, r0)
	updated(b, r0)
	// b unsubscribes: the server keeps a's subscription.
	b.result("resources/unsubscribe", `{"uri":"`+r0+`"}`)
	a.result("tools/call", `{"name":"a:notify","arguments":{"uri":"`+r0+`"}}`)
	updated(a, r0)
	// An update of r1 (b's) that the server sent after it: had b got the
	// r0 one, it would have come first.
	a.result("tools/call", `{"name":"a:notify","arguments":{"uri":"`+r1+`"}}`)
	updated(b, r1)
	if n := countUpdated(b, r0); n != 1 {
		t.Errorf("b got %d updates of %s, want 1 (none after it unsubscribed)", n, r0)
	}
	if n := countUpdated(a, r1); n != 0 {
		t.Errorf("a got %d updates of %s, which it never subscribed", n, r1)
	}
	b.result("resources/unsubscribe", `{"uri":"`+r1+`"}`)
	w.waitLog("unsubscribed " + r1)
	if log, _ := os.ReadFile(w.holderLog()); strings.Contains(string(log), "unsubscribed "+r0) {
		t.Errorf("the server got an unsubscribe of %s while a is still subscribed", r0)
	}
	// a, the last, unsubscribes: the server gets it.
	a.result("resources/unsubscribe", `{"uri":"`+r0+`"}`)
	w.waitLog("unsubscribed " + r0)
}

func TestShareListChangedReachesEverySession(t *testing.T) {
	w := newShareWorld(t, "1s")
	cfg := writeConfig(t, ts("a", "-caps", "prompts,resources"))
	a, b := sharedPair(w, cfg, "2025-06-18")
	for _, kind := range []string{"tools", "prompts", "resources"} {
		a.result("tools/call", `{"name":"a:change","arguments":{"kind":"`+kind+`"}}`)
		for _, s := range []*session{a, b} {
			s.notification("notifications/" + kind + "/list_changed")
		}
	}
	// b lists what a's call added.
	if names := toolNames(t, b.result("tools/list", "")); !strings.Contains(strings.Join(names, " "), "a:added1") {
		t.Errorf("b's tools/list after the change: %v, want a:added1 in it", names)
	}
	if got := string(b.result("prompts/list", "")); !strings.Contains(got, "added1") {
		t.Errorf("b's prompts/list after the change: %s", got)
	}
	if got := string(b.result("resources/list", "")); !strings.Contains(got, "test://a/added1") {
		t.Errorf("b's resources/list after the change: %s", got)
	}
}

func TestShareLogLevelsPerSession(t *testing.T) {
	w := newShareWorld(t, "1s")
	cfg := writeConfig(t, ts("a", "-caps", "logging,subscribe"))
	a, b := sharedPair(w, cfg, "2025-06-18")
	a.result("logging/setLevel", `{"level":"debug"}`)
	b.result("logging/setLevel", `{"level":"error"}`)
	// The server keeps the most verbose level asked. (b's subscribe, after
	// its setLevel was answered, is the barrier in the server's log.)
	b.result("resources/subscribe", `{"uri":"test://a/r0"}`)
	w.waitLog("subscribed test://a/r0")
	if n, m := w.holderLogLines("level set to debug"), w.holderLogLines("level set to error"); n != 1 || m != 0 {
		t.Fatalf("the server's level was set to debug %d times and to error %d times, want debug once (a's, the most verbose), error never", n, m)
	}
	logged := func(s *session, text string) int {
		return s.count(func(m *msg) bool {
			return m.Method == "notifications/message" && strings.Contains(string(m.Params), `"data":"`+text+`"`)
		})
	}
	logAt := func(s *session, level, text string) {
		s.t.Helper()
		s.result("tools/call", `{"name":"a:log","arguments":{"level":"`+level+`","text":"`+text+`"}}`)
	}
	waitLogged := func(s *session, text string) {
		s.t.Helper()
		s.next("log message "+text, func(m *msg) bool {
			return m.Method == "notifications/message" && strings.Contains(string(m.Params), `"data":"`+text+`"`)
		})
	}
	// A debug message of a's call: a's alone.
	logAt(a, "debug", "debug of a")
	waitLogged(a, "debug of a")
	// A message of b's call, at b's level: b's alone. It came after a's
	// on the same way: b never got a's.
	logAt(b, "error", "error of b")
	waitLogged(b, "error of b")
	if n := logged(b, "debug of a"); n != 0 {
		t.Errorf("b (level error) got a's debug message")
	}
	// A debug message of b's call: under b's level, so nobody's.
	logAt(b, "debug", "debug of b")
	logAt(b, "warning", "warning of b")
	logAt(b, "critical", "critical of b")
	waitLogged(b, "critical of b")
	if n := logged(b, "debug of b") + logged(b, "warning of b"); n != 0 {
		t.Errorf("b (level error) got %d messages under its level", n)
	}
	logAt(a, "info", "info of a")
	waitLogged(a, "info of a")
	for _, text := range []string{"error of b", "debug of b", "warning of b", "critical of b"} {
		if logged(a, text) != 0 {
			t.Errorf("a got the message %q of b's call", text)
		}
	}
	if n := logged(a, "debug of a"); n != 1 {
		t.Errorf("a got its debug message %d times, want once", n)
	}
	// a ends: the server gets the level of b, the one left.
	a.closeAndWait()
	w.waitLog("level set to error")
	b.closeAndWait()
	w.waitHolderGone()
	if n, m := w.holderLogLines("level set to debug"), w.holderLogLines("level set to error"); n != 1 || m != 1 {
		t.Errorf("the server's level was set to debug %d times and to error %d times, want once each (debug for a and b, error once a ended)", n, m)
	}
}

// A session whose roots change moves to the process of its new roots,
// where a task of another session may have the id its own task had in
// its old process: the aggregator still maps its id to that one, and the
// holder refuses it as unknown, never showing or touching the other's.
func TestShareTaskOfAnotherSessionUnderTheSameIDIsUnknown(t *testing.T) {
	w := newShareWorld(t, "1s")
	started := t.TempDir() + "/started"
	cfg := writeConfig(t, ts("a", "-tasks", "-started-file", started))
	const initParams = `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"e2e","version":"1"}}`
	one, two := `[{"uri":"file:///one"}]`, `[{"uri":"file:///two"}]`
	const slowTask = `{"name":"a:slow","arguments":{"ms":60000},"task":{"ttl":60000}}`
	a, b := w.start(cfg), w.start(cfg)
	ids := map[*session]string{}
	for s, roots := range map[*session]string{a: one, b: two} {
		if m := callAnsweringRoots(s, "initialize", initParams, roots); m.Error != nil {
			t.Fatal(m.line)
		}
		s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		m := callAnsweringRoots(s, "tools/call", slowTask, roots)
		if m.Error != nil {
			t.Fatalf("task: %s", m.line)
		}
		ids[s], _ = createdTask(t, m.Result)
	}
	if n := len(startedPids(t, started)); n != 2 {
		t.Fatalf("%d processes for two sets of roots, want 2", n)
	}
	// Each is its process's first task: task-1 at both servers.
	// b's roots become a's: it moves to a's process.
	b.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	m := callAnsweringRoots(b, "tasks/get", `{"taskId":"`+ids[b]+`"}`, one)
	code, message := m.errorCode()
	if m.Error == nil || code != -32602 || !strings.Contains(message, "unknown task") {
		t.Fatalf("b's tasks/get of its old task, whose id is a's task's at a's process, answered %s, want -32602 unknown task", clip(m.line))
	}
	for _, method := range []string{"tasks/result", "tasks/cancel"} {
		m := callAnsweringRoots(b, method, `{"taskId":"`+ids[b]+`"}`, one)
		if code, message := m.errorCode(); m.Error == nil || code != -32602 || !strings.Contains(message, "unknown task") {
			t.Errorf("b's %s answered %s, want -32602 unknown task", method, clip(m.line))
		}
	}
	if got := taskIDs(t, callAnsweringRoots(b, "tasks/list", `{}`, one).Result); len(got) != 0 {
		t.Errorf("b's tasks/list at a's process lists %v, want none (a's task is a's)", got)
	}
	// a's task runs on, a's alone.
	if id, status := createdTask(t, a.result("tasks/get", `{"taskId":"`+ids[a]+`"}`)); id != ids[a] || status != "working" {
		t.Errorf("a's tasks/get of its task: id %q, status %q, want working", id, status)
	}
}
