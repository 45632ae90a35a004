package e2e

import (
	"strings"
	"testing"
)

// aggTaskPrefix starts every task id the aggregator hands out.
const aggTaskPrefix = "mcp-simple-aggregator-task-"

// tasksTask is a Task object as the report keeps it.
type tasksTask struct {
	TaskID string `json:"taskId"`
	Status string `json:"status"`
}

// tasksClientSide is what interop/tasks.mjs saw of one task the server
// asked the client to run (trigger-*-request-async).
type tasksClientSide struct {
	ClientTaskID string `json:"clientTaskId"`
	Polls        []struct {
		Method string `json:"method"`
		TaskID string `json:"taskId"`
		Answer string `json:"answer"`
	} `json:"polls"`
	ServerTaskID     string `json:"serverTaskId"`
	ServerSawRelated string `json:"serverSawRelated"`
	Text             string `json:"text"`
}

// tasksResult is the summary of a tasks/result the report keeps.
type tasksResult struct {
	Related            string   `json:"related"`
	ContentTypes       []string `json:"contentTypes"`
	ElicitationRelated string   `json:"elicitationRelated"`
}

type tasksRPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// tasksReport is the part of interop/tasks.mjs's JSON report the test reads.
type tasksReport struct {
	interopReport
	Seen struct {
		AggregatorInitialize interopInitialize `json:"aggregatorInitialize"`
		ToolCounts           struct {
			Direct             int `json:"direct"`
			AggregatorPrefixed int `json:"aggregatorPrefixed"`
		} `json:"toolCounts"`
		AggregatorTool struct {
			Name      string `json:"name"`
			Execution struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"aggregatorTool"`
		ChildInitializeParams interopChildParams `json:"childInitializeParams"`
		DirectCreated         tasksTask          `json:"directCreated"`
		AggregatorCreated     tasksTask          `json:"aggregatorCreated"`
		AggregatorTasksList   []tasksTask        `json:"aggregatorTasksList"`
		AggregatorPoll        []string           `json:"aggregatorPoll"`
		DirectResult          tasksResult        `json:"directResult"`
		AggregatorResult      tasksResult        `json:"aggregatorResult"`
		AggregatorCancel      struct {
			Created     tasksTask     `json:"created"`
			Cancel      tasksTask     `json:"cancel"`
			Get         tasksTask     `json:"get"`
			CancelAgain tasksRPCError `json:"cancelAgain"`
		} `json:"aggregatorCancel"`
		DirectSampling           tasksClientSide `json:"directSampling"`
		AggregatorSampling       tasksClientSide `json:"aggregatorSampling"`
		DirectElicitation        tasksClientSide `json:"directElicitation"`
		AggregatorElicitation    tasksClientSide `json:"aggregatorElicitation"`
		DirectUnknownTask        tasksRPCError   `json:"directUnknownTask"`
		StatusWhileResultPending struct {
			Direct, Aggregator string
		} `json:"statusWhileResultPending"`
		DirectGetAfterResult, AggregatorGetAfterResult tasksTask
		AggregatorTasksListAfterResult                 []tasksTask `json:"aggregatorTasksListAfterResult"`
		AggregatorUnknownTasks                         map[string]struct {
			TaskID   string        `json:"taskId"`
			TasksGet tasksRPCError `json:"tasksGet"`
		} `json:"aggregatorUnknownTasks"`
	} `json:"seen"`
}

// TestInteropTasksServerEverything puts the official reference server
// server-everything (which declares tasks {list, cancel, requests.tools.call})
// behind the aggregator, next to the test server (which declares no tasks),
// and has the official SDK client (interop/tasks.mjs), declaring sampling,
// elicitation and tasks {list, cancel, requests.sampling.createMessage,
// requests.elicitation.create}, compare it with a direct connection: the
// tasks capability and the task-only tool simulate-research-query; a task
// created with a task-augmented tools/call, listed, polled to input_required,
// its clarifying elicitation (related to the client's id) answered, its
// result fetched; a second task cancelled, and cancelled again (refused
// with -32602: it has ended), and still listed under its id; the ids of every
// notifications/tasks/status; ids the client was never given refused; and
// tasks the server asks the client to run (trigger-sampling-request-async,
// trigger-elicitation-request-async), whose ids the server sees as the
// client made them, with results equal to a direct connection's. A task
// polled with tasks/get while its tasks/result is pending, and after its
// result was fetched, is answered as directly, and still listed. Separators
// : and __.
func TestInteropTasksServerEverything(t *testing.T) {
	interopSubtests(t, func(t *testing.T, sep string) {
		var rep tasksReport
		runComparison(t, "tasks.mjs", sep, interopServer(t, "everything", "server-everything", "stdio"), &rep,
			"connect", "initialize", "tools-list", "child-capabilities", "task-cancel",
			"task-create", "tasks-list", "task-poll", "task-result", "task-status-notifications", "tasks-list-after-result",
			"tasks-get-after-result", "client-task-sampling", "client-task-sampling-content", "client-task-elicitation", "unknown-task-ids", "no-client-errors")
		checkTasksReport(t, sep, &rep)
	})
}

// checkTasksReport re-checks what the comparisons of tasks.mjs rest on, so
// that a script that compared nothing cannot pass.
func checkTasksReport(t *testing.T, sep string, rep *tasksReport) {
	t.Helper()
	s := &rep.Seen
	s.AggregatorInitialize.checkAggregator(t)
	if got, want := s.AggregatorInitialize.Capabilities["tasks"], `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`; !jsonEqual(got, []byte(want)) {
		t.Errorf("aggregator capabilities.tasks %s, want %s", got, want)
	}
	// The client's tasks capability reached the child that declares none.
	if got, want := s.ChildInitializeParams.Capabilities.Tasks, `{"list":{},"cancel":{},"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}`; !jsonEqual(got, []byte(want)) {
		t.Errorf("the test server received capabilities.tasks %s, the client declared %s", got, want)
	}
	// server-everything 2026.8.31 offers 17 tools to a client declaring
	// sampling, elicitation and tasks (no roots, no elicitation.url).
	if s.ToolCounts.Direct != 17 || s.ToolCounts.AggregatorPrefixed != 17 {
		t.Errorf("tool counts %+v, want 17 both ways", s.ToolCounts)
	}
	if s.AggregatorTool.Name != "everything"+sep+"simulate-research-query" || s.AggregatorTool.Execution.TaskSupport != "required" {
		t.Errorf("aggregated simulate-research-query entry %+v", s.AggregatorTool)
	}

	// Server-side tasks: the round's task under the aggregator's id, throughout.
	id := s.AggregatorCreated.TaskID
	if !strings.HasPrefix(id, aggTaskPrefix) || strings.HasPrefix(s.DirectCreated.TaskID, aggTaskPrefix) || s.DirectCreated.TaskID == "" {
		t.Errorf("created task ids: aggregator %q, direct %q", id, s.DirectCreated.TaskID)
	}
	listed, listedCancelled := false, false
	for _, task := range s.AggregatorTasksList {
		listed = listed || task.TaskID == id
		listedCancelled = listedCancelled || task.TaskID == s.AggregatorCancel.Created.TaskID && task.Status == "cancelled"
	}
	if !listed {
		t.Errorf("tasks/list through the aggregator %+v lacks %s", s.AggregatorTasksList, id)
	}
	if !listedCancelled {
		t.Errorf("tasks/list through the aggregator %+v lacks the cancelled %s", s.AggregatorTasksList, s.AggregatorCancel.Created.TaskID)
	}
	if len(s.AggregatorPoll) == 0 || s.AggregatorPoll[len(s.AggregatorPoll)-1] != "input_required" {
		t.Errorf("statuses polled through the aggregator %v, want them to end with input_required", s.AggregatorPoll)
	}
	if r := s.AggregatorResult; r.Related != id || r.ElicitationRelated != id || len(r.ContentTypes) == 0 {
		t.Errorf("aggregator tasks/result %+v, want related-task %s", r, id)
	}
	if r := s.DirectResult; r.Related != s.DirectCreated.TaskID || r.ElicitationRelated != s.DirectCreated.TaskID {
		t.Errorf("direct tasks/result %+v, want related-task %s", r, s.DirectCreated.TaskID)
	}
	c := s.AggregatorCancel
	if !strings.HasPrefix(c.Created.TaskID, aggTaskPrefix) || c.Cancel.TaskID != c.Created.TaskID || c.Cancel.Status != "cancelled" ||
		c.Get.TaskID != c.Created.TaskID || c.Get.Status != "cancelled" || c.CancelAgain.Code != -32602 {
		t.Errorf("cancelled task through the aggregator %+v", c)
	}

	// Polled while its result is pending, and after: as directly.
	if p := s.StatusWhileResultPending; p.Direct == "" || p.Aggregator == "" {
		t.Errorf("status while tasks/result was pending: %+v", p)
	}
	if g := s.AggregatorGetAfterResult; g.TaskID != id || g.Status != "completed" || s.DirectGetAfterResult.Status != "completed" {
		t.Errorf("tasks/get after the result: aggregator %+v, direct %+v; want completed, under %s", g, s.DirectGetAfterResult, id)
	}
	listedAfter := false
	for _, task := range s.AggregatorTasksListAfterResult {
		listedAfter = listedAfter || task.TaskID == id && task.Status == "completed"
	}
	if !listedAfter {
		t.Errorf("tasks/list after the result through the aggregator %+v lacks %s, completed", s.AggregatorTasksListAfterResult, id)
	}

	// Client-side tasks: the client and the server see the client's own
	// ids, through the aggregator as directly.
	for _, cs := range []struct {
		kind           string
		direct, agg    tasksClientSide
		clientID, text string
	}{
		{"sampling", s.DirectSampling, s.AggregatorSampling, "client-task-1", "[COMPLETED] Async sampling completed!"},
		{"elicitation", s.DirectElicitation, s.AggregatorElicitation, "client-task-2", "[COMPLETED] User provided"},
	} {
		for _, side := range []struct {
			name string
			v    tasksClientSide
		}{{"direct", cs.direct}, {"aggregator", cs.agg}} {
			v := side.v
			if v.ClientTaskID != cs.clientID || len(v.Polls) < 2 || !strings.HasPrefix(v.Text, cs.text) {
				t.Errorf("%s %s: client task %q, %d polls, text %.80q", side.name, cs.kind, v.ClientTaskID, len(v.Polls), v.Text)
			}
			for _, p := range v.Polls {
				if p.TaskID != cs.clientID || p.Answer != "result" {
					t.Errorf("%s %s: the client received %s for %q (%s), its task is %s", side.name, cs.kind, p.Method, p.TaskID, p.Answer, cs.clientID)
				}
			}
		}
		for _, side := range []struct {
			name string
			v    tasksClientSide
		}{{"direct", cs.direct}, {"aggregator", cs.agg}} {
			if side.v.ServerTaskID != cs.clientID || side.v.ServerSawRelated != cs.clientID {
				t.Errorf("%s %s: the server knew the task as %q (related-task %q), want %s", side.name, cs.kind, side.v.ServerTaskID, side.v.ServerSawRelated, cs.clientID)
			}
		}
	}

	// Ids the client was never given.
	if s.DirectUnknownTask.Code != -32602 {
		t.Errorf("direct tasks/get of an unknown id: %+v", s.DirectUnknownTask)
	}
	for _, k := range []string{"nonsense", "childRawId", "directServersId", "clientTask"} {
		u, ok := s.AggregatorUnknownTasks[k]
		if !ok || u.TaskID == "" || u.TasksGet.Code != -32602 {
			t.Errorf("aggregator tasks/get of %s: %+v (present %v), want -32602", k, u, ok)
		}
	}
}
