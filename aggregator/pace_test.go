package aggregator

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A server may send notifyBurst notifications at once; past them, each
// waits for its share of notifyRate a second, and idle time earns the
// burst back, never more.
func TestNotifyBucket(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for i := range notifyBurst {
		if d := b.take(t0, 1); d != 0 {
			t.Fatalf("notification %d of a burst waits %v", i+1, d)
		}
	}
	perNote := time.Second / notifyRate
	if d := b.take(t0, 1); d != perNote {
		t.Errorf("the one past the burst waits %v, want %v", d, perNote)
	}
	if d := b.take(t0, 1); d != 2*perNote {
		t.Errorf("the next waits %v, want %v", d, 2*perNote)
	}
	// An hour idle earns one burst back, not more.
	later := t0.Add(time.Hour)
	for i := range notifyBurst {
		if d := b.take(later, 1); d != 0 {
			t.Fatalf("after an idle hour, notification %d waits %v", i+1, d)
		}
	}
	if d := b.take(later, 1); d == 0 {
		t.Error("after an idle hour, more than a burst went at once")
	}
}

// Each answer earns perAnswer messages: a call's own progress, however
// fast the calls come, is never held back.
func TestNotifyBucketAnswersEarn(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for range notifyBurst {
		b.take(t0, 1)
	}
	for call := range 1000 { // no time passes: only answers earn
		b.answered(t0)
		for n := range perAnswer {
			if d := b.take(t0, 1); d != 0 {
				t.Fatalf("call %d's message %d waits %v", call, n, d)
			}
		}
	}
	if d := b.take(t0, 1); d == 0 {
		t.Error("a message beyond what the answers earned went at once")
	}
}

// A request to the client costs perRequest messages: a flood of sampling
// requests is held back sooner than one of notifications.
func TestNotifyBucketRequestsCostMore(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for i := range notifyBurst / perRequest {
		if d := b.take(t0, perRequest); d != 0 {
			t.Fatalf("request %d of a burst waits %v", i+1, d)
		}
	}
	if d, want := b.take(t0, perRequest), perRequest*time.Second/notifyRate; d != want {
		t.Errorf("the request past the burst waits %v, want %v", d, want)
	}
}

// frozenPacing is pacing on a clock that never moves (nothing is earned
// back by time), whose waits return at once and are counted.
type frozenPacing struct {
	mu    sync.Mutex
	waits int
}

func (f *frozenPacing) pacing() pacing {
	t0 := time.Unix(1000, 0)
	return pacing{now: func() time.Time { return t0 }, wait: func(time.Duration, <-chan struct{}) {
		f.mu.Lock()
		f.waits++
		f.mu.Unlock()
	}}
}

func (f *frozenPacing) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.waits
}

// A server's reader is slowed once its notifications pass the burst, and
// a blank line costs as much as a notification (it earns nothing): a
// flood cannot hide between empty lines. Answers to the aggregator's
// requests earn: a call's own progress is never held back.
func TestPacingIsWiredToTheReader(t *testing.T) {
	t.Parallel()
	flood := func(blank bool) int {
		f := &frozenPacing{}
		const n = notifyBurst/2 + 100 // past the burst only when blank lines count
		h := serveOptions(t, Options{pacing: f.pacing(), Start: func(config.Server) (Process, error) {
			return startScripted(answerSession(`{"tools":{}}`, `{"name":"go","inputSchema":{"type":"object"}}`,
				func(m *jsonrpc.Message, _ []byte, out io.Writer) {
					if m.Method != "tools/call" {
						return
					}
					var b strings.Builder
					for i := range n {
						fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`+"\n", i)
						if blank {
							b.WriteString(" \n")
						}
					}
					out.Write([]byte(b.String()))
					out.Write(jsonrpc.AppendResult(nil, m.ID, []byte(`{"content":[]}`)))
				})), nil
		}}, "k")
		h.exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"k:go","arguments":{}}}`)
		readUntil(t, h, `"id":2`)
		return f.count()
	}
	if waits := flood(false); waits != 0 {
		t.Errorf("%d notifications, within the burst, made the reader wait %d times", notifyBurst/2+100, waits)
	}
	if waits := flood(true); waits == 0 {
		t.Errorf("notifications with a blank line after each, past the burst in lines, never made the reader wait")
	}
}
