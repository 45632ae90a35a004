package aggregator

import (
	"fmt"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is where every message the client sends enters the session: a
// request (route.go takes it from here), a batch, a notification (by the
// table of methods.go), a cancel, a line that is not JSON-RPC, one that is
// too long.

// clientMessage receives each request and notification of the client, on
// the reader goroutine.
func (a *Aggregator) clientMessage(m *jsonrpc.Message) {
	if m.IsNotification() {
		a.clientNotification(m)
		return
	}
	a.clientRequest(m)
}

// clientInvalid answers a line of the client that is not a valid message.
func (a *Aggregator) clientInvalid(line []byte, m *jsonrpc.Message, err error) {
	if reply := a.invalidReply(line, m, err); reply != nil {
		a.client.conn.Write(reply)
	}
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

// clientNotification handles a notification of the client.
func (a *Aggregator) clientNotification(m *jsonrpc.Message) {
	if do, ok := clientNotifications[m.Method]; ok {
		do(a, m.Params)
		return
	}
	a.log.Debugf("client notification %s not relayed", m.Method)
}

// clientCancelled cancels the client request that notifications/cancelled
// names; an unknown id is ignored.
func (a *Aggregator) clientCancelled(params []byte) {
	id, reason, ok := cancelParams(params)
	if !ok {
		return
	}
	if c, ok := a.client.inflight.get(jsonrpc.Key(id)); ok {
		c.cancel(&cancelReason{reason: reason})
	}
}

// rootsChanged passes the client's roots/list_changed to every legacy
// child.
func (a *Aggregator) rootsChanged(params []byte) {
	for _, c := range a.children() {
		if c.initialized() {
			c.era().rootsChanged(c, params)
		}
	}
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
