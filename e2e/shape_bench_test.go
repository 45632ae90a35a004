package e2e

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkToolsList1000: tools/list of one server with 1,000 tools (plus
// the test server's own), directly and through the aggregator. The
// aggregator checks the shape of every entry once, when it fetches the
// server's list (aggregator/internal/shape); the client's tools/list is then a
// copy of the list it keeps, so it answers faster than the server itself
// (which builds its answer at every call). BenchmarkShapeCheck, in
// aggregator/, measures the check.
func BenchmarkToolsList1000(b *testing.B) {
	skipUnderRace(b)
	cfg := writeConfig(b, ts("alpha", "-tools", "1000"))
	for _, way := range []struct {
		name string
		argv []string
	}{
		{"direct", []string{testserverBin, "-name", "alpha", "-tools", "1000"}},
		{"aggregator", []string{aggregatorBin, "--config", cfg}},
	} {
		b.Run(way.name, func(b *testing.B) {
			c := startBench(b, way.name, way.argv...)
			c.handshake("{}")
			list := newRequest("tools/list", "")
			line := c.call(list)
			if tools := bytes.Count(line, []byte(`"name":`)); tools < 1000 {
				b.Fatalf("tools/list lists %d tools, want 1,000 and more", tools)
			}
			c.timedCalls(50, []request{list}, nil)
			durs := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			durs = c.timedCalls(b.N, []request{list}, durs)
			b.StopTimer()
			st := summarize(durs)
			b.ReportMetric(st.median, "median-us")
			b.ReportMetric(st.p99, "p99-us")
			b.ReportMetric(float64(len(line))/1024, "answer-KiB")
			remember("toolslist1000/"+way.name, st.median)
			if direct, ok := recall("toolslist1000/direct"); ok && way.name == "aggregator" {
				b.ReportMetric(st.median/direct, "vs-direct")
			}
		})
	}
}
