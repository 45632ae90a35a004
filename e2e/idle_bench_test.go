package e2e

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// BenchmarkIdle10Children: what the aggregator costs while nothing
// happens: with 10 children, after initialize and tools/list, it is left
// alone for 20 s (MCP_BENCH_IDLE, a duration, to change it) and its CPU
// time and context switches over that time are read from /proc (the
// aggregator's process, not its children's). The target: no periodic
// wake-ups but the config file's poll (a stat every 2 s), so about
// nothing (the Go runtime's own background work aside). Each op is one
// such idle period: polled, as by default, and not polled (--reload-poll
// 0).
//
//	go test -run '^$' -bench Idle -benchtime 1x ./e2e/
func BenchmarkIdle10Children(b *testing.B) {
	skipUnderRace(b)
	for _, way := range []struct{ name, poll string }{{"polled", "2s"}, {"unpolled", "0"}} {
		b.Run(way.name, func(b *testing.B) { idleBench(b, "--reload-poll", way.poll) })
	}
}

func idleBench(b *testing.B, flags ...string) {
	idle := 20 * time.Second
	if s := os.Getenv("MCP_BENCH_IDLE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatalf("MCP_BENCH_IDLE=%q: %v", s, err)
		}
		idle = d
	}
	cfg, _ := tenChildren(b)
	c := startBench(b, "aggregator", append([]string{aggregatorBin, "--config", cfg}, flags...)...)
	c.handshake("{}")
	c.call(newRequest("tools/list", ""))
	var cpu, switches float64
	for i := 0; i < b.N; i++ {
		before := usage(c.pid)
		if before.cpu == 0 {
			b.Fatalf("no CPU time read for the aggregator (pid %d) from /proc", c.pid)
		}
		time.Sleep(idle) // the measurement: nothing is sent meanwhile
		used := usage(c.pid).sub(before)
		cpu += float64(used.cpu) / float64(time.Millisecond)
		switches += float64(used.switches)
	}
	secs := idle.Seconds() * float64(b.N)
	b.ReportMetric(cpu/float64(b.N), "cpu-ms/idle")
	b.ReportMetric(switches/secs, "wakeups/s")
	b.ReportMetric(cpu/secs/10, "cpu-%") // ms per s is a thousandth: /10 gives percent
	b.Logf("idle %v x %d with 10 children: %s ms CPU, %s context switches", idle, b.N,
		strconv.FormatFloat(cpu, 'f', 2, 64), strconv.FormatFloat(switches, 'f', 0, 64))
}
