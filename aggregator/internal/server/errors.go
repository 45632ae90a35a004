package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// Error is an error about one server that names it: "server "KEY" did
// ...".
type Error struct {
	Key string
	Err error // what it did
}

func (e *Error) Error() string { return fmt.Sprintf("server %q %v", e.Key, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error naming the server: format says what it did.
func (s *Server) Errorf(format string, args ...any) error {
	return &Error{Key: s.key, Err: fmt.Errorf(format, args...)}
}

// Failed is why the server was dropped or stopped; nil while it is not.
func (s *Server) Failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failure
}

// Explain calls say with the error to give the client for a request the
// server could not answer (err: why the call ended). When the server's
// connection closed before the watcher said how the server ended, that is
// awaited first on a goroutine of its own (see watch: within the exit
// grace), so that no reader ever waits for a server's end.
func (s *Server) Explain(err error, say func(error)) {
	if errors.Is(err, jsonrpc.ErrClosed) && s.Failed() == nil && s.set.Life.Go(func() { say(s.lostAtEnd(err)) }) {
		return
	}
	say(s.lost(err))
}

// lostAtEnd is lost once the watcher has said how the server ended, when
// err says that its connection closed. It may wait: never on a reader.
func (s *Server) lostAtEnd(err error) error {
	if errors.Is(err, jsonrpc.ErrClosed) {
		<-s.ended
	}
	return s.lost(err)
}

// lost is the error to give the client for a call that the server could
// not answer: how the server ended, once it has, else err naming it.
func (s *Server) lost(err error) error {
	if failure := s.Failed(); failure != nil {
		return ToldClient(failure)
	}
	if errors.Is(err, jsonrpc.ErrQueueFull) {
		return s.Errorf("is not reading its input: %w", err)
	}
	var named *Error
	if errors.As(err, &named) && named.Key == s.key {
		return err
	}
	return s.Errorf("failed: %w", err)
}

// What a server wrote on its stderr, and the values of its config entry's
// env and variables, are kept from the model: stderr goes to the log only
// (as a client that runs the server directly shows it in its log), and the
// aggregator's own log lines show names in place of those values.

// ToldClient is err as the client (and so the model) is told it: what
// happened, without the lines the server last wrote on its stderr (a
// rejected token, a database URL with its password), which the log has.
// errors.Is and errors.As see err.
func ToldClient(err error) error {
	var ee *stdio.ExitError
	if err == nil || !errors.As(err, &ee) || len(ee.StderrTail) == 0 {
		return err
	}
	brief := *ee
	brief.StderrTail = nil
	return &toldError{msg: strings.Replace(err.Error(), ee.Error(), brief.Error(), 1), err: err}
}

// toldError is an error told in other words than its own.
type toldError struct {
	msg string
	err error
}

func (e *toldError) Error() string { return e.msg }
func (e *toldError) Unwrap() error { return e.err }
