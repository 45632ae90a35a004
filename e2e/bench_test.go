package e2e

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// The benchmarks compare three ways of reaching one fast Go child (the test
// server, tool echo with a small argument):
//
//	direct      the client spawns the test server itself
//	relay       through a bare byte relay (e2e/relay): the physical floor of
//	            one extra hop
//	aggregator  through mcp-simple-aggregator with that one child (alpha:echo)
//
// Targets (issue): the aggregator's added median latency per sequential call
// (median(agg) - median(direct)) is at most 1.25x the relay's; its throughput
// with 32 concurrent callers at least 0.85x the relay's; its RSS with 10
// children at most 15 MB; tools/list over 10 children x ~119 tools at most
// 1 ms; a sampling round-trip adds no more than the per-call overhead.
//
// Every benchmark reports its numbers with b.ReportMetric; ns/op is the mean
// time per call and says less than the medians. BenchmarkOverhead runs the
// three ways interleaved in one run and is the one to quote for the added
// latencies and the ratios; the separate benchmarks report added-us against
// the latest direct run in the same process (noisy) and vs-relay against
// the latest relay run. cpu-us/call and ctxsw/call are those of the process
// the client talks to (test server, relay or aggregator; not its children).
//
//	go test -run '^$' -bench . -count 3 ./e2e/

// echoArgs is the small argument of every echo call.
const echoArgs = `{"text":"hello"}`

// benchWay is one way of reaching the test server "alpha".
type benchWay struct {
	name string
	argv func(b *testing.B) []string
	// prefix of tool names: "" direct and through the relay, "alpha:"
	// through the aggregator.
	prefix string
}

func benchWays() []benchWay {
	return []benchWay{
		{"direct", func(*testing.B) []string { return []string{testserverBin, "-name", "alpha"} }, ""},
		{"relay", func(*testing.B) []string { return []string{relayBin, testserverBin, "-name", "alpha"} }, ""},
		{"aggregator", func(b *testing.B) []string {
			return []string{aggregatorBin, "--config", writeConfig(b, ts("alpha"))}
		}, "alpha:"},
	}
}

// overheadWays are the ways BenchmarkOverhead interleaves: benchWays, and
// with MCP_BENCH_BASELINE set to the path of another build of the
// aggregator, that build as a fourth way, "baseline", for measuring one
// change head to head (its added latency and its CPU per call are reported
// beside the aggregator's).
func overheadWays() []benchWay {
	ways := benchWays()
	if bin := os.Getenv("MCP_BENCH_BASELINE"); bin != "" {
		ways = append(ways, benchWay{"baseline", func(b *testing.B) []string {
			return []string{bin, "--config", writeConfig(b, ts("alpha"))}
		}, "alpha:"})
	}
	return ways
}

func skipUnderRace(b *testing.B) {
	if raceEnabled {
		b.Skip("race detector on: numbers meaningless")
	}
}

// warmCalls are made before the clock starts: they bring every process to
// its steady state (the aggregator serves calls only once its child is
// ready) and warm the caches.
const warmCalls = 300

// startWay starts the way, shakes hands with client capabilities caps and
// warms it up with calls of r.
func startWay(b *testing.B, w benchWay, caps string, r request) *benchClient {
	b.Helper()
	c := startBench(b, w.name, w.argv(b)...)
	c.handshake(caps)
	c.timedCalls(warmCalls, []request{r}, nil)
	return c
}

// recent keeps the latest numbers of the separate benchmarks so that later
// ones can report added latency and ratios.
var recent = struct {
	sync.Mutex
	v map[string]float64
}{v: map[string]float64{}}

func remember(key string, v float64) {
	recent.Lock()
	recent.v[key] = v
	recent.Unlock()
}

func recall(key string) (float64, bool) {
	recent.Lock()
	defer recent.Unlock()
	v, ok := recent.v[key]
	return v, ok
}

// reportAdded reports the median added over the latest direct run. No ratio
// to the relay's added median here: that difference of two separate runs is
// small and swings with machine noise, so a ratio of it means nothing;
// BenchmarkOverhead reports the ratio from interleaved calls.
func reportAdded(b *testing.B, bench, way string, median float64) {
	remember(bench+"/"+way, median)
	if direct, ok := recall(bench + "/direct"); ok && way != "direct" {
		b.ReportMetric(median-direct, "added-us")
	}
}

// reportUsage reports the CPU time and the context switches per call of the
// process the client talks to (the test server, the relay or the
// aggregator, without its children): what explains the added latency.
func reportUsage(b *testing.B, u procUsage, calls int) {
	if u.cpu > 0 && calls > 0 {
		b.ReportMetric(float64(u.cpu)/float64(time.Microsecond)/float64(calls), "cpu-us/call")
		b.ReportMetric(float64(u.switches)/float64(calls), "ctxsw/call")
	}
}

// BenchmarkLatency: sequential tools/call echo, one at a time.
func BenchmarkLatency(b *testing.B) {
	benchSequential(b, "latency", "echo", echoArgs, "{}")
}

// benchSequential times b.N sequential calls of tool each way and reports
// the median, p99 and what each hop adds.
func benchSequential(b *testing.B, label, tool, args, caps string) {
	skipUnderRace(b)
	for _, w := range benchWays() {
		b.Run(w.name, func(b *testing.B) {
			r := toolCallRequest(w.prefix+tool, args)
			c := startWay(b, w, caps, r)
			durs := make([]time.Duration, 0, b.N)
			u := usage(c.pid)
			b.ResetTimer()
			durs = c.timedCalls(b.N, []request{r}, durs)
			b.StopTimer()
			reportUsage(b, usage(c.pid).sub(u), b.N)
			st := summarize(durs)
			b.ReportMetric(st.median, "median-us")
			b.ReportMetric(st.p99, "p99-us")
			reportAdded(b, label, w.name, st.median)
		})
	}
}

// BenchmarkProgress: sequential tools/call progress, whose tool sends three
// notifications/progress before its answer. (The _meta member rides after
// the arguments in the request that toolCallRequest builds.)
func BenchmarkProgress(b *testing.B) {
	benchSequential(b, "progress", "progress", `{"steps":3},"_meta":{"progressToken":"bench"}`, "{}")
}

// throughputWorkers is the number of concurrent callers.
const throughputWorkers = 32

// BenchmarkThroughput32: 32 goroutines each send a tools/call echo and wait
// for its answer, over one connection.
func BenchmarkThroughput32(b *testing.B) {
	skipUnderRace(b)
	for _, w := range benchWays() {
		b.Run(w.name, func(b *testing.B) {
			r := toolCallRequest(w.prefix+"echo", echoArgs)
			c := startWay(b, w, "{}", r)
			c.concurrent(throughputWorkers, 20*throughputWorkers, []request{r}) // warm up the concurrent path
			u := usage(c.pid)
			b.ResetTimer()
			elapsed := c.concurrent(throughputWorkers, b.N, []request{r})
			b.StopTimer()
			reportUsage(b, usage(c.pid).sub(u), b.N)
			rate := float64(b.N) / elapsed.Seconds()
			b.ReportMetric(rate, "calls/s")
			remember("throughput/"+w.name, rate)
			if relay, ok := recall("throughput/relay"); ok && w.name == "aggregator" {
				b.ReportMetric(rate/relay, "vs-relay")
			}
		})
	}
}

// BenchmarkSampling: tools/call sample, during which the server sends
// sampling/createMessage to the client, which answers it: two round trips
// through every hop.
func BenchmarkSampling(b *testing.B) {
	benchSequential(b, "sampling", "sample", `{}`, `{"sampling":{}}`)
}

// tenChildren is a config of 10 test servers s0..s9, each with args.
func tenChildren(b *testing.B, args ...string) (string, []string) {
	var servers []server
	var keys []string
	for i := 0; i < 10; i++ {
		key := fmt.Sprintf("s%d", i)
		servers = append(servers, ts(key, args...))
		keys = append(keys, key)
	}
	return writeConfig(b, servers...), keys
}

// BenchmarkToolsList10x100: tools/list through the aggregator over 10
// children with 100 generated tools each (plus the test server's own), once
// started.
func BenchmarkToolsList10x100(b *testing.B) {
	skipUnderRace(b)
	cfg, _ := tenChildren(b, "-tools", "100")
	toolsListBench(b, cfg)
}

// toolsListBench measures tools/list through the aggregator over cfg,
// 10 children of 100 generated tools each (and the test server's own).
func toolsListBench(b *testing.B, cfg string) {
	c := startBench(b, "aggregator", aggregatorBin, "--config", cfg)
	c.handshake("{}")
	list := newRequest("tools/list", "")
	line := c.call(list)
	tools := bytes.Count(line, []byte(`{"name":"s`))
	if tools < 10*100 || tools%10 != 0 {
		b.Fatalf("tools/list lists %d tools, want 10 children x the same 100+", tools)
	}
	size := len(line)
	c.timedCalls(50, []request{list}, nil)
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	durs = c.timedCalls(b.N, []request{list}, durs)
	b.StopTimer()
	st := summarize(durs)
	b.ReportMetric(st.median, "median-us")
	b.ReportMetric(st.p99, "p99-us")
	b.ReportMetric(float64(size)/1024, "answer-KiB")
	b.ReportMetric(float64(tools), "tools")
}

// BenchmarkRSS10Children: the aggregator's resident set with 10 children
// after initialize, tools/list and b.N calls (32 concurrent callers, spread
// over the children), read from /proc/PID/status. MB are MiB.
func BenchmarkRSS10Children(b *testing.B) {
	skipUnderRace(b)
	cfg, keys := tenChildren(b)
	c := startBench(b, "aggregator", aggregatorBin, "--config", cfg)
	c.handshake("{}")
	c.call(newRequest("tools/list", ""))
	var rs []request
	for _, k := range keys {
		rs = append(rs, toolCallRequest(k+":echo", echoArgs))
	}
	c.timedCalls(len(rs)*10, rs, nil)
	b.ResetTimer()
	c.concurrent(throughputWorkers, b.N, rs)
	b.StopTimer()
	c.call(newRequest("tools/list", ""))
	b.ReportMetric(rssKB(b, c.pid, "VmRSS")/1024, "rss-MB")
	b.ReportMetric(rssKB(b, c.pid, "VmHWM")/1024, "peak-rss-MB")
}

// Block sizes of BenchmarkOverhead: each way makes this many calls in turn.
//
// A block of sequential calls must be long enough to measure the steady
// state, which is what latency per sequential call means. With blocks of
// 10, each block began on processes that had been idle for the other two
// ways' blocks: the first calls paid for cold caches and sleeping
// threads, which inflated the direct baseline most (median 81 µs against
// 55-62 µs run alone) and so shrank every added latency and skewed their
// ratio. With blocks of 100, the medians match the ways run alone
// (BenchmarkLatency) and the relay adds the +55-70 µs that the issue
// gives as the floor of one hop on a 2-core VM. Rotating the order every
// round still spreads slow drift of the machine over the three ways.
const (
	overheadBlock    = 100                    // sequential calls
	overheadThrBlock = 20 * throughputWorkers // concurrent calls
)

// BenchmarkOverhead runs direct, relay and aggregator side by side in one
// run, in alternating blocks of calls (the order rotating every round), so
// that machine noise falls on all three alike: b.N/2 sequential echo calls,
// b.N/4 sampling round trips and 3*b.N echo calls from 32 concurrent callers
// (an op is thus a mix and ns/op means little). It reports the medians, the
// added medians and their ratio (aggregator/relay; target <= 1.25), the CPU
// time and context switches per sequential call of the relay and the
// aggregator processes, the same medians for sampling, and the throughputs
// and their ratio (aggregator/relay; target >= 0.85).
func BenchmarkOverhead(b *testing.B) {
	skipUnderRace(b)
	ways := overheadWays()
	clients := make([]*benchClient, len(ways))
	echo := make([]request, len(ways))
	sample := make([]request, len(ways))
	for i, w := range ways {
		echo[i] = toolCallRequest(w.prefix+"echo", echoArgs)
		sample[i] = toolCallRequest(w.prefix+"sample", `{}`)
		clients[i] = startWay(b, w, `{"sampling":{}}`, echo[i])
		clients[i].timedCalls(50, []request{sample[i]}, nil)
		clients[i].concurrent(throughputWorkers, 20*throughputWorkers, []request{echo[i]})
	}

	// rounds runs n calls in blocks of block per way, rotating the order.
	rounds := func(n, block int, run func(way, calls int)) {
		for round := 0; n > 0 || round == 0; round++ {
			for k := range ways {
				run((round+k)%len(ways), block)
			}
			n -= block * len(ways)
		}
	}
	echoDurs := make([][]time.Duration, len(ways))
	sampleDurs := make([][]time.Duration, len(ways))
	thrCalls := make([]int, len(ways))
	thrTime := make([]time.Duration, len(ways))
	use := make([]procUsage, len(ways)) // of the sequential echo calls

	b.ResetTimer()
	rounds(b.N/2, overheadBlock, func(w, n int) {
		u := usage(clients[w].pid)
		echoDurs[w] = clients[w].timedCalls(n, []request{echo[w]}, echoDurs[w])
		d := usage(clients[w].pid).sub(u)
		use[w].cpu += d.cpu
		use[w].switches += d.switches
	})
	rounds(b.N/4, overheadBlock, func(w, n int) {
		sampleDurs[w] = clients[w].timedCalls(n, []request{sample[w]}, sampleDurs[w])
	})
	rounds(3*b.N, overheadThrBlock, func(w, n int) {
		thrTime[w] += clients[w].concurrent(throughputWorkers, n, []request{echo[w]})
		thrCalls[w] += n
	})
	b.StopTimer()

	const direct, relay, agg, baseline = 0, 1, 2, 3
	var e, s [4]stats
	var thr [4]float64
	for i := range ways {
		e[i] = summarize(echoDurs[i])
		s[i] = summarize(sampleDurs[i])
		thr[i] = float64(thrCalls[i]) / thrTime[i].Seconds()
	}
	relayAdded := e[relay].median - e[direct].median
	aggAdded := e[agg].median - e[direct].median
	b.ReportMetric(e[direct].median, "direct-us")
	b.ReportMetric(e[relay].median, "relay-us")
	b.ReportMetric(e[agg].median, "agg-us")
	b.ReportMetric(relayAdded, "relay-added-us")
	b.ReportMetric(aggAdded, "agg-added-us")
	if relayAdded > 0 { // else noise swamped the hop: no ratio
		b.ReportMetric(aggAdded/relayAdded, "added-ratio")
	}
	if len(ways) > baseline {
		baseAdded := e[baseline].median - e[direct].median
		b.ReportMetric(baseAdded, "baseline-added-us")
		if baseAdded > 0 {
			b.ReportMetric(aggAdded/baseAdded, "agg-vs-baseline")
		}
	}
	for i := relay; i < len(ways); i++ {
		n := float64(len(echoDurs[i]))
		name := map[int]string{relay: "relay", agg: "agg", baseline: "baseline"}[i]
		b.ReportMetric(float64(use[i].cpu)/float64(time.Microsecond)/n, name+"-cpu-us/call")
		b.ReportMetric(float64(use[i].switches)/n, name+"-ctxsw/call")
	}
	sRelayAdded := s[relay].median - s[direct].median
	sAggAdded := s[agg].median - s[direct].median
	b.ReportMetric(s[direct].median, "sample-direct-us")
	b.ReportMetric(sRelayAdded, "sample-relay-added-us")
	b.ReportMetric(sAggAdded, "sample-agg-added-us")
	if sRelayAdded > 0 {
		b.ReportMetric(sAggAdded/sRelayAdded, "sample-added-ratio")
	}
	b.ReportMetric(thr[direct], "direct-calls/s")
	b.ReportMetric(thr[relay], "relay-calls/s")
	b.ReportMetric(thr[agg], "agg-calls/s")
	b.ReportMetric(thr[agg]/thr[relay], "thr-ratio")
}
