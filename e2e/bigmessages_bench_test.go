package e2e

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkBigMessages: what a huge line to or from one server costs the
// other traffic. The aggregator serves "bad" and "good" (the test server
// with -hostile); while bad's huge line is in flight, again and again, the
// client makes sequential good:echo calls, each followed by a ping (which
// the aggregator answers itself), and times both.
//
//	alone      nothing else in flight
//	answer100  bad:big answers a text of 100 MiB
//	request100 bad:pid is sent a 100 MiB argument, which bad reads slowly
//	           (-slow-read 1ms: 64 KiB a millisecond, 1.6 s for 100 MiB)
//	request50  the same with 50 MiB
//
// A timed call starts once the client may write it: a line written while
// the client is still writing a huge request to the aggregator waits for
// that, on the client's side, and is timed from when it goes. Reported:
// the median, p99 and worst of the echo calls (p50-us, p99-us, max-us)
// and of the pings (ping-p50-us, ping-p99-us, ping-max-us), and how many
// huge lines went by during the measurement (rounds; at least
// bigMinRounds: the measurement goes on until then).
//
//	go test -run '^$' -bench BigMessages -count 3 ./e2e/
func BenchmarkBigMessages(b *testing.B) {
	skipUnderRace(b)
	for _, k := range []struct {
		name    string
		badArgs []string
		huge    func(c *isoClient) request // the huge call; nil: alone
		answer  int                        // the least size of its answer
	}{
		{name: "alone"},
		{name: "answer100", huge: bigAnswer(100 << 20), answer: 100 << 20},
		{name: "request100", badArgs: []string{"-slow-read", "1ms"}, huge: bigRequest(100 << 20)},
		{name: "request50", badArgs: []string{"-slow-read", "1ms"}, huge: bigRequest(50 << 20)},
	} {
		b.Run(k.name, func(b *testing.B) {
			cfg := writeConfig(b, ts("bad", append([]string{"-hostile"}, k.badArgs...)...), ts("good", "-hostile"))
			c := startIso(b, k.name, false, aggregatorBin, "--config", cfg)
			var huge request
			if k.huge != nil {
				huge = k.huge(c)
			}
			benchBig(b, c, huge, k.answer)
		})
	}
}

// bigMinRounds is how many huge lines at least go by while calls are timed.
const bigMinRounds = 3

// bigAnswer returns a call whose answer is a text of n bytes.
func bigAnswer(n int) func(c *isoClient) request {
	return func(c *isoClient) request { return c.toolCall("bad:big", fmt.Sprintf(`{"bytes":%d}`, n)) }
}

// bigRequest returns a call with an argument of n bytes.
func bigRequest(n int) func(c *isoClient) request {
	return func(c *isoClient) request {
		return c.toolCall("bad:pid", `{"pad":"`+strings.Repeat("x", n)+`"}`)
	}
}

func benchBig(b *testing.B, c *isoClient, huge request, answer int) {
	c.mustCall(newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1.0"}}`), "initialize")
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	echo, ping := c.toolCall("good:echo", echoArgs), newRequest("ping", "")
	for i := 0; i < warmCalls; i++ {
		c.mustCall(echo, "good:echo")
		c.mustCall(ping, "ping")
	}
	var rounds atomic.Int64
	end := func() {}
	if huge != nil {
		end = keep(b, func() (func() error, error) {
			id, ch := c.send(huge)
			return func() error {
				r, err := c.wait(id, ch, "the huge call")
				if err == nil && (r.isError || r.size < answer) {
					err = fmt.Errorf("the huge call answered %d bytes (error %v)", r.size, r.isError)
				}
				rounds.Add(1)
				return err
			}, nil
		})
	}
	timed := func(r request, what string) time.Duration {
		id, ch, start := c.sendAt(r)
		reply, err := c.wait(id, ch, what)
		if err == nil && reply.isError {
			err = fmt.Errorf("%s: error answer %s", what, reply.line)
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var echos, pings []time.Duration
	first := rounds.Load()
	b.ResetTimer()
	for i := 0; i < b.N || (huge != nil && rounds.Load()-first < bigMinRounds); i++ {
		echos = append(echos, timed(echo, "good:echo"))
		pings = append(pings, timed(ping, "ping"))
	}
	b.StopTimer()
	n := rounds.Load() - first
	end()
	if f := c.failure.Load(); f != nil {
		b.Fatalf("client: %s; stderr:\n%s", *f, c.stderr.String())
	}
	c.close()
	e, p := summarize(echos), summarize(pings)
	b.ReportMetric(e.median, "p50-us")
	b.ReportMetric(e.p99, "p99-us")
	b.ReportMetric(e.max, "max-us")
	b.ReportMetric(p.median, "ping-p50-us")
	b.ReportMetric(p.p99, "ping-p99-us")
	b.ReportMetric(p.max, "ping-max-us")
	b.ReportMetric(float64(n), "rounds")
}
