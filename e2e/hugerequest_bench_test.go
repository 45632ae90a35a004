package e2e

import (
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkHugeRequest: what a client's request of 50 MiB costs the
// requests it writes after it, against a plain copy of the same bytes
// through a pipe, measured in turn in each op so that both see the same
// machine. The aggregator serves "bad" (the test server, reading its stdin
// slowly: 64 KiB a millisecond, so that it takes little of the machine
// while the huge line waits for it); each op writes bad:pid a 50 MiB
// argument and a ping right behind it, and then waits for bad's answer.
//
//	copy-ms        cat copies the line from a pipe, from its first byte
//	               written to cat's exit at the end of its input
//	keep-ms        the same for a Go process that only reads the line
//	               into memory (testserver -keep-line: ReadBytes), as any
//	               reader that hands a line on must keep it
//	read-ms        from the huge request's first byte written to the answer
//	               of the ping behind it: the aggregator reads, checks and
//	               forwards the line before it reads the ping
//	behind-ms      from when the ping could be written (the huge write
//	               done) to its answer
//	behind-max-ms  the worst of those
//
// Medians over the ops, but behind-max-ms.
//
//	go test -run '^$' -bench HugeRequest -benchtime 10x ./e2e/
func BenchmarkHugeRequest(b *testing.B) {
	skipUnderRace(b)
	if _, err := exec.LookPath("cat"); err != nil {
		b.Skip("no cat to copy with")
	}
	cfg := writeConfig(b, ts("bad", "-hostile", "-slow-read", "1ms"))
	c := startIso(b, "aggregator", false, aggregatorBin, "--config", cfg)
	c.mustCall(newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0"}}`), "initialize")
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	ping := newRequest("ping", "")
	huge := bigRequest(50 << 20)(c)
	c.mustCall(c.toolCall("bad:pid", `{}`), "bad:pid") // bad is up
	var copies, keeps, reads, behinds []float64
	for range b.N {
		line := appendRequest(nil, 1, huge)
		copies = append(copies, ms(copyThroughPipe(b, line, "cat")))
		keeps = append(keeps, ms(copyThroughPipe(b, line, testserverBin, "-keep-line")))
		id, ch, start := c.sendAt(huge)
		pid, pch, pingAt := c.sendAt(ping)
		if _, err := c.wait(pid, pch, "the ping"); err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		reads, behinds = append(reads, ms(end.Sub(start))), append(behinds, ms(end.Sub(pingAt)))
		if r, err := c.wait(id, ch, "the huge request"); err != nil || r.isError {
			b.Fatalf("the huge request: %v (error answer %v)", err, r.isError)
		}
	}
	b.ReportMetric(median(copies), "copy-ms")
	b.ReportMetric(median(keeps), "keep-ms")
	b.ReportMetric(median(reads), "read-ms")
	b.ReportMetric(median(behinds), "behind-ms")
	b.ReportMetric(slices.Max(behinds), "behind-max-ms")
}

// copyThroughPipe writes line into the pipe to a process that reads it to
// its end (its output discarded), and returns how long that took, to the
// process's exit.
func copyThroughPipe(b *testing.B, line []byte, name string, args ...string) time.Duration {
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	_, err = in.Write(line)
	in.Close()
	if werr := cmd.Wait(); err != nil || werr != nil {
		b.Fatalf("%s: %v, %v", name, err, werr)
	}
	return time.Since(start)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
