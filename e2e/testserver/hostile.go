package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The hostile tools misbehave on purpose, so that the isolation of one
// server from the others can be tested and measured with real processes
// (e2e/isolation_test.go, e2e/isolation_bench_test.go). They are listed and
// served only with -hostile, so that the test server's tool list stays the
// same for every other test. Reading stdin slowly is the tool deaf, and
// crashing the tool crash, both in tools_answer.go.
//
// With -exit-on-discover FILE the server behaves as some legacy servers do
// on the 2026-07-28 probe: it exits on server/discover if FILE does not
// exist (creating it first, so that the next run answers), and otherwise
// answers server/discover with -32601 like any unknown method.

// hostileTools lists the hostile tools, in tools/list order.
func hostileTools() []toolDef {
	return []toolDef{
		{"pid", simpleDef("pid", "answer the server's process id, as text", ""), toolPid},
		{"closeout", simpleDef("closeout", "close stdout without answering; the server lives on until its stdin ends, then exits 0", ""), toolCloseOut},
		{"flood", simpleDef("flood", "send notifications/message of about 100 bytes (and notifications/progress when _meta.progressToken is set) "+
			"as fast as possible until cancelled or arguments.ms (default 1000) have passed, then answer \"done\"",
			`"ms":{"type":"number"}`), toolFlood},
		{"samplemany", simpleDef("samplemany", "send arguments.n (default 300) sampling/createMessage requests to the client at once, "+
			"wait for every answer, then answer how many answers came (as text)",
			`"n":{"type":"number"}`), toolSampleMany},
		{"slowline", simpleDef("slowline", "answer a text of arguments.bytes bytes (default 8 MiB), writing the answer line in pieces of 64 KiB "+
			"with arguments.pause ms (default 5) between pieces; the line is always finished, even when cancelled",
			`"bytes":{"type":"number"},"pause":{"type":"number"}`), toolSlowLine},
	}
}

var hostiles = func() map[string]toolDef {
	m := map[string]toolDef{}
	for _, t := range hostileTools() {
		m[t.name] = t
	}
	return m
}()

// hostileDefs returns the raw hostile tool objects with -hostile, else none.
func (s *server) hostileDefs() [][]byte {
	if !s.cfg.hostile {
		return nil
	}
	var items [][]byte
	for _, t := range hostileTools() {
		items = append(items, []byte(t.def))
	}
	return items
}

// hostileTool finds a hostile tool by name, with -hostile.
func (s *server) hostileTool(name string) toolFunc {
	if t, ok := hostiles[name]; ok && s.cfg.hostile {
		return t.run
	}
	return nil
}

func toolPid(_ *server, _ *toolCall) ([]byte, *rpcError) {
	return textResult(strconv.Itoa(os.Getpid()), false), nil
}

// toolCloseOut closes the server's stdout; every later write is dropped.
// The read loop goes on, so the server exits 0 when its stdin ends.
func toolCloseOut(s *server, _ *toolCall) ([]byte, *rpcError) {
	s.out.mu.Lock()
	if c, ok := s.out.w.(io.Closer); ok {
		c.Close()
	}
	s.out.w = io.Discard
	s.out.mu.Unlock()
	s.logf("closed stdout")
	return nil, errNoReply
}

func toolFlood(s *server, c *toolCall) ([]byte, *rpcError) {
	deadline := time.NewTimer(time.Duration(c.num("ms", 1000)) * time.Millisecond)
	defer deadline.Stop()
	token, hasToken := c.meta["progressToken"]
	hasToken = hasToken && len(token) > 0 && string(token) != "null"
	var sent int64
	for {
		select {
		case <-c.ctx.Done():
			s.logf("flood cancelled after %d notifications", sent)
			return nil, errNoReply
		case <-deadline.C:
			s.logf("flood sent %d notifications", sent)
			return textResult("done", false), nil
		default:
		}
		sent++
		// A line of about 100 bytes.
		p := fmt.Appendf(nil, `{"level":"info","data":"flood %09d"}`, sent)
		s.out.writeLine(notificationLine("notifications/message", p))
		if hasToken {
			p = append([]byte(`{"progressToken":`), token...)
			p = fmt.Appendf(p, `,"progress":%d}`, sent)
			s.out.writeLine(notificationLine("notifications/progress", p))
		}
	}
}

func toolSampleMany(s *server, c *toolCall) ([]byte, *rpcError) {
	n := int(c.num("n", 300))
	type pending struct {
		id string
		ch chan *message
	}
	reqs := make([]pending, 0, n)
	params := samplingParams(s, false)
	for i := 0; i < n; i++ {
		id, ch := s.sendRequest("sampling/createMessage", params)
		reqs = append(reqs, pending{id, ch})
	}
	// await (client.go) cancels each request still pending once the call is
	// cancelled; the others return at once.
	got, failed := 0, 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := s.await(c.ctx, r.id, r.ch)
			if m == nil {
				return
			}
			mu.Lock()
			got++
			if len(m.Error) > 0 && string(m.Error) != "null" {
				failed++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if c.ctx.Err() != nil {
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
	if failed > 0 {
		s.logf("samplemany: %d of %d answers were errors", failed, got)
	}
	return textResult(strconv.Itoa(got), false), nil
}

// slowPiece is the size of each write of slowline.
const slowPiece = 64 << 10

func toolSlowLine(s *server, c *toolCall) ([]byte, *rpcError) {
	n := c.num("bytes", 8<<20)
	if n < 0 {
		n = 0
	}
	pause := time.Duration(c.num("pause", 5)) * time.Millisecond
	line := append(resultLine(c.id, textResult(strings.Repeat("x", int(n)), false)), '\n')
	// The whole line under the writer's lock: nothing else of this server
	// may come between its pieces.
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	for len(line) > 0 {
		k := min(slowPiece, len(line))
		if _, err := s.out.w.Write(line[:k]); err != nil {
			s.logf("slowline: %v", err)
			break
		}
		line = line[k:]
		if len(line) > 0 && pause > 0 {
			time.Sleep(pause)
		}
	}
	return nil, errNoReply
}

// slowReader is stdin with -slow-read: every read takes at most
// slowPiece bytes and waits pause first, so that a large request is read
// at about slowPiece per pause (64 KiB a millisecond: 100 MiB in 1.6 s).
type slowReader struct {
	r     io.Reader
	pause time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	time.Sleep(r.pause)
	return r.r.Read(p[:min(len(p), slowPiece)])
}

// exitOnDiscover is called on the reader goroutine for server/discover
// with -exit-on-discover FILE: when FILE does not exist it creates it and
// exits 1 without answering; else the request is answered as any unknown
// method (-32601).
func (s *server) exitOnDiscover() {
	file := s.cfg.exitOnDiscover
	if file == "" {
		return
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		s.logf("server/discover: answered as a legacy server (%s exists)", file)
		return
	}
	if err != nil {
		s.logf("exit-on-discover: %v", err)
		os.Exit(2)
	}
	f.Close()
	s.logf("server/discover: exiting (created %s)", file)
	os.Exit(1)
}
