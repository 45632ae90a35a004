package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
)

// The message loop: one reader of stdin that routes each line to a
// request (served in its own goroutine), a notification or an answer to
// one of our requests (client.go).

// serve reads stdin line by line until its end and returns the exit
// status: 0 at the end of stdin, 1 when reading it fails.
func (s *server) serve(in io.Reader) int {
	if s.cfg.noise {
		s.out.writeLine([]byte(noiseLine))
	}
	for i := 0; i < s.cfg.stderrLines; i++ {
		s.logf("stderr line %d", i)
	}
	if s.cfg.slowRead > 0 {
		in = &slowReader{r: in, pause: s.cfg.slowRead}
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		s.readGate.Lock() // wait while "deaf"
		s.readGate.Unlock()
		line, err := r.ReadBytes('\n') // no line-length limit
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.handleLine(line)
		}
		if err != nil {
			if err != io.EOF {
				s.logf("read stdin: %v", err)
				return 1
			}
			return 0
		}
	}
}

// noiseLine is the non-JSON line written with -noise.
const noiseLine = "this is not json"

// handleLine routes one line read from stdin.
func (s *server) handleLine(line []byte) {
	if line[0] == '[' {
		s.logf("batch received: not supported")
		s.out.writeLine(errorLine(nil, &rpcError{code: -32600, message: "batches are not supported"}))
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		s.logf("parse error: %v", err)
		s.out.writeLine(errorLine(nil, &rpcError{code: -32700, message: "Parse error"}))
		return
	}
	switch {
	case m.Method != "" && m.hasID():
		s.startRequest(&m)
	case m.Method != "":
		s.handleNotification(&m)
	case m.hasID():
		s.handleResponse(&m)
	default:
		s.logf("invalid message: %s", truncate(line, 200))
	}
}

// startRequest registers the request (so that a notifications/cancelled read
// right after it finds it) and serves it in its own goroutine.
func (s *server) startRequest(m *message) {
	if m.Method == "initialize" && s.cfg.exitInit >= 0 {
		// On the reader goroutine, so that an end of stdin right behind
		// initialize cannot make the server exit 0 first.
		s.logf("fatal: bad init")
		os.Exit(s.cfg.exitInit)
	}
	if m.Method == "server/discover" {
		s.exitOnDiscover() // with -exit-on-discover (hostile.go)
	}
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(context.Background())
	c := &call{cancel: cancel}
	s.mu.Lock()
	initialized := s.initialized
	s.inflight[key] = c
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			if s.inflight[key] == c {
				delete(s.inflight, key)
			}
			s.mu.Unlock()
			cancel()
		}()
		result, rerr := s.handleRequest(ctx, m, initialized)
		switch {
		case rerr == errNoReply:
		case rerr != nil:
			s.out.writeLine(errorLine(m.ID, rerr))
		default:
			s.out.writeLine(resultLine(m.ID, result))
		}
	}()
}
