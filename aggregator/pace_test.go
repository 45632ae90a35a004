package aggregator

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// frozenPacing is pacing on a clock that never moves (nothing is earned
// back by time), whose waits return at once and are counted.
type frozenPacing struct {
	mu    sync.Mutex
	waits int
}

func (f *frozenPacing) pacing() server.Pacing {
	t0 := time.Unix(1000, 0)
	return server.Pacing{Now: func() time.Time { return t0 }, Wait: func(time.Duration, <-chan struct{}) {
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
		const n = server.NotifyBurst/2 + 100 // past the burst only when blank lines count
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
		t.Errorf("%d notifications, within the burst, made the reader wait %d times", server.NotifyBurst/2+100, waits)
	}
	if waits := flood(true); waits == 0 {
		t.Errorf("notifications with a blank line after each, past the burst in lines, never made the reader wait")
	}
}
