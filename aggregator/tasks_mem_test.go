package aggregator

import (
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// memRounds is the number of tasks the memory benchmarks run.
const memRounds = 100_000

// serveTaskChild is serveTasks for benchmarks: one child "a", a taskChild
// for initialize and tools/list, whose task-augmented calls get ttl (raw
// JSON) and whose tasks/result answers at once, keeping nothing: the
// heap then measures the aggregator, not the child.
func serveTaskChild(tb testing.TB, ttl string) *harness {
	tb.Helper()
	h := serveOptions(tb, Options{Start: func(s config.Server) (Process, error) {
		tc := &taskChild{key: s.Key}
		n := 0 // the script runs on the child's one reader goroutine
		return startScripted(func(m *jsonrpc.Message, line []byte, out io.Writer) {
			_, task := jsonrpc.Member(m.Params, "task")
			switch {
			case m.Method == "tools/call" && task:
				n++
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"task":{"taskId":"task-`+strconv.Itoa(n)+`","status":"working","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:00Z","ttl":`+ttl+`}}`)))
			case m.Method == "tasks/result":
				id, _ := jsonrpc.Member(m.Params, "taskId")
				out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":`+string(id)+`}}}`)))
			default:
				tc.script(m, line, out)
			}
		}), nil
	}}, "a")
	init := h.exchange(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	if !strings.Contains(init, `"tasks":{`) {
		tb.Fatalf("initialize answer without the child's tasks capability: %s", init)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// createTask calls a:work as a task under the client id n and returns the
// task id the client got, its quotes included.
func createTask(tb testing.TB, h *harness, n int) string {
	line := h.exchange(`{"jsonrpc":"2.0","id":` + strconv.Itoa(n) + `,"method":"tools/call","params":{"name":"a:work","arguments":{},"task":{"ttl":60000}}}`)
	_, rest, _ := strings.Cut(line, `"taskId":`)
	id, _, ok := strings.Cut(rest, `,`)
	if !ok || !strings.HasPrefix(id, `"mcp-simple-aggregator-task-`) {
		tb.Fatalf("a:work as a task answered %s", line)
	}
	return id
}

// taskRound is one round the client makes: create, then fetch the result
// (the task stays known: its child keeps it).
func taskRound(tb testing.TB, h *harness, n int) {
	id := createTask(tb, h, 2*n)
	line := h.exchange(`{"jsonrpc":"2.0","id":` + strconv.Itoa(2*n+1) + `,"method":"tasks/result","params":{"taskId":` + id + `}}`)
	if !strings.HasSuffix(line, `"_meta":{"io.modelcontextprotocol/related-task":{"taskId":`+id+`}}}}`) {
		tb.Fatalf("tasks/result %s answered %s", id, line)
	}
}

// heapStats returns the heap's live bytes (HeapAlloc) and the bytes of its
// spans in use (HeapInuse) after two collections (the second empties what
// sync.Pools keep over the first).
func heapStats() (alloc, inuse uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.HeapInuse
}

// tableLen is the number of tasks in the aggregator's table and in the
// child's.
func tableLen(a *Aggregator) (int, int) {
	return a.relay.tasks.byID.Len(), a.children()[0].tasks.Len()
}

// BenchmarkTaskTableAfter100kTasks measures what 100,000 tasks leave in
// the aggregator (in process, over one scripted child): the tasks
// left in its tables and the growth of the live heap (after two GCs)
// from before the tasks to after them. An op is 100,000 tasks.
//
// no-ttl-results-fetched: each task created (tools/call a:work, a ttl of
// null: kept for good by its child) and its result fetched
// (tasks/result), after which it stays known, as its child keeps it. Only
// the bound per server forgets tasks: the table never holds more than
// maxTasksPerServer (asserted), and the heap grows by what that many
// tasks take. It reports the largest table seen (max-tasks).
//
// ttl-1ms-unfetched: tasks created with a ttl of 1 ms, results never
// fetched: only the sweep forgets them. It runs in registerTask at the
// registrations 1, 1+1024, 1+2*1024, ... and forgets every task whose ttl
// has run out by then, so right after a sweep the table holds only the
// tasks registered within the last ttl (R of them, the one that ran the
// sweep among them), and it grows by one a registration until the next
// sweep, sweepEvery registrations later: at most R + sweepEvery tasks
// (R + 1023 between two registrations), ever.
// Here a creation is a round trip over pipes through the aggregator and
// the child, well over 1 µs, so R < 1024 and the table stays under
// 2*sweepEvery (asserted). (In general R is the number of tasks created
// per ttl: a long ttl with results never fetched keeps that many, by
// design.) It reports the largest table seen (max-tasks, checked after
// every creation), the tasks left at the end (tasks-left) and, once the
// last ttl has passed, checks that a sweep empties both tables.
func BenchmarkTaskTableAfter100kTasks(b *testing.B) {
	b.Run("no-ttl-results-fetched", func(b *testing.B) {
		h := serveTaskChild(b, "null")
		for n := range 1024 { // warm every buffer, pool and table up
			taskRound(b, h, n)
		}
		alloc0, inuse0 := heapStats()
		maxTasks := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for n := range memRounds {
				taskRound(b, h, 1024+i*memRounds+n)
				if agg, child := tableLen(h.a); agg > maxTasks || child > maxTasks {
					maxTasks = max(agg, child)
				}
			}
		}
		b.StopTimer()
		alloc1, inuse1 := heapStats()
		if maxTasks > maxTasksPerServer {
			b.Errorf("the task table held %d tasks at most; want at most maxTasksPerServer (%d)", maxTasks, maxTasksPerServer)
		}
		b.ReportMetric(float64(maxTasks), "max-tasks")
		b.ReportMetric(float64(int64(alloc1)-int64(alloc0)), "heap-growth-bytes")
		b.ReportMetric(float64(int64(inuse1)-int64(inuse0)), "heapinuse-growth-bytes")
		b.ReportMetric(float64(alloc0), "heap-before-bytes")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*memRounds), "ns/round")
	})
	b.Run("ttl-1ms-unfetched", func(b *testing.B) {
		h := serveTaskChild(b, "1")
		alloc0, inuse0 := heapStats()
		maxTasks := 0
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for n := range memRounds {
				createTask(b, h, i*memRounds+n)
				if agg, child := tableLen(h.a); agg > maxTasks || child > maxTasks {
					maxTasks = max(agg, child)
				}
			}
		}
		b.StopTimer()
		left, _ := tableLen(h.a)
		alloc1, inuse1 := heapStats()
		if maxTasks >= 2*sweepEvery {
			b.Errorf("the task table held %d tasks at most; want fewer than 2 x %d", maxTasks, sweepEvery)
		}
		// Once the last ttl has passed, a sweep leaves nothing.
		for deadline := time.Now().Add(2 * time.Millisecond); time.Now().Before(deadline); {
		}
		h.a.relay.sweepTasks(time.Now())
		if agg, child := tableLen(h.a); agg != 0 || child != 0 {
			b.Errorf("after a sweep past every ttl: %d tasks in the aggregator's table, %d in the child's; want 0", agg, child)
		}
		b.ReportMetric(float64(maxTasks), "max-tasks")
		b.ReportMetric(float64(left), "tasks-left")
		b.ReportMetric(float64(int64(alloc1)-int64(alloc0)), "heap-growth-bytes")
		b.ReportMetric(float64(int64(inuse1)-int64(inuse0)), "heapinuse-growth-bytes")
		if left > 0 {
			b.ReportMetric(float64(int64(alloc1)-int64(alloc0))/float64(left), "growth-bytes/task-left")
		}
	})
}

// 100,000 tasks registered and never fetched, each expired by the next
// sweep (ttl 0): the sweep every sweepEvery registrations keeps both
// tables under sweepEvery + the tasks registered on the very instant of a
// sweep (see BenchmarkTaskTableAfter100kTasks for the bound with a ttl).
func TestTaskTableBoundedBySweep(t *testing.T) {
	t.Parallel()
	a := New(Options{Servers: []config.Server{{Key: "k", Command: "fake"}}})
	c := a.children()[0]
	maxTasks := 0
	for n := range memRounds {
		if _, ok := a.relay.registerTask(c, jsonrpc.AppendString(nil, fmt.Sprintf("task-%d", n)), []byte(`{"ttl":0}`)); !ok {
			t.Fatalf("task-%d not registered", n)
		}
		agg, child := tableLen(a)
		if agg != child {
			t.Fatalf("after task-%d: %d tasks in the aggregator's table, %d in the child's", n, agg, child)
		}
		maxTasks = max(maxTasks, agg)
	}
	t.Logf("%d tasks registered: the table held %d at most", memRounds, maxTasks)
	if maxTasks < sweepEvery-1 || maxTasks >= 2*sweepEvery {
		t.Errorf("the table held %d tasks at most; want about %d (the sweep runs every %d registrations)", maxTasks, sweepEvery, sweepEvery)
	}
	if got := a.relay.tasks.seq.Load(); got != memRounds {
		t.Errorf("%d ids handed out, want %d", got, memRounds)
	}
}
