package aggregator

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the session's life: Serve reads the client until it goes,
// then shutdown stops the servers and answers what is still owed.

// Serve serves the client on in and out until in ends, a write to out
// fails (the client went away) or ctx is done. Children start when the
// client's requests need them (startup.go).
//
// At the end of in (the polite shutdown of the spec), the requests already
// read get up to answerGrace to be answered and every child is stopped
// politely: its stdin closed, signals only after a grace period. When out
// fails or ctx ends (a signal: the host will not wait long), children are
// terminated at once (stdin closed and SIGTERM together, SIGKILL shortly
// after), and a polite shutdown under way is hurried the same way when ctx
// ends during it. Serve then closes in if it is an io.Closer, which must
// end a Read in progress (io.Pipe, a net.Conn, a pollable file), and waits
// for its reader to stop; the reader of an in that is not a Closer cannot
// be stopped, and is not waited for. Every request still owed an answer
// gets one, and Serve returns once every other goroutine it started is
// gone. A clean end of input returns nil.
func (a *Aggregator) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	output := &clientOutput{w: out, broken: make(chan struct{})}
	var up *jsonrpc.Conn
	up = jsonrpc.NewConn(in, output, jsonrpc.Options{
		// What goes to the client waits in one queue in front of out,
		// which a goroutine of its own writes: no reader ever waits for
		// the client to read.
		Queue:       true,
		Handle:      a.clientMessage,
		Batch:       a.clientBatch,
		Invalid:     a.clientInvalid,
		Unmatched:   func(m *jsonrpc.Message) { a.log.Debugf("client answered unknown id %s", m.ID) },
		Cancelled:   tellCancelled,
		MaxLineSize: a.opts.MaxMessageSize,
		Oversized:   a.clientOversized,
		Pace:        func(bool) { up.WaitRoom(clientRoom, a.life.ctx.Done()) },
		Watch:       watchHooks("the client"),
		Written:     releaseLarge,
	})
	a.reloadMu.Lock()  // a reload spawns what it adds once serving is set
	a.client.conn = up // before any child starts: their readers use it
	for _, c := range a.children() {
		c.up = up.NewLane()
	}
	a.serving = true
	a.reloadMu.Unlock()
	readErr := make(chan error, 1)
	go func() { readErr <- up.Run() }()

	var err error
	select {
	case err = <-readErr:
		if errors.Is(err, io.EOF) {
			err = nil
			a.log.Debugf("client closed its input; shutting down")
		}
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-ctx.Done():
				a.log.Debugf("hurrying the shutdown: %v", context.Cause(ctx))
				a.life.hurryShutdown()
			case <-finished:
			}
		}()
		a.listens.endAll() // they would never be answered otherwise
		a.client.inflight.waitEmpty(a.opts.graces.forAnswers(), a.life.hurry)
		a.shutdown()

	case <-output.broken:
		a.log.Warnf("the client closed its output (%v); shutting down", output.err)
		a.life.hurryShutdown()
		a.stopReading(in, readErr)

	case <-ctx.Done():
		a.log.Debugf("shutting down: %v", context.Cause(ctx))
		a.life.hurryShutdown()
		a.stopReading(in, readErr)
	}
	a.flushClient()
	return err
}

// stopReading shuts down while the client's input is still open: it
// closes in if it can, so that its reader stops, and waits for that.
func (a *Aggregator) stopReading(in io.Reader, readErr <-chan error) {
	closer, ok := in.(io.Closer)
	if ok {
		closer.Close()
	}
	a.shutdown()
	if ok {
		<-readErr
	}
}

// shutdown ends the requests being served here, stops every child at once
// and waits for them; then every client request still owed an answer gets
// an error. Calls sent to children are not cancelled: a child that answers
// them while it stops (its stdin closed) is still heard, and the rest
// fail, naming the child, when it is gone.
func (a *Aggregator) shutdown() {
	a.life.end()
	a.reloadMu.Lock() // a reload under way ends (a.ctx), its servers stopped
	a.reloadMu.Unlock()
	var wg sync.WaitGroup
	for _, c := range a.children() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Stop()
		}()
	}
	wg.Wait()
	a.life.handlers.Wait()
	a.relay.stopForgetting()
	for _, x := range a.parked.takeAll() {
		x.stop()
	}
	for _, c := range a.client.inflight.takeAll() {
		c.write(errorLine(c.id, jsonrpc.CodeInternalError, errShuttingDown.Error()))
	}
}

// flushClient waits until everything queued for the client is written or
// its output has failed, for flushGrace at most: a client that reads
// nothing more does not hold up the end (the write that waits for it ends
// with the process).
func (a *Aggregator) flushClient() {
	if grace := a.opts.graces.forFlush(); !a.client.conn.WaitWrites(grace) {
		a.log.Warnf("the client did not read the rest of its output within %v; it is left unwritten", grace)
	}
}
