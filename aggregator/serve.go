package aggregator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/output"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the session's life with its client: Serve reads the client
// until it goes; every message the client sends enters the session here (a
// request, which route.go takes from here, a batch, a notification by the
// table of client_methods.go, a cancel, a line that is not JSON-RPC, one
// that is too long); then shutdown stops the servers and answers what is
// still owed.

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
	toClient := output.New(out)
	var up *jsonrpc.Conn
	up = jsonrpc.NewConn(in, toClient, jsonrpc.Options{
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
		Pace:        func(bool) { up.WaitRoom(output.ClientRoom, a.life.Context().Done()) },
		Written:     output.ReleaseLarge,
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
				a.life.Hurry()
			case <-finished:
			}
		}()
		a.listens.endAll() // they would never be answered otherwise
		a.client.calls.WaitEmpty(answerGrace, a.life.Hurried())
		a.shutdown()

	case <-toClient.Broken():
		a.log.Warnf("the client closed its output (%v); shutting down", toClient.Err())
		a.life.Hurry()
		a.stopReading(in, readErr)

	case <-ctx.Done():
		a.log.Debugf("shutting down: %v", context.Cause(ctx))
		a.life.Hurry()
		a.stopReading(in, readErr)
	}
	a.flushClient()
	return err
}

// clientMessage receives each request and notification of the client, on
// the reader goroutine.
func (a *Aggregator) clientMessage(m *jsonrpc.Message) {
	if m.IsNotification() {
		a.clientNotification(m)
		return
	}
	a.clientRequest(m)
}

// clientBatch serves a batch of the client. Each element takes the route a
// message on a line of its own takes: notifications and answers are
// handled at once, and requests become calls, all admitted before any is
// served, so that an id in use, in flight or earlier in the same batch,
// gets -32600 whatever the timing.
func (a *Aggregator) clientBatch(elems [][]byte) {
	if len(elems) == 0 {
		a.client.conn.Write(errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch"))
		return
	}
	b := &batch{a: a, ids: make(map[string]bool), replies: make([][]byte, len(elems)), owed: 1}
	var calls []*call
	for i, e := range elems {
		m, err := jsonrpc.Parse(e)
		switch {
		case err != nil:
			a.client.conn.Broken(m, err)
			if reply := a.invalidReply(e, m, err); reply != nil {
				b.owe()
				b.put(i, reply)
			}
		case m.IsResponse():
			a.client.conn.Deliver(m)
		case m.IsNotification():
			a.clientNotification(m)
		default:
			b.owe()
			if c := a.admit(m, b, i); c != nil {
				calls = append(calls, c)
			}
		}
	}
	for _, c := range calls {
		a.serve(c)
	}
	b.put(-1, nil) // every element is read
}

// clientNotification handles a notification of the client.
func (a *Aggregator) clientNotification(m *jsonrpc.Message) {
	if do, ok := clientNotifications[m.Method]; ok {
		do(a, m.Params)
		return
	}
	a.log.Debugf("client notification %s not relayed", m.Method)
}

// clientInitialized is the client's notifications/initialized: what the
// children sent until then goes up, then the list changes.
func (a *Aggregator) clientInitialized([]byte) {
	a.openGate()
	a.log.Debugf("client initialized")
}

// openGate lets what the children sent until now go to the client, then
// the list changes; from now on their messages pass.
func (a *Aggregator) openGate() {
	notes, dropped := a.client.gate.release(func(h heldMessage) { h.child.dispatch(h.m) })
	for c, n := range dropped {
		a.log.Warnf("server %q: %d notifications it sent before the client was initialized were dropped: more than %d bytes of its messages were waiting", c.key, n, heldLimit)
	}
	for _, method := range notes {
		a.notifyListChanged(method)
	}
}

// clientCancelled cancels the client request that notifications/cancelled
// names; an unknown id is ignored.
func (a *Aggregator) clientCancelled(params []byte) {
	id, reason, ok := cancelParams(params)
	if !ok {
		return
	}
	if c, ok := a.client.calls.Get(jsonrpc.Key(id)); ok {
		c.cancel(&cancelReason{reason: reason})
	}
}

// clientInvalid answers a line of the client that is not a valid message.
func (a *Aggregator) clientInvalid(line []byte, m *jsonrpc.Message, err error) {
	if reply := a.invalidReply(line, m, err); reply != nil {
		a.client.conn.Write(reply)
	}
}

// invalidReply logs a message of the client that is not valid (on a line
// of its own or in a batch) and returns its answer; nil for a broken
// answer (which the client's connection has taken: Conn.Broken) or a
// broken notification, which get none.
func (a *Aggregator) invalidReply(msg []byte, m *jsonrpc.Message, err error) []byte {
	a.log.Warnf("client sent a line that is not a valid JSON-RPC message (%v): %s", err, printable.Clip(msg))
	if m != nil && (m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil) || jsonrpc.IsBrokenNotification(msg, m)) {
		return nil
	}
	return invalidLine(m, err)
}

// clientOversized answers a client line longer than MaxMessageSize, which
// was not read, with -32600 under its id when its head shows one, and
// goes on reading.
func (a *Aggregator) clientOversized(head []byte, size int64) error {
	id, _ := jsonrpc.HeadID(head) // nil: null
	a.log.Warnf("client sent a message of %d bytes, more than the limit of %d (--max-message-size); discarded: %s", size, a.opts.MaxMessageSize, printable.Clip(head))
	a.client.conn.Write(errorLine(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"Invalid Request: a message of %d bytes, more than mcp-simple-aggregator's limit of %d bytes (--max-message-size)", size, a.opts.MaxMessageSize)))
	return nil
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
	a.life.End()
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
	a.life.Wait()
	a.relay.stopForgetting()
	for _, x := range a.parked.TakeAll() {
		x.stop()
	}
	for _, c := range a.client.calls.TakeAll() {
		c.write(errorLine(c.id, jsonrpc.CodeInternalError, errShuttingDown.Error()))
	}
}

// flushClient waits until everything queued for the client is written or
// its output has failed, for flushGrace at most: a client that reads
// nothing more does not hold up the end (the write that waits for it ends
// with the process).
func (a *Aggregator) flushClient() {
	if !a.client.conn.WaitWrites(flushGrace) {
		a.log.Warnf("the client did not read the rest of its output within %v; it is left unwritten", flushGrace)
	}
}
