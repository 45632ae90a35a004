package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The start-up benchmarks. Each case says what is remembered: "fresh" runs
// every iteration with an empty cache directory of its own (a new install,
// a container, CI); "warm" with a directory that one session before, with
// the same protocol version and client capabilities, filled (warmCache).
// They print numbers; what is asserted is only what makes the number mean
// what it says (the list is complete, the cache was warmed).
//
//	go test -run '^$' -bench 'FirstList|InitializeSlowServer' -benchtime 1x -count 5 ./e2e/
//
// (about 4 minutes: a fresh iteration waits for its slowest server, twice
// for FirstList. With -benchtime Nx, N > 1, each case runs once more first,
// with N = 1, warm-up included.)

// firstListCases are the configs of BenchmarkFirstList: servers that start
// in 0 s; in 0 and 3 s (a client not in the table, which lists once within
// 5 s: its first list waits up to 4 s); in 0, 3 and 8 s (Codex, which lists
// once within 30 s: up to 24 s).
var firstListCases = []struct {
	name, client string
	delays       []time.Duration
}{
	{"0s", "some-agent", []time.Duration{0}},
	{"0s,3s", "some-agent", []time.Duration{0, 3 * time.Second}},
	{"0s,3s,8s", "codex-mcp-client", []time.Duration{0, 3 * time.Second, 8 * time.Second}},
}

// BenchmarkFirstList: the time from launch to a client's complete first
// tools/list (initialize, notifications/initialized, tools/list holding
// every server's tools) through the aggregator.
//
//   - fresh: against the slowest server's own start (a direct client that
//     waits gets everything when the slowest is up); it reports the added
//     milliseconds (added-ms; the target: at most 100 while the slowest is
//     within the client's budget).
//   - warm: the aggregator's own time (list-ms), against 0 for a direct
//     client that already knows the list: the list comes from memory, whole,
//     before the slow servers are up.
//
// processes counts the server processes each kind of session starts.
func BenchmarkFirstList(b *testing.B) {
	skipUnderRace(b)
	b.Run("fresh", func(b *testing.B) {
		for _, tc := range firstListCases {
			b.Run(tc.name, func(b *testing.B) { freshFirstListBench(b, tc.client, tc.delays) })
		}
	})
	b.Run("warm", func(b *testing.B) {
		for _, tc := range firstListCases {
			b.Run(tc.name, func(b *testing.B) { warmFirstListBench(b, tc.client, tc.delays) })
		}
	})
	b.Run("processes", processesBench)
}

// firstListConfig writes a config of one server a delay, each with one
// tool, and returns it with the slowest delay.
func firstListConfig(b *testing.B, delays []time.Duration) (string, time.Duration) {
	var servers []server
	for i, d := range delays {
		servers = append(servers, ts(fmt.Sprintf("s%d", i), "-tools", "1", "-init-delay", d.String()))
	}
	return writeConfig(b, servers...), slices.Max(delays)
}

func freshFirstListBench(b *testing.B, client string, delays []time.Duration) {
	cfg, slowest := firstListConfig(b, delays)
	var added []float64
	for i := 0; i < b.N; i++ {
		direct, tools := timeToList(b, "direct", client, "", testserverBin, "-tools", "1", "-init-delay", slowest.String())
		through, all := timeToList(b, "aggregator", client, b.TempDir(), aggregatorBin, "--config", cfg)
		if all != tools*len(delays) {
			b.Fatalf("fresh: the first list through the aggregator has %d tools, want %d of each of %d servers", all, tools, len(delays))
		}
		added = append(added, ms(through-direct))
		b.Logf("fresh, slowest server %v: direct %v, through %v", slowest, direct.Round(time.Millisecond), through.Round(time.Millisecond))
	}
	b.ReportMetric(median(added), "added-ms")
}

func warmFirstListBench(b *testing.B, client string, delays []time.Duration) {
	cfg, slowest := firstListConfig(b, delays)
	tools := len(delays) * toolsOf(b, "-tools", "1")
	cache := warmCache(b, cfg, len(delays), tools)
	b.ResetTimer()
	var took []float64
	for i := 0; i < b.N; i++ {
		through, all := timeToList(b, "aggregator", client, cache, aggregatorBin, "--config", cfg)
		if all != tools {
			b.Fatalf("warm: the first list through the aggregator has %d tools, want the %d the servers listed last time", all, tools)
		}
		took = append(took, ms(through))
		b.Logf("warm, slowest server %v: through %v (directly, a client that knows the list: 0)", slowest, through.Round(100*time.Microsecond))
	}
	b.ReportMetric(median(took), "list-ms")
}

// timeToList launches argv as client's server, with the cache directory
// cache ("": the one TestMain set, for a server started directly), and
// times, from launch, its initialize and its first tools/list; it returns
// how many tools it holds.
func timeToList(b *testing.B, name, client, cache string, argv ...string) (time.Duration, int) {
	b.Helper()
	began := time.Now()
	var c *benchClient
	if cache == "" {
		c = startBench(b, name, argv...)
	} else {
		c = startBenchIn(b, name, cache, argv...)
	}
	defer c.close()
	c.call(benchInit(client))
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	list := c.call(newRequest("tools/list", ""))
	return time.Since(began), strings.Count(string(list), `"inputSchema":`)
}

// BenchmarkInitializeSlowServer: the time from launch to the answer to
// Codex's initialize (written at launch), over one server that takes 8 s
// to answer its own initialize. Codex's budget (24 s) covers it: fresh,
// initialize waits for the server, so that its answer says what it
// declared (about 8 s); warm, it is answered at once from what the server
// declared last time (a few ms), and starts nothing. Both answers must
// carry the server's instructions: fresh, that it waited; warm, that the
// answer came from memory. It reports init-ms.
func BenchmarkInitializeSlowServer(b *testing.B) {
	skipUnderRace(b)
	cfg := writeConfig(b, ts("slow", "-tools", "1", "-init-delay", "8s", "-instructions", "Slow."))
	b.Run("fresh", func(b *testing.B) {
		var took []float64
		for i := 0; i < b.N; i++ {
			took = append(took, ms(timeInitialize(b, "fresh", b.TempDir(), cfg)))
		}
		b.ReportMetric(median(took), "init-ms")
	})
	b.Run("warm", func(b *testing.B) {
		cache := warmCache(b, cfg, 1, toolsOf(b, "-tools", "1"))
		b.ResetTimer()
		var took []float64
		for i := 0; i < b.N; i++ {
			took = append(took, ms(timeInitialize(b, "warm", cache, cfg)))
		}
		b.ReportMetric(median(took), "init-ms")
	})
}

// timeInitialize launches the aggregator over cfg with cache and times its
// answer to Codex's initialize.
func timeInitialize(b *testing.B, name, cache, cfg string) time.Duration {
	b.Helper()
	began := time.Now()
	c := startBenchIn(b, name, cache, aggregatorBin, "--config", cfg)
	defer c.close()
	answer := c.call(benchInit("codex-mcp-client"))
	took := time.Since(began)
	if !strings.Contains(string(answer), `Slow.`) {
		b.Fatalf("%s: initialize answered in %v without the slow server's instructions: %s\nstderr:\n%s", name, took, clip(answer), c.stderr)
	}
	b.Logf("%s: initialize answered in %v", name, took.Round(100*time.Microsecond))
	return took
}

// processesBench counts the server processes each kind of session starts
// through the aggregator, over a config of three servers up at once:
//
//   - a server/discover probe that then closes its input, in the warmed
//     cache directory (probe-procs) and in an empty one
//     (fresh-probe-procs): it starts nothing either way (what the warm-up
//     remembered is of another scope: a probe declares 2026-07-28);
//   - a session that initializes and calls one tool, warm
//     (warm-one-call-procs): its server only; and fresh
//     (fresh-one-call-procs): initialize starts every server it knows
//     nothing of, to answer exactly;
//   - a session that lists, warm, and stays on until they start
//     (listing-procs): all of them.
func processesBench(b *testing.B) {
	started := filepath.Join(b.TempDir(), "started")
	var servers []server
	for _, k := range []string{"a", "b", "c"} {
		servers = append(servers, ts(k, "-tool-names", `["hello"]`, "-started-file", started))
	}
	cfg := writeConfig(b, servers...)
	count := func() float64 {
		data, _ := os.ReadFile(started)
		os.Remove(started)
		return float64(strings.Count(string(data), "\n"))
	}
	cache := warmCache(b, cfg, len(servers), len(servers)*toolsOf(b, "-tool-names", `["hello"]`))
	count() // the warm-up's
	b.ResetTimer()
	var probe, freshProbe, oneCall, freshOneCall, listing float64
	for i := 0; i < b.N; i++ {
		for _, p := range []struct {
			cache string
			n     *float64
		}{{cache, &probe}, {b.TempDir(), &freshProbe}} {
			c := startBenchIn(b, "probe", p.cache, aggregatorBin, "--config", cfg)
			c.call(newRequest("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`))
			c.close()
			*p.n += count()
		}

		for _, p := range []struct {
			cache string
			n     *float64
		}{{cache, &oneCall}, {b.TempDir(), &freshOneCall}} {
			c := startBenchIn(b, "one call", p.cache, aggregatorBin, "--config", cfg)
			c.call(benchInit("bench"))
			if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
				b.Fatal(err)
			}
			c.call(toolCallRequest("b:hello", "{}"))
			c.close()
			*p.n += count()
		}

		c := startBenchIn(b, "listing", cache, aggregatorBin, "--config", cfg)
		c.call(benchInit("bench"))
		if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			b.Fatal(err)
		}
		c.call(newRequest("tools/list", ""))
		// The list is answered from memory before any server is up: a
		// client that stays on sees its servers start.
		for deadline := time.Now().Add(waitLimit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if data, _ := os.ReadFile(started); strings.Count(string(data), "\n") >= len(servers) {
				break
			}
		}
		c.close()
		listing += count()
	}
	n := float64(b.N)
	b.ReportMetric(probe/n, "probe-procs")
	b.ReportMetric(freshProbe/n, "fresh-probe-procs")
	b.ReportMetric(oneCall/n, "warm-one-call-procs")
	b.ReportMetric(freshOneCall/n, "fresh-one-call-procs")
	b.ReportMetric(listing/n, "listing-procs")
}
