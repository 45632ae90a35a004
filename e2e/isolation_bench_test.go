package e2e

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIsolation: the latency of sequential good:echo calls (the small
// argument of echoArgs) through the aggregator serving two test servers,
// "bad" and "good", while bad does nothing (alone) and while it does each
// hostile thing:
//
//	stopped     SIGSTOP with a call (bad:slow) in flight
//	closedout   bad:closeout in flight: bad closes its stdout and lives on
//	            (the aggregator drops it; measured from right after the call)
//	crashed     bad:crash in flight (measured from right after the call)
//	hugeline    bad:slowline in flight, again and again: an 8 MiB answer
//	            line written in 64 KiB pieces 5 ms apart
//	slowreader  bad:deaf in flight (bad stops reading its stdin), with an
//	            8 MiB request queued to it; bad is killed at the end
//	flood       bad:flood in flight (log and progress notifications as fast
//	            as bad can write them), cancelled at the end
//	sampling    bad:samplemany in flight, again and again: 300
//	            sampling/createMessage requests at once, which the client
//	            answers 3 ms after each arrived, on a goroutine of its own
//	restarted   a fresh aggregator whose bad (-exit-on-discover) exits on
//	            the server/discover probe of a 2026-07-28 client and is
//	            started again; good's calls, modern ones, after discover
//
// The conditions last the whole measurement (hugeline and sampling are
// sent again as soon as they end, by a goroutine) and are checked to have
// held; each sub-benchmark then ends its condition (SIGCONT first), shuts
// the aggregator down and checks that no server process is left. Every
// case starts its own aggregator and warms it with warmCalls calls before
// the condition begins.
//
// Reported: the median and p99 of the calls (p50-us, p99-us), the worst
// call (max-us: the one-off conditions, crashed and closedout, touch only
// the first calls), and p99-vs-alone, the p99 over the median p99 of the
// alone runs so far in the process (go test -count runs each sub-benchmark
// count times in a row, alone first). flood also reports the notifications
// the client read per second, sampling the sampling requests it answered
// per second, slowreader the latency of an untimed call to good sent right
// behind the 8 MiB request (behind-huge-us). restarted's calls are modern
// ones, compared with legacy alone (BenchmarkEras: modern calls cost a few
// microseconds more).
//
//	go test -run '^$' -bench Isolation -count 5 ./e2e/
func BenchmarkIsolation(b *testing.B) {
	skipUnderRace(b)
	for _, k := range isolationCases() {
		b.Run(k.name, func(b *testing.B) { benchIsolation(b, k) })
	}
}

// Parameters of the hostile conditions.
const (
	isoHuge        = 8 << 20 // bytes of slowline's answer and of the request queued to deaf
	isoSamples     = 300
	isoSampleDelay = 3 * time.Millisecond
)

// isoCase is one hostile condition.
type isoCase struct {
	name    string
	badArgs func(b *testing.B) []string // more arguments of bad
	modern  bool                        // a 2026-07-28 client (else 2025-11-25 with sampling)
	// begin starts the condition once the client is warm and returns what
	// ends it; nil: alone.
	begin func(b *testing.B, c *isoClient) (end func())
	rate  string // "notes" or "samples": also report that rate
}

func isolationCases() []isoCase {
	return []isoCase{
		{name: "alone"},
		{name: "stopped", begin: beginStopped},
		{name: "closedout", begin: func(b *testing.B, c *isoClient) func() { return beginDropped(b, c, "bad:closeout") }},
		{name: "crashed", begin: func(b *testing.B, c *isoClient) func() { return beginDropped(b, c, "bad:crash") }},
		{name: "hugeline", begin: beginHugeLine},
		{name: "slowreader", begin: beginSlowReader},
		{name: "flood", begin: beginFlood, rate: "notes"},
		{name: "sampling", begin: beginSampling, rate: "samples"},
		{
			name: "restarted",
			badArgs: func(b *testing.B) []string {
				return []string{"-exit-on-discover", filepath.Join(b.TempDir(), "discovered")}
			},
			modern: true,
			begin: func(b *testing.B, c *isoClient) func() {
				// The probe made bad exit; it was started again and
				// initialized before server/discover was answered.
				if n := strings.Count(c.stderr.String(), "[bad] server/discover: exiting"); n != 1 {
					b.Fatalf("bad exited %d times on server/discover, want 1; stderr:\n%s", n, c.stderr.String())
				}
				return func() {}
			},
		},
	}
}

func benchIsolation(b *testing.B, k isoCase) {
	var extra []string
	if k.badArgs != nil {
		extra = k.badArgs(b)
	}
	cfg := writeConfig(b, ts("bad", append([]string{"-hostile"}, extra...)...), ts("good", "-hostile"))
	c := startIso(b, k.name, k.modern, aggregatorBin, "--config", cfg)
	if k.modern {
		c.mustCall(newRequest("server/discover", `{`+modernMeta+`}`), "server/discover")
	} else {
		c.mustCall(newRequest("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"bench","version":"1.0"}}`), "initialize")
		if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
			b.Fatal(err)
		}
	}
	pids := []int{c.pidOf("bad"), c.pidOf("good")}
	echo := c.toolCall("good:echo", echoArgs)
	for i := 0; i < warmCalls; i++ {
		c.mustCall(echo, "good:echo")
	}
	end := func() {}
	if k.begin != nil {
		end = k.begin(b, c)
	}
	notes, samples := c.notes.Load(), c.sampled.Load()
	durs := make([]time.Duration, 0, b.N)
	began := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		c.mustCall(echo, "good:echo")
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	elapsed := time.Since(began).Seconds()
	notes, samples = c.notes.Load()-notes, c.sampled.Load()-samples
	end()
	if f := c.failure.Load(); f != nil {
		b.Fatalf("client: %s; stderr:\n%s", *f, c.stderr.String())
	}
	c.close()
	for _, pid := range pids {
		if alive(pid) {
			b.Errorf("server process %d still running after the aggregator exited", pid)
		}
	}

	st := summarize(durs)
	b.ReportMetric(st.median, "p50-us")
	b.ReportMetric(st.p99, "p99-us")
	b.ReportMetric(st.max, "max-us")
	if k.name == "alone" {
		if len(durs) >= 1000 { // not one of go test's first, short runs
			aloneP99s.Lock()
			aloneP99s.v = append(aloneP99s.v, st.p99)
			aloneP99s.Unlock()
		}
	} else if alone := aloneP99(); alone > 0 {
		b.ReportMetric(st.p99/alone, "p99-vs-alone")
	}
	if c.behindHuge > 0 {
		b.ReportMetric(float64(c.behindHuge)/float64(time.Microsecond), "behind-huge-us")
	}
	switch k.rate {
	case "notes":
		b.ReportMetric(float64(notes)/elapsed, "notes/s")
	case "samples":
		b.ReportMetric(float64(samples)/elapsed, "samples/s")
	}
}

// aloneP99s are the p99s of the alone runs so far.
var aloneP99s struct {
	sync.Mutex
	v []float64
}

// aloneP99 returns the median of aloneP99s, 0 if there is none.
func aloneP99() float64 {
	aloneP99s.Lock()
	defer aloneP99s.Unlock()
	v := append([]float64(nil), aloneP99s.v...)
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

// beginStopped sends bad:slow and stops bad with SIGSTOP; the end checks
// that bad was still stopped, resumes it, cancels the call and checks
// that bad answers again.
func beginStopped(b *testing.B, c *isoClient) func() {
	pid := c.pidOf("bad")
	id, _ := c.send(c.toolCall("bad:slow", `{"ms":600000}`))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		b.Fatal(err)
	}
	// After startIso's cleanup, so before it: bad is never left stopped.
	b.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return func() {
		if state := processState(b, pid); state != "T" {
			b.Errorf("bad is in state %q at the end of the measurement, want T (stopped)", state)
		}
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			b.Fatal(err)
		}
		c.cancel(id)
		if again := c.pidOf("bad"); again != pid {
			b.Fatalf("bad answered pid %d after SIGCONT, want %d", again, pid)
		}
	}
}

// beginDropped sends a call that makes bad go (crash, closeout); the end
// checks that the call failed naming bad.
func beginDropped(b *testing.B, c *isoClient, tool string) func() {
	id, ch := c.send(c.toolCall(tool, `{}`))
	return func() {
		r, err := c.wait(id, ch, tool)
		if err != nil {
			b.Fatal(err)
		}
		if !r.isError || !bytes.Contains(r.line, []byte(`server \"bad\"`)) {
			b.Fatalf("%s ended with %s, want an error naming server \"bad\"", tool, r.line)
		}
	}
}

func beginHugeLine(b *testing.B, c *isoClient) func() {
	req := c.toolCall("bad:slowline", fmt.Sprintf(`{"bytes":%d,"pause":5}`, isoHuge))
	return keep(b, func() (func() error, error) {
		id, ch := c.send(req)
		return func() error {
			r, err := c.wait(id, ch, "bad:slowline")
			if err == nil && (r.isError || r.size < isoHuge) {
				err = fmt.Errorf("bad:slowline answered %d bytes (error %v)", r.size, r.isError)
			}
			return err
		}, nil
	})
}

// beginSlowReader makes bad deaf for far longer than the measurement and
// queues an 8 MiB request to it once bad has stopped reading (its log line
// says so, and it has read the one line more that it reads after). deaf
// cannot be cut short, so the end checks that bad was still deaf and kills
// it (SIGKILL): both calls then fail naming bad.
func beginSlowReader(b *testing.B, c *isoClient) func() {
	pid := c.pidOf("bad")
	before := strings.Count(c.stderr.String(), "[bad] deaf")
	deafID, deafCh := c.send(c.toolCall("bad:deaf", `{"ms":600000}`))
	for limit := time.Now().Add(waitLimit); strings.Count(c.stderr.String(), "[bad] deaf") == before; {
		if time.Now().After(limit) {
			b.Fatalf("bad never said it was deaf; stderr:\n%s", c.stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
	// bad's reader was already waiting for a line when deaf closed its
	// gate: it takes one more line, then stops.
	c.pidOf("bad")
	hugeID, hugeCh := c.send(c.toolCall("bad:pid", `{"pad":"`+strings.Repeat("x", isoHuge)+`"}`))
	// A call to good right behind the huge request waits for the
	// aggregator to take that line in: timed apart (behind-huge-us), so
	// that the measurement begins with the request queued.
	start := time.Now()
	c.pidOf("good")
	c.behindHuge = time.Since(start)
	return func() {
		if c.answered(deafID) || c.answered(hugeID) {
			b.Fatal("bad read again before the end of the measurement")
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		for _, call := range []struct {
			id   int64
			ch   chan isoReply
			what string
		}{{deafID, deafCh, "bad:deaf"}, {hugeID, hugeCh, "bad:pid (8 MiB)"}} {
			r, err := c.wait(call.id, call.ch, call.what)
			if err != nil {
				b.Fatal(err)
			}
			if !r.isError || !bytes.Contains(r.line, []byte(`server \"bad\"`)) {
				b.Fatalf("%s ended with %s, want an error naming server \"bad\"", call.what, r.line)
			}
		}
	}
}

// beginFlood sends one bad:flood that lasts far longer than the
// measurement; the end cancels it and checks that bad answers again.
func beginFlood(b *testing.B, c *isoClient) func() {
	before := c.notes.Load()
	id, _ := c.send(newRequest("tools/call", `{"name":"bad:flood","arguments":{"ms":600000},"_meta":{"progressToken":"flood"}}`))
	// The flood has begun once its first notification is read.
	for limit := time.Now().Add(waitLimit); c.notes.Load() == before; {
		if time.Now().After(limit) {
			b.Fatal("no notification of bad:flood")
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		if c.answered(id) {
			b.Fatal("bad:flood ended before the end of the measurement")
		}
		c.cancel(id)
		c.pidOf("bad")
	}
}

func beginSampling(b *testing.B, c *isoClient) func() {
	req := c.toolCall("bad:samplemany", fmt.Sprintf(`{"n":%d}`, isoSamples))
	want := fmt.Sprintf(`"text":"%d"`, isoSamples)
	return keep(b, func() (func() error, error) {
		id, ch := c.send(req)
		return func() error {
			r, err := c.wait(id, ch, "bad:samplemany")
			if err == nil && (r.isError || !bytes.Contains(r.line, []byte(want))) {
				err = fmt.Errorf("bad:samplemany answered %s", r.line)
			}
			return err
		}, nil
	})
}

// keep keeps a hostile condition up: arm starts one round of it and
// returns the wait for its end; rounds follow one another until the
// returned end is called, which waits for the last round to finish. The
// first round is armed before keep returns.
func keep(b *testing.B, arm func() (func() error, error)) (end func()) {
	wait, err := arm()
	if err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			if err := wait(); err != nil {
				done <- err
				return
			}
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			var err error
			if wait, err = arm(); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() {
		close(stop)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// isoClient is the client of BenchmarkIsolation, on a benchClient's
// process and pipes: calls may be in flight from several goroutines at
// once (the measured calls and the hostile ones), so one reader goroutine
// hands each answer to whoever waits for it, by id. It answers the
// aggregator's requests: sampling/createMessage isoSampleDelay after it
// arrived, on a goroutine of its own; any other at once, from the reader.
// Notifications are counted and dropped.
type isoClient struct {
	*benchClient
	modern bool // requests carry the 2026-07-28 _meta

	behindHuge time.Duration // slowreader: the call right behind the 8 MiB request

	ids     atomic.Int64
	mu      sync.Mutex
	waiters map[int64]chan isoReply // by id, until answered

	done    chan struct{} // closed when the reader has ended
	failure atomic.Pointer[string]
	samples chan isoSample // to the answering goroutine

	notes   atomic.Int64 // notifications read
	sampled atomic.Int64 // sampling requests answered
}

// isoReply is an answer as the reader hands it over.
type isoReply struct {
	isError bool
	size    int    // bytes of the line
	line    []byte // a copy, when at most isoKeepLine bytes
}

const isoKeepLine = 64 << 10

type isoSample struct {
	id []byte
	at time.Time
}

// startIso starts argv (the aggregator) as the client's peer.
func startIso(b *testing.B, name string, modern bool, argv ...string) *isoClient {
	c := &isoClient{
		benchClient: startBench(b, name, argv...),
		modern:      modern,
		waiters:     map[int64]chan isoReply{},
		done:        make(chan struct{}),
		samples:     make(chan isoSample, 1<<14),
	}
	c.reading.Store(true) // the reader drains the output to its end
	go c.read()
	go c.answerSamples()
	return c
}

func (c *isoClient) setFailure(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.failure.CompareAndSwap(nil, &msg)
}

func (c *isoClient) read() {
	defer close(c.done)
	defer close(c.samples)
	sampling := []byte(`"method":"sampling/createMessage"`)
	for {
		line, size, err := c.readHead()
		if err != nil {
			select {
			case <-c.stop: // closing
			default:
				c.setFailure("reading: %v", err)
			}
			return
		}
		kind, rid := scanLine(line)
		switch kind {
		case lineRequest:
			if bytes.Contains(line, sampling) {
				c.samples <- isoSample{id: bytes.Clone(rid), at: time.Now()}
			} else if err := c.answer(line, rid); err != nil {
				c.setFailure("answering a request: %v", err)
			}
		case lineResponse, lineError:
			id := idNumber(rid)
			c.mu.Lock()
			ch := c.waiters[id]
			delete(c.waiters, id)
			c.mu.Unlock()
			if ch == nil { // a cancelled call's
				continue
			}
			r := isoReply{isError: kind == lineError, size: size}
			if size <= isoKeepLine {
				r.line = bytes.Clone(line)
			}
			ch <- r
		case lineNotification:
			c.notes.Add(1)
		default:
			c.setFailure("not a JSON-RPC line: %s", clip(line))
		}
	}
}

// answerSamples answers each sampling request isoSampleDelay after it
// arrived, in order.
func (c *isoClient) answerSamples() {
	for s := range c.samples {
		if d := time.Until(s.at.Add(isoSampleDelay)); d > 0 {
			time.Sleep(d)
		}
		line := append(append(append([]byte(nil), idPrefix...), s.id...), `,"result":`+samplingAnswer+"}\n"...)
		if c.write(line) == nil {
			c.sampled.Add(1)
		}
	}
}

// toolCall prebuilds a tools/call of the client's era.
func (c *isoClient) toolCall(tool, args string) request {
	if c.modern {
		return newRequest("tools/call", `{`+modernMeta+`,"name":`+strconv.Quote(tool)+`,"arguments":`+args+`}`)
	}
	return toolCallRequest(tool, args)
}

// send writes r under a fresh id and returns the id and where its answer
// will come.
func (c *isoClient) send(r request) (int64, chan isoReply) {
	id, ch, _ := c.sendAt(r)
	return id, ch
}

// sendAt is send that also returns when the line began to be written:
// after any line of the client's that was being written.
func (c *isoClient) sendAt(r request) (int64, chan isoReply, time.Time) {
	id := c.ids.Add(1)
	ch := make(chan isoReply, 1)
	c.mu.Lock()
	c.waiters[id] = ch
	c.mu.Unlock()
	// r goes out from where it lies: a huge request is not copied.
	at, err := c.writeAt(strconv.AppendInt(append([]byte(nil), idPrefix...), id, 10), r)
	if err != nil {
		c.setFailure("writing request %d: %v", id, err)
	}
	return id, ch, at
}

// wait waits for the answer to id, at most waitLimit (a deadlock guard).
func (c *isoClient) wait(id int64, ch chan isoReply, what string) (isoReply, error) {
	c.waiting.Add(1)
	defer c.waiting.Add(-1)
	t := time.NewTimer(waitLimit)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-c.done:
		select {
		case r := <-ch:
			return r, nil
		default:
		}
		return isoReply{}, fmt.Errorf("%s (id %d): the aggregator's output ended (%s); stderr:\n%s", what, id, c.failureText(), c.stderr.String())
	case <-t.C:
		return isoReply{}, fmt.Errorf("%s (id %d): no answer within %v (%s); stderr:\n%s", what, id, waitLimit, c.failureText(), c.stderr.String())
	}
}

func (c *isoClient) failureText() string {
	if f := c.failure.Load(); f != nil {
		return *f
	}
	return "no client-side failure"
}

// mustCall sends r and waits for its answer; an error answer or none ends
// the benchmark.
func (c *isoClient) mustCall(r request, what string) isoReply {
	c.tb.Helper()
	id, ch := c.send(r)
	reply, err := c.wait(id, ch, what)
	if err != nil {
		c.tb.Fatal(err)
	}
	if reply.isError {
		c.tb.Fatalf("%s: error answer %s", what, reply.line)
	}
	return reply
}

// answered reports whether the call id was answered (or cancelled).
func (c *isoClient) answered(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, waiting := c.waiters[id]
	return !waiting
}

// cancel cancels the call id: its answer, if one still comes, is dropped.
func (c *isoClient) cancel(id int64) {
	c.mu.Lock()
	delete(c.waiters, id)
	c.mu.Unlock()
	if err := c.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`+"\n", id)); err != nil {
		c.tb.Fatal(err)
	}
}

// pidOf asks server key (which runs with -hostile) for its process id.
func (c *isoClient) pidOf(key string) int {
	c.tb.Helper()
	r := c.mustCall(c.toolCall(key+":pid", `{}`), key+":pid")
	i := bytes.Index(r.line, []byte(`"text":"`))
	if i < 0 {
		c.tb.Fatalf("%s:pid answered %s", key, r.line)
	}
	rest := r.line[i+len(`"text":"`):]
	pid, err := strconv.Atoi(string(rest[:max(bytes.IndexByte(rest, '"'), 0)]))
	if err != nil || pid <= 0 {
		c.tb.Fatalf("%s:pid answered %s", key, r.line)
	}
	return pid
}
