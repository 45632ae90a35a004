package aggregator

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
)

// waitLimit bounds every wait of a test for an event; it is a deadlock
// watchdog, not a measure.
const waitLimit = 10 * time.Second

// harness is an aggregator served over pipes in process, driven as its
// client, with a deadlock watchdog on every read.
type harness struct {
	t        testing.TB
	a        *Aggregator
	in       *io.PipeWriter
	lines    chan string // the aggregator's output, line by line; closed at its end
	log      syncBuffer
	hurry    context.CancelFunc // ends Serve's context, as a signal does: the end is hurried
	inFlight bool               // leftInFlight: the teardown hurries the end
}

// leftInFlight says that the test ends with requests in flight that
// nothing will answer (a call whose server waits for the client, which the
// test no longer plays): the teardown hurries the end (h.hurry) as soon as
// it closed the input, so that the end does not give them answerGrace. A
// test that ends its input itself, expecting answers, keeps the polite end.
func (h *harness) leftInFlight() { h.inFlight = true }

// serve runs an aggregator over one child per key, made by start, with
// sep between key and name.
func serve(t testing.TB, sep string, start func(config.Server) (Process, error), keys ...string) *harness {
	t.Helper()
	return serveOptions(t, Options{Separator: sep, Start: start}, keys...)
}

// startServers has every server started, as a client's first list does
// (servers start when a request needs them), and waits until each is up
// or failed: before notifications/initialized, what they send waits at the
// gate.
func (h *harness) startServers() {
	h.t.Helper()
	h.exchange(`{"jsonrpc":"2.0","id":"start","method":"tools/list"}`)
}

// allReady is the harness's clock for a client's first lists: they wait
// until every server is up or failed, as the real wait (listWait) has them
// do whenever the servers start in time, which on a loaded machine they
// may not. A test of a server still starting sets its own (once).
func allReady(a *startup, _ string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, c := range a.children() {
			select {
			case <-c.Ready():
			case <-a.life.Context().Done():
				return
			}
		}
	}()
	return done
}

// serveOptions is serve with more options; Name, Version, Servers and Log
// are the harness's, and so is the clock of the first lists (allReady)
// unless the test sets its own.
func serveOptions(t testing.TB, opts Options, keys ...string) *harness {
	t.Helper()
	for _, k := range keys {
		opts.Servers = append(opts.Servers, config.Server{Key: k, Command: "fake"})
	}
	h := &harness{t: t, lines: make(chan string, 100)}
	opts.Name, opts.Version, opts.Log = "agg", "test", NewLogger(&h.log, "", false)
	if opts.listDeadline == nil {
		opts.listDeadline = allReady
	}
	h.a = New(opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h.in = inW
	ctx, cancel := context.WithCancel(context.Background())
	h.hurry = cancel
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.a.Serve(ctx, inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(h.lines)
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			h.lines <- strings.TrimSuffix(l, "\n")
		}
	}()
	t.Cleanup(func() {
		defer checkHooks(t)
		defer cancel()
		inW.Close()
		if h.inFlight {
			cancel()
		}
		go func() {
			for range h.lines {
			}
		}()
		select {
		case <-served:
		case <-time.After(waitLimit):
			t.Error("Serve did not return after its input closed")
		}
	})
	return h
}

// serveFakes runs an aggregator over fake children answering with
// fakes[key].
func serveFakes(t testing.TB, sep string, fakes map[string]func(string, []byte) string, keys ...string) *harness {
	return serve(t, sep, func(s config.Server) (Process, error) { return startFake(fakes[s.Key]), nil }, keys...)
}

// send sends the client line.
func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// read returns the aggregator's next line.
func (h *harness) read() string {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("the output ended")
		}
		return l
	case <-time.After(waitLimit):
		h.t.Fatal("no line from the aggregator within 10 s")
	}
	return ""
}

// exchange sends the client line and returns the next line.
func (h *harness) exchange(line string) string {
	h.t.Helper()
	h.send(line)
	return h.read()
}

// closeInput ends the client's input.
func (h *harness) closeInput() { h.in.Close() }

// rest returns every line up to the end of the output.
func (h *harness) rest() []string {
	h.t.Helper()
	var got []string
	timeout := time.After(waitLimit)
	for {
		select {
		case l, ok := <-h.lines:
			if !ok {
				return got
			}
			got = append(got, l)
		case <-timeout:
			h.t.Fatal("the output did not end within 10 s")
		}
	}
}

// logged returns what the aggregator has logged so far, once written.
func (h *harness) logged() string {
	h.t.Helper()
	if !h.a.log.Flush(waitLimit) {
		h.t.Fatalf("the log was not written within %v", waitLimit)
	}
	return h.log.String()
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
