package e2e

import (
	"testing"
	"time"
)

// modernMeta is the _meta of a 2026-07-28 client's request in the era
// benchmark.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0"}}`

// BenchmarkEras: the latency a 2026-07-28 client pays over a legacy child
// (the test server, tool echo), against a 2025-11-25 client over the same
// child, both through the aggregator, calls interleaved in blocks. The
// modern call carries its _meta, which the aggregator checks, and its
// answer gets resultType spliced in. Reports both medians, the difference
// (modern-added-us) and the ratio.
//
//	go test -run '^$' -bench Eras -count 5 ./e2e/
func BenchmarkEras(b *testing.B) {
	skipUnderRace(b)
	argv := []string{aggregatorBin, "--config", writeConfig(b, ts("alpha"))}
	legacy := startBench(b, "legacy", argv...)
	legacy.handshake("{}")
	legacyCall := toolCallRequest("alpha:echo", echoArgs)

	modern := startBench(b, "modern", argv...)
	modern.call(newRequest("server/discover", `{`+modernMeta+`}`))
	modernCall := newRequest("tools/call", `{`+modernMeta+`,"name":"alpha:echo","arguments":`+echoArgs+`}`)

	legacy.timedCalls(warmCalls, []request{legacyCall}, nil)
	modern.timedCalls(warmCalls, []request{modernCall}, nil)
	var legacyDurs, modernDurs []time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n += 2 * overheadBlock {
		legacyDurs = legacy.timedCalls(overheadBlock, []request{legacyCall}, legacyDurs)
		modernDurs = modern.timedCalls(overheadBlock, []request{modernCall}, modernDurs)
	}
	b.StopTimer()
	l, m := summarize(legacyDurs), summarize(modernDurs)
	b.ReportMetric(l.median, "legacy-median-us")
	b.ReportMetric(m.median, "modern-median-us")
	b.ReportMetric(m.median-l.median, "modern-added-us")
	b.ReportMetric(m.median/l.median, "modern/legacy")
}
