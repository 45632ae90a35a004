package e2e

import (
	"bytes"
	"testing"
	"time"
)

// taskWays are the ways BenchmarkTaskRound compares: the test server with
// -tasks spawned by the client, and the same server as the one child of
// the aggregator.
func taskWays() []benchWay {
	return []benchWay{
		{"direct", func(*testing.B) []string { return []string{testserverBin, "-name", "alpha", "-tasks"} }, ""},
		{"aggregator", func(b *testing.B) []string {
			return []string{aggregatorBin, "--config", writeConfig(b, ts("alpha", "-tasks"))}
		}, "alpha:"},
	}
}

// taskRoundBlock is the number of task rounds each way makes in turn: about
// overheadBlock requests (see there why blocks must not be short).
const taskRoundBlock = 34

// warmTaskRounds are made before the clock starts.
const warmTaskRounds = 100

// maxPolls bounds the tasks/get of one round: the echo tool is instant, so
// the task is almost always completed at the first poll.
const maxPolls = 10000

// taskTimes are the durations of the task rounds of one way, whole and
// step by step, and the number of tasks/get they took.
type taskTimes struct {
	round, create, get, result []time.Duration
	polls                      int
}

var (
	completedStatus = []byte(`"status":"completed"`)
	workingStatus   = []byte(`"status":"working"`)
	taskIDKey       = []byte(`"taskId":`)
)

// taskID returns the raw taskId string (quotes included) of the first
// taskId member of line.
func taskID(line []byte) []byte {
	_, rest, ok := bytes.Cut(line, taskIDKey)
	if !ok || len(rest) < 2 || rest[0] != '"' {
		return nil
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return nil
	}
	return append([]byte(nil), rest[:end+2]...)
}

// taskRound makes one full task round: tools/call echo as a task, tasks/get
// until it is completed, tasks/result; and appends its times to tt.
func (c *benchClient) taskRound(create request, tt *taskTimes) {
	c.tb.Helper()
	start := time.Now()
	id := taskID(c.call(create))
	created := time.Now()
	if id == nil {
		c.fail("no taskId in the answer to %s", bytes.TrimSpace(c.wbuf))
	}
	params := `{"taskId":` + string(id) + `}`
	for polls := 1; ; polls++ {
		line := c.call(newRequest("tasks/get", params))
		tt.polls++
		if bytes.Contains(line, completedStatus) {
			break
		}
		if !bytes.Contains(line, workingStatus) || polls >= maxPolls {
			c.fail("tasks/get %s answered %s (poll %d)", id, clip(line), polls)
		}
	}
	polled := time.Now()
	line := c.call(newRequest("tasks/result", params))
	done := time.Now()
	if !bytes.Contains(line, []byte(`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":`+string(id)+`}}`)) {
		c.fail("tasks/result %s answered %s", id, clip(line))
	}
	tt.round = append(tt.round, done.Sub(start))
	tt.create = append(tt.create, created.Sub(start))
	tt.get = append(tt.get, polled.Sub(created))
	tt.result = append(tt.result, done.Sub(polled))
}

// BenchmarkTaskRound: one full MCP task round (protocol 2025-11-25) —
// tools/call echo with params.task, tasks/get until completed (one poll,
// nearly always), tasks/result — directly to the test server with -tasks
// and through the aggregator with that server as its one child, in
// alternating blocks of rounds (the order rotating) so that both ways see
// the same machine; and, interleaved the same way, plain tools/call echo,
// whose added latency is the yardstick of a relayed request. An op is one
// task round and one plain call each way (ns/op means little).
//
// It reports the median round each way (direct-us/round, agg-us/round),
// what the aggregator adds (added-us/round) and the ratio agg/direct
// (agg/direct), the added medians of each step (create-, get-,
// result-added-us), the tasks/get per round (polls/round, both ways), the
// added median of a plain call (call-added-us) and added-us/round over
// the plain calls' worth of the round's requests, (2 + polls) x
// call-added-us (vs-calls: 1 means that a task request costs the
// aggregator what a plain call does), and the aggregator's CPU time per
// round (its process only, not its child).
//
//	go test -run '^$' -bench TaskRound -count 5 ./e2e/
func BenchmarkTaskRound(b *testing.B) {
	skipUnderRace(b)
	ways := taskWays()
	clients := make([]*benchClient, len(ways))
	create := make([]request, len(ways))
	echo := make([]request, len(ways))
	for i, w := range ways {
		create[i] = newRequest("tools/call", `{"name":"`+w.prefix+`echo","arguments":`+echoArgs+`,"task":{"ttl":60000}}`)
		echo[i] = toolCallRequest(w.prefix+"echo", echoArgs)
		clients[i] = startWay(b, w, "{}", echo[i])
		var warm taskTimes
		for range warmTaskRounds {
			clients[i].taskRound(create[i], &warm)
		}
	}

	rounds := func(n, block int, run func(way, count int)) {
		for round := 0; n > 0 || round == 0; round++ {
			for k := range ways {
				run((round+k)%len(ways), block)
			}
			n -= block
		}
	}
	times := make([]taskTimes, len(ways))
	calls := make([][]time.Duration, len(ways))
	use := make([]procUsage, len(ways))
	b.ResetTimer()
	rounds(b.N, taskRoundBlock, func(w, n int) {
		u := usage(clients[w].pid)
		for range n {
			clients[w].taskRound(create[w], &times[w])
		}
		d := usage(clients[w].pid).sub(u)
		use[w].cpu += d.cpu
	})
	rounds(b.N, overheadBlock, func(w, n int) {
		calls[w] = clients[w].timedCalls(n, []request{echo[w]}, calls[w])
	})
	b.StopTimer()

	const direct, agg = 0, 1
	med := func(d []time.Duration) float64 { return summarize(d).median }
	dRound, aRound := med(times[direct].round), med(times[agg].round)
	added := aRound - dRound
	b.ReportMetric(dRound, "direct-us/round")
	b.ReportMetric(aRound, "agg-us/round")
	b.ReportMetric(added, "added-us/round")
	b.ReportMetric(aRound/dRound, "agg/direct")
	b.ReportMetric(med(times[agg].create)-med(times[direct].create), "create-added-us")
	b.ReportMetric(med(times[agg].get)-med(times[direct].get), "get-added-us")
	b.ReportMetric(med(times[agg].result)-med(times[direct].result), "result-added-us")
	aggPolls := float64(times[agg].polls) / float64(len(times[agg].round))
	b.ReportMetric(float64(times[direct].polls)/float64(len(times[direct].round)), "direct-polls/round")
	b.ReportMetric(aggPolls, "agg-polls/round")
	callAdded := med(calls[agg]) - med(calls[direct])
	b.ReportMetric(callAdded, "call-added-us")
	if callAdded > 0 { // else noise swamped the hop: no ratio
		b.ReportMetric(added/((2+aggPolls)*callAdded), "vs-calls")
	}
	if use[agg].cpu > 0 {
		b.ReportMetric(float64(use[agg].cpu)/float64(time.Microsecond)/float64(len(times[agg].round)), "agg-cpu-us/round")
	}
}
