package e2e

import (
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"
)

// largeResultBytes is the size of the text of BenchmarkLargeResult's tool
// result: 100 MiB, or MCP_BENCH_LARGE_BYTES for quick runs.
func largeResultBytes(b *testing.B) int {
	s := os.Getenv("MCP_BENCH_LARGE_BYTES")
	if s == "" {
		return 100 << 20
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		b.Fatalf("MCP_BENCH_LARGE_BYTES=%q: want a number of bytes", s)
	}
	return n
}

// BenchmarkLargeResult: tools/call big whose result carries a text of
// 100 MiB (MCP_BENCH_LARGE_BYTES to change it), each way, once (x1) and
// three times in a row (x3). Every op starts the way afresh (outside the
// timer), makes one small call, then the large ones, and reads the peak
// resident set (VmHWM) of the process the client talks to: the test
// server itself (direct: what producing the answer costs), the bare
// relay, or the aggregator (not its child). MB are MiB.
//
// It reports the medians over the ops of the peak (peak-rss-MB), of the
// time of one large call (call-ms), the size of the answer line
// (msg-MB), peak/msg and peak - (2*msg + 30 MB) (over-target-MB; the
// target, for the aggregator, is at most 0, for any number in a row).
//
//	go test -run '^$' -bench LargeResult -benchtime 3x ./e2e/
func BenchmarkLargeResult(b *testing.B) {
	skipUnderRace(b)
	if runtime.GOOS != "linux" {
		b.Skip("peak RSS is read from VmHWM in /proc/PID/status: Linux only")
	}
	size := largeResultBytes(b)
	for _, w := range benchWays() {
		for _, times := range []int{1, 3} {
			b.Run(w.name+"/x"+strconv.Itoa(times), func(b *testing.B) { benchLargeResults(b, w, size, times) })
		}
	}
}

// benchLargeResults is one way of BenchmarkLargeResult, with times large
// results in a row.
func benchLargeResults(b *testing.B, w benchWay, size, times int) {
	small := toolCallRequest(w.prefix+"big", `{"bytes":10}`)
	large := toolCallRequest(w.prefix+"big", `{"bytes":`+strconv.Itoa(size)+`}`)
	var peaks, durs []float64
	msgMB := 0.0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := startBench(b, w.name, w.argv(b)...)
		c.handshake("{}")
		c.call(small) // the aggregator answers once its child is ready
		b.StartTimer()
		for range times {
			start := time.Now()
			line := c.call(large)
			durs = append(durs, float64(time.Since(start))/float64(time.Millisecond))
			if len(line) < size {
				c.fail("answer of %d bytes, want more than %d", len(line), size)
			}
			msgMB = float64(len(line)) / (1 << 20)
		}
		b.StopTimer()
		peaks = append(peaks, rssKB(b, c.pid, "VmHWM")/1024)
		c.close() // frees its memory before the next op
	}
	peak := median(peaks)
	b.ReportMetric(peak, "peak-rss-MB")
	b.ReportMetric(msgMB, "msg-MB")
	if msgMB > 0 {
		b.ReportMetric(peak/msgMB, "peak/msg")
	}
	b.ReportMetric(peak-(2*msgMB+30), "over-target-MB")
	b.ReportMetric(median(durs), "call-ms")
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}
