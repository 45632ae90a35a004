//go:build unix

package share

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// The holder and the session side in one process, under -race: a fake
// server started in-process, sessions dialling the holder's socket.

// fakeProc is an in-process server: it answers initialize, echoes
// tools/call's params back as its result, and ends when its stdin ends.
type fakeProc struct {
	inR  *io.PipeReader
	inW  *io.PipeWriter
	outR *io.PipeReader
	outW *io.PipeWriter
	done chan struct{}
	once sync.Once
}

func startFake() *fakeProc {
	f := &fakeProc{done: make(chan struct{})}
	f.inR, f.inW = io.Pipe()
	f.outR, f.outW = io.Pipe()
	go func() {
		defer f.end()
		br := bufio.NewReader(f.inR)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			m, err := jsonrpc.Parse(line)
			if err != nil || !m.IsRequest() {
				continue
			}
			var out []byte
			switch m.Method {
			case "initialize":
				out = jsonrpc.AppendResult(nil, m.ID, []byte(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`))
			case "server/discover":
				out = jsonrpc.AppendError(nil, m.ID, []byte(`{"code":-32601,"message":"Method not found"}`))
			default:
				out = jsonrpc.AppendResult(nil, m.ID, m.Params)
			}
			if _, err := f.outW.Write(out); err != nil {
				return
			}
		}
	}()
	return f
}

func (f *fakeProc) end() {
	f.once.Do(func() {
		f.inR.Close()
		f.outW.Close()
		close(f.done)
	})
}

func (f *fakeProc) Stdin() io.WriteCloser { return f.inW }
func (f *fakeProc) Stdout() io.Reader     { return f.outR }
func (f *fakeProc) Done() <-chan struct{} { return f.done }
func (f *fakeProc) Err() error            { <-f.done; return nil }
func (f *fakeProc) Stop() error           { f.inW.Close(); f.end(); return nil }
func (f *fakeProc) Terminate() error      { return f.Stop() }

// holderWorld runs a holder in-process on a socket directory of its own.
type holderWorld struct {
	t       *testing.T
	dir     string
	starts  atomic.Int32
	stop    context.CancelFunc
	stopped chan error
}

func newHolderWorld(t *testing.T) *holderWorld {
	base, err := os.MkdirTemp("/tmp", "hw") // short: a socket path's limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := &holderWorld{t: t, dir: base + "/d", stopped: make(chan error, 1)}
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	ready := make(chan struct{})
	go func() {
		w.stopped <- RunHolder(ctx, HolderOptions{
			Dir:   w.dir,
			Logf:  func(string, ...any) {},
			Ready: func() { close(ready) },
			Start: func(*Header) (stdio.Started, error) {
				w.starts.Add(1)
				return startFake(), nil
			},
		})
	}()
	select {
	case <-ready:
	case err := <-w.stopped:
		t.Fatalf("the holder did not start: %v", err)
	}
	t.Cleanup(func() {
		stop()
		if err := <-w.stopped; err != nil {
			t.Errorf("RunHolder: %v", err)
		}
	})
	return w
}

// client is a session side, driven like the aggregator drives a process.
type client struct {
	t  *testing.T
	c  *Client
	in chan map[string]json.RawMessage
}

func (w *holderWorld) dial(name string) *client {
	c, err := Dial(DialOptions{
		Dir:    w.dir,
		Header: Header{Key: "srv", Command: "fake", Args: []string{"x"}, Dir: "/", Pid: 1, IdleMs: 60000},
		Logf:   func(string, ...any) {},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	cl := &client{t: w.t, c: c, in: make(chan map[string]json.RawMessage, 100)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		br := bufio.NewReader(c.Stdout())
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]json.RawMessage
			json.Unmarshal(line, &m)
			cl.in <- m
		}
	}()
	w.t.Cleanup(func() { c.Stop(); <-read })
	return cl
}

func (cl *client) send(line string) {
	cl.t.Helper()
	if _, err := cl.c.Stdin().Write([]byte(line + "\n")); err != nil {
		cl.t.Fatal(err)
	}
}

func (cl *client) next() map[string]json.RawMessage {
	cl.t.Helper()
	select {
	case m := <-cl.in:
		return m
	case <-time.After(5 * time.Second):
		cl.t.Fatal("nothing came")
		return nil
	}
}

func TestHolderSharesOneProcess(t *testing.T) {
	w := newHolderWorld(t)
	a, b := w.dial("a"), w.dial("b")
	for i, cl := range []*client{a, b} {
		cl.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
		if m := cl.next(); string(m["id"]) != "1" || !strings.Contains(string(m["result"]), `"fake"`) {
			t.Fatalf("session %d: initialize answered %v", i, m)
		}
		cl.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	for i, cl := range []*client{a, b, a, b} {
		text := fmt.Sprintf("call %d", i)
		cl.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"` + text + `"}}`)
		if m := cl.next(); string(m["id"]) != "7" || string(m["result"]) != `{"text":"`+text+`"}` {
			t.Fatalf("%s answered %v", text, m)
		}
	}
	if n := w.starts.Load(); n != 1 {
		t.Errorf("%d processes started for two sessions, want 1", n)
	}
	if got := a.c.HolderPid(); got != os.Getpid() {
		t.Errorf("HolderPid %d, want this process's %d", got, os.Getpid())
	}
}

func TestDirRefusedBeforeDial(t *testing.T) {
	base, err := os.MkdirTemp("/tmp", "hw")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	os.Chmod(base, 0o755)
	_, err = Dial(DialOptions{Dir: base, Logf: func(string, ...any) {}})
	if err == nil || !strings.Contains(err.Error(), "has mode 0755") {
		t.Errorf("Dial on a 0755 directory: %v", err)
	}
}

// A holder that stops (SIGTERM) leaves its sessions able to go on with a
// new one: a call in flight gets an error, the next connects anew,
// replaying initialize, and is answered.
func TestSessionGoesOnWithANewHolder(t *testing.T) {
	w := newHolderWorld(t)
	a := w.dial("a")
	a.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	a.next()
	a.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	w.stop()
	err := <-w.stopped
	w.stopped <- nil // for w's cleanup
	if err != nil {
		t.Fatal(err)
	}
	w2 := newHolderWorld2(t, w.dir)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"text":"again"}}`)
	if m := a.next(); string(m["id"]) != "2" || string(m["result"]) != `{"text":"again"}` {
		t.Fatalf("after a new holder: %v", m)
	}
	if n := w2.starts.Load(); n != 1 {
		t.Errorf("the new holder started %d processes, want 1", n)
	}
}

// newHolderWorld2 runs a holder on dir (of a holder that has stopped).
func newHolderWorld2(t *testing.T, dir string) *holderWorld {
	w := &holderWorld{t: t, dir: dir, stopped: make(chan error, 1)}
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	ready := make(chan struct{})
	go func() {
		w.stopped <- RunHolder(ctx, HolderOptions{
			Dir: dir, Logf: func(string, ...any) {}, Ready: func() { close(ready) },
			Start: func(*Header) (stdio.Started, error) { w.starts.Add(1); return startFake(), nil },
		})
	}()
	<-ready
	t.Cleanup(func() { stop(); <-w.stopped })
	return w
}
