package e2e

import (
	"fmt"
	"strings"
	"sync"
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
// Some calls are behind the huge line on one pipe, which nothing can
// undo: the first call written after a huge request (the aggregator reads
// its stdin in order, and must read, check and pass on the huge line
// before it reads the call), and a call in flight while the client reads
// a huge answer (once a line has begun to go out on the aggregator's
// stdout, what comes after it waits for its last byte). Those are also
// reported apart: behind-max-us (the worst of them, echo or ping) and
// behind-n (how many); beside-max-us and beside-p99-us are the calls
// that no huge line was ahead of on a pipe, where what a huge line costs
// its neighbours is the aggregator's doing. huge-read-ms is the median
// time the client took to read a huge answer, from its first MiB to its
// newline: what a call behind it waits at least.
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
	var hmu sync.Mutex
	var hugeSent []time.Time // when each huge request began to be written
	end := func() {}
	if huge != nil {
		end = keep(b, func() (func() error, error) {
			id, ch, at := c.sendAt(huge)
			if answer == 0 { // a huge request, not a small one for a huge answer
				hmu.Lock()
				hugeSent = append(hugeSent, at)
				hmu.Unlock()
			}
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
	var calls []bigCall
	timed := func(r request, what string) time.Duration {
		id, ch, start := c.sendAt(r)
		reply, err := c.wait(id, ch, what)
		if err == nil && reply.isError {
			err = fmt.Errorf("%s: error answer %s", what, reply.line)
		}
		if err != nil {
			b.Fatal(err)
		}
		end := time.Now()
		calls = append(calls, bigCall{start: start, end: end})
		return end.Sub(start)
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
	hmu.Lock()
	sent := append([]time.Time(nil), hugeSent...)
	hmu.Unlock()
	var answers []span
	for _, s := range c.longLines() {
		if answer > 0 && s.size >= answer {
			answers = append(answers, s)
		}
	}
	beside, behind := splitBehind(calls, sent, answers)
	e, p, bs, bh := summarize(echos), summarize(pings), summarize(beside), summarize(behind)
	b.ReportMetric(e.median, "p50-us")
	b.ReportMetric(e.p99, "p99-us")
	b.ReportMetric(e.max, "max-us")
	b.ReportMetric(p.median, "ping-p50-us")
	b.ReportMetric(p.p99, "ping-p99-us")
	b.ReportMetric(p.max, "ping-max-us")
	b.ReportMetric(bs.p99, "beside-p99-us")
	b.ReportMetric(bs.max, "beside-max-us")
	b.ReportMetric(bh.max, "behind-max-us")
	b.ReportMetric(float64(bh.n), "behind-n")
	if len(answers) > 0 {
		reads := make([]time.Duration, len(answers))
		for i, s := range answers {
			reads[i] = s.to.Sub(s.from)
		}
		b.ReportMetric(summarize(reads).median/1000, "huge-read-ms")
	}
	b.ReportMetric(float64(n), "rounds")
}

// bigCall is a timed call of benchBig: when it was written and answered.
type bigCall struct{ start, end time.Time }

// splitBehind sorts the timed calls (sequential, in order) into those no
// huge line was ahead of on a pipe and those behind one: the first call
// written after a huge request began to be written (sent), and every call
// in flight while the client read a huge answer (answers).
func splitBehind(calls []bigCall, sent []time.Time, answers []span) (beside, behind []time.Duration) {
	for i, call := range calls {
		after := false
		for _, at := range sent {
			if at.Before(call.start) && (i == 0 || !at.Before(calls[i-1].start)) {
				after = true
			}
		}
		for _, s := range answers {
			if s.from.Before(call.end) && s.to.After(call.start) {
				after = true
			}
		}
		if after {
			behind = append(behind, call.end.Sub(call.start))
		} else {
			beside = append(beside, call.end.Sub(call.start))
		}
	}
	return beside, behind
}
