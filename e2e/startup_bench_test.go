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

// BenchmarkFirstList: the time from launch to a client's complete first
// tools/list, through the aggregator, against the slowest server's own
// start (a direct client that waits gets everything when the slowest is
// up): servers that start in 0 s; in 0 and 3 s (a client not in the table,
// which lists once within 5 s); in 0, 3 and 8 s (Codex, which lists once
// within 30 s). It reports the added milliseconds of each op (the target:
// at most 100 while the slowest is within the client's budget), and how
// many server processes each kind of session starts: a server/discover
// probe, a session that only calls one tool, a session that lists.
//
//	go test -run '^$' -bench FirstList -benchtime 3x ./e2e/
func BenchmarkFirstList(b *testing.B) {
	skipUnderRace(b)
	for _, tc := range []struct {
		name, client string
		delays       []time.Duration
	}{
		{"0s", "some-agent", []time.Duration{0}},
		{"0s,3s", "some-agent", []time.Duration{0, 3 * time.Second}},
		{"0s,3s,8s", "codex-mcp-client", []time.Duration{0, 3 * time.Second, 8 * time.Second}},
	} {
		b.Run(tc.name, func(b *testing.B) { firstListBench(b, tc.client, tc.delays) })
	}
	b.Run("processes", processesBench)
}

func firstListBench(b *testing.B, client string, delays []time.Duration) {
	var servers []server
	for i, d := range delays {
		servers = append(servers, ts(fmt.Sprintf("s%d", i), "-tools", "1", "-init-delay", d.String()))
	}
	cfg := writeConfig(b, servers...)
	slowest := slices.Max(delays)
	var added []float64
	for i := 0; i < b.N; i++ {
		direct, tools := timeToList(b, "direct", client, testserverBin, "-tools", "1", "-init-delay", slowest.String())
		through, all := timeToList(b, "aggregator", client, aggregatorBin, "--config", cfg)
		if all != tools*len(delays) {
			b.Fatalf("the first list through the aggregator has %d tools, want %d of each of %d servers", all, tools, len(delays))
		}
		added = append(added, float64(through-direct)/float64(time.Millisecond))
		b.Logf("slowest server %v: direct %v, through %v", slowest, direct.Round(time.Millisecond), through.Round(time.Millisecond))
	}
	slices.Sort(added)
	b.ReportMetric(added[len(added)/2], "added-ms")
}

// timeToList launches argv as client's server and times, from launch, its
// initialize and its first tools/list; it returns how many tools it holds.
func timeToList(b *testing.B, name, client string, argv ...string) (time.Duration, int) {
	b.Helper()
	began := time.Now()
	c := startBench(b, name, argv...)
	defer c.close()
	c.call(newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}`))
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	list := c.call(newRequest("tools/list", ""))
	return time.Since(began), strings.Count(string(list), `"inputSchema":`)
}

// processesBench counts the server processes each kind of session starts
// through the aggregator, over a config of three servers.
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
	var probe, oneCall, listing float64
	for i := 0; i < b.N; i++ {
		c := startBench(b, "probe", aggregatorBin, "--config", cfg)
		c.call(newRequest("server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`))
		c.close()
		probe += count()

		c = startBench(b, "one call", aggregatorBin, "--config", cfg)
		c.handshake("{}")
		c.call(toolCallRequest("b:hello", "{}"))
		c.close()
		oneCall += count()

		c = startBench(b, "listing", aggregatorBin, "--config", cfg)
		c.handshake("{}")
		c.call(newRequest("tools/list", ""))
		c.close()
		listing += count()
	}
	n := float64(b.N)
	b.ReportMetric(probe/n, "probe-procs")
	b.ReportMetric(oneCall/n, "one-call-procs")
	b.ReportMetric(listing/n, "listing-procs")
}
