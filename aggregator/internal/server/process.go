package server

import (
	"errors"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// The server's process and connection: spawned once, watched until it
// ends, dropped for good when it fails, stopped at shutdown or by a
// reload.

// spawnOnce starts the process and its connection (spawn), once, unless
// settle said it never will.
func (s *Server) spawnOnce() { s.once.spawn.Do(s.spawn) }

// settle makes a server that was never spawned stay so (at shutdown, or
// when a reload retires it): it reports whether it was never spawned.
func (s *Server) settle() (never bool) {
	s.once.spawn.Do(func() {
		never = true
		close(s.gone)
		close(s.spawned)
	})
	return never
}

// spawn starts the process and its connection, once the process it
// replaces has stopped (what that held, a lock file or a port, is free).
func (s *Server) spawn() {
	defer close(s.spawned)
	ctx := s.set.Life.Context()
	if s.after != nil {
		select {
		case <-s.after:
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil { // the session is ending: nothing more starts
		close(s.gone)
		s.Drop(ErrShuttingDown)
		return
	}
	s.mu.Lock()
	s.startedAt = time.Now()
	s.mu.Unlock()
	proc, err := s.set.Start(s.cfg)
	if err != nil {
		close(s.gone)
		s.Drop(err)
		return
	}
	// A legacy server may exit on the server/discover probe: it is then
	// started again (once) and initialized.
	s.proc = stdio.NewRestartable(proc, func() (stdio.Started, error) { return s.set.Start(s.cfg) })
	s.conn = jsonrpc.NewConn(s.proc.Stdout(), s.proc.Stdin(), jsonrpc.Options{
		// Writes to a server never block: one that stops reading its stdin
		// must not stall the client or the other servers.
		Queue:           true,
		MaxQueued:       s.set.MaxQueue,
		CheckDuplicates: true, // see checks.go
		Handle:          s.handle,
		Invalid:         s.invalid,
		MaxLineSize:     s.set.MaxMessageSize,
		Oversized:       s.oversized,
		Unmatched: func(m *jsonrpc.Message) {
			s.set.Log.Debugf("server %q: dropped the answer to id %s (cancelled or timed out)", s.key, m.ID)
		},
		Pace:      s.pace,
		Cancelled: s.set.Cancelled,
	})
	go func() {
		defer close(s.unread)
		s.conn.Run()
	}()
	go s.watch()
	s.set.Log.Debugf("server %q: started %s", s.key, s.cfg.Command)
}

// watch waits for the server to end, at any time, and drops it.
func (s *Server) watch() {
	defer close(s.gone)
	select {
	case <-s.proc.Done():
		// Let the reader take in what the server wrote before it exited.
		select {
		case <-s.conn.Done():
		case <-time.After(exitGrace):
		}
		err := s.proc.Err()
		if err == nil {
			err = s.Errorf("exited")
		}
		s.Drop(err)
	case <-s.conn.Done():
		// Its stdout ended: usually because it is exiting, and then its
		// exit status says more than the end of a pipe.
		select {
		case <-s.proc.Done():
			if err := s.proc.Err(); err != nil {
				s.Drop(err)
				break
			}
			s.Drop(s.Errorf("exited"))
		case <-time.After(exitGrace):
			s.Drop(s.Errorf("closed its stdout: %w", s.conn.Err()))
		}
		s.proc.Stop()
	}
}

// Drop ends the server for good because of err: it is marked failed, its
// connection closed and its process reaped, its waiters released, and the
// session told (Events.Dropped). At shutdown the server is only marked
// stopped: its connection stays open, so that answers it sends while it
// stops are still relayed.
func (s *Server) Drop(err error) {
	s.mu.Lock()
	if s.state == Failed || s.state == Stopped {
		s.mu.Unlock()
		return
	}
	if s.set.Life.Stopping() {
		s.state = Stopped
		s.failure = s.Errorf("was stopped: %w", ErrShuttingDown)
		close(s.ended)
		s.mu.Unlock()
		s.markInited()
		s.markReady()
		s.events.Dropped(ErrShuttingDown, false)
		return
	}
	was := s.state
	s.state, s.failure = Failed, err
	close(s.ended)
	s.mu.Unlock()

	s.set.Log.Errorf("server %q dropped: %v", s.key, err)
	if was == Starting {
		s.rememberFailure()
	}
	if s.conn != nil {
		s.conn.Close(err)
		// Reap it and whatever is left of its group; refused only once
		// shutdown has begun, which stops it too.
		s.set.Life.Go(func() { s.proc.Stop() })
	}
	s.markInited()
	s.markReady()
	s.events.Dropped(err, was == Running)
}

// Stop stops the server at shutdown, politely unless or until the
// shutdown is hurried, and waits until it is gone, its reader has
// delivered its last answers and its connection writes no more.
func (s *Server) Stop() {
	if s.settle() {
		s.Drop(ErrShuttingDown) // marks it stopped
		return
	}
	<-s.spawned
	if s.proc == nil {
		return
	}
	s.Drop(ErrShuttingDown) // marks it stopped: a shutdown is no failure
	s.stopProcess()
}

// Retire stops the server for a reload that removed or changed its entry
// (why): politely, as at shutdown (hurried if the shutdown is), but it is
// marked stopped at once with an error naming it and the reload, which
// its calls in flight get, and the session is told (Events.Dropped: its
// requests to the client are cancelled, its unfinished tasks fail). Its
// lists leave with no announcement of their own: the reload makes one
// for all.
func (s *Server) Retire(why string) {
	err := s.Errorf("was stopped: %s (config reloaded)", why)
	s.mu.Lock()
	live := s.state != Failed && s.state != Stopped
	if live {
		s.state, s.failure = Stopped, err
		close(s.ended)
	}
	s.mu.Unlock()
	if s.settle() { // never spawned: nothing to stop
		s.markInited()
		s.markReady()
		return
	}
	<-s.spawned
	if live {
		s.markInited()
		s.markReady()
		s.events.Dropped(err, false)
	}
	if s.conn == nil {
		return
	}
	s.conn.Close(err)
	s.stopProcess()
}

// stopProcess stops the server's process, politely unless or until the
// shutdown is hurried, and waits until it is gone, its reader has
// delivered its last answers and its connection writes no more.
func (s *Server) stopProcess() {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		s.proc.Stop()
	}()
	select {
	case <-stopped:
	case <-s.set.Life.Hurried():
		s.proc.Terminate()
		<-stopped
	}
	<-s.gone
	<-s.unread
	s.conn.WaitWrites(0) // the process is gone: a write still waiting fails
}

// handle receives each request and notification of the server, on its
// reader goroutine: a list_changed refreshes that list; the rest go to
// the session.
func (s *Server) handle(m *jsonrpc.Message) {
	if m.IsRequest() {
		s.lineCost = perRequest // a request to the client costs more (pace.go)
	} else if k := kindChanged(m.Method); k != nil {
		s.listChanged(k)
		return
	}
	s.events.Message(m)
}

// invalid handles a line of the server that is not a valid message; the
// warning quotes the line (printable.Clip), escapes and all.
func (s *Server) invalid(line []byte, m *jsonrpc.Message, err error) {
	var id []byte // null: a request with a null or malformed id still gets an answer
	switch {
	case errors.Is(err, jsonrpc.ErrDuplicateMember):
		s.set.Log.Warnf("server %q: refused a message in which %v (clients disagree on which copy counts): %s", s.key, err, printable.Clip(line))
		id = m.ID // the message is whole: its id was read
	case errors.Is(err, jsonrpc.ErrTooDeep):
		s.set.Log.Warnf("server %q: refused a message %v: %s", s.key, err, printable.Clip(line))
		id = m.ID // its id, if it has one, was read
	default:
		s.set.Log.Warnf("server %q: skipped a line that is not JSON-RPC (%v): %s", s.key, err, printable.Clip(line))
	}
	if m != nil && m.Method != "" && !jsonrpc.IsBrokenNotification(line, m) {
		s.conn.Write(errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error()))
	}
}

// errorLine is an error answer to id (the session has its own, for its
// many answers).
func errorLine(id []byte, code int, message string) []byte {
	e := jsonrpc.Error{Code: code, Message: message}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

// oversized drops the server for a line longer than MaxMessageSize: what
// it sends can no longer be trusted to be whole.
func (s *Server) oversized(head []byte, size int64) error {
	err := s.Errorf("sent a message of %d bytes, more than the limit of %d (--max-message-size)", size, s.set.MaxMessageSize)
	s.Drop(err)
	return err
}
