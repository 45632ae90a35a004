package main

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"sync"
)

// The state of one session: the server, its locks, its calls in flight.

// server is the state of one MCP session.
type server struct {
	cfg  *config
	out  *lineWriter
	logs *log.Logger

	listNoise sync.Once

	readGate sync.Mutex // held by the "deaf" tool: stdin is not read meanwhile

	mu             sync.Mutex      // guards initialized to subs
	initialized    bool            // notifications/initialized arrived
	initParams     json.RawMessage // the client's initialize params, raw
	inflight       map[string]*call
	pending        map[string]chan *message // our requests to the client, by id
	nextID         int64                    // next id of our requests to the client
	added          []string                 // tools added by the "change" tool
	addedPrompts   []string                 // prompts added by it
	addedResources []string                 // resources added by it
	subs           map[string]bool          // subscribed resource URIs

	tasks taskTable // with -tasks
}

// call is one client request being served; cancel is fired by notifications/cancelled.
type call struct {
	cancel context.CancelFunc
}

// newServer returns a session that writes protocol lines to stdout and
// logs to stderr.
func newServer(cfg *config, stdout, stderr io.Writer) *server {
	return &server{
		cfg:      cfg,
		out:      &lineWriter{w: stdout},
		logs:     log.New(stderr, "", 0),
		inflight: map[string]*call{},
		pending:  map[string]chan *message{},
		subs:     map[string]bool{},
	}
}

// logf logs one line to stderr: stdout carries protocol lines only.
func (s *server) logf(format string, args ...any) {
	s.logs.Printf(format, args...)
}
