package aggregator

import (
	"fmt"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/output"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// What a server sends takes one route, which this file reads top to
// bottom, as route.go does a client's request:
//
//  1. admit: the server's reader (package server) hands the session each
//     request and notification but a list's change (Message), and after
//     each line waits while what the server sent the client waits to be
//     written (Pace); until the client is initialized they wait at the
//     gate (gate.go), within a bound;
//  2. a request goes to the client as the client's era has it
//     (relayToClient, adapter.go): a legacy client gets it under a fresh id
//     (requestClient), after the checks of what the client declared, with
//     its progress token renamed; a modern client gets it in the
//     input_required answer of the call it belongs to (input_modern.go);
//  3. the client's answer comes back on the client's reader (Answered)
//     and goes to the server under the server's own id; a cancel by either
//     side, the server's end or the client's silence ends it (cancel,
//     expire);
//  4. a notification is handled by its entry in childNotifications
//     (progress, cancelled, a task's status, what only a URI's or an
//     elicitation's owner may say) or goes up as the client's era has it
//     (notifyClient, adapter.go), on the server's lane into the client's queue, so
//     that the server's pace is the client's.

// Pace holds the server's reader while more than output.LaneRoom bytes of what it
// sent the client wait to be written: the client's pace is the server's.
func (c *child) Pace(done <-chan struct{}) {
	if c.up != nil {
		c.up.WaitRoom(output.LaneRoom, done)
	}
}

// Message receives each request and notification of the server but its
// lists' changes (server.Events), on its reader goroutine. Until the
// client is initialized, they wait at the gate, within a bound.
func (c *child) Message(m *jsonrpc.Message) {
	if c.host.client.conn != nil {
		switch c.host.client.gate.hold(c, m) {
		case gateHeld:
			return
		case gateRefused:
			if m.IsRequest() {
				c.Conn().Write(errorLine(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf(
					"mcp-simple-aggregator: the client is not initialized yet and more than %d bytes of this server's messages are waiting for it", heldLimit)))
			}
			return
		}
	}
	c.dispatch(m)
}

// dispatch handles a child's request or notification.
func (c *child) dispatch(m *jsonrpc.Message) {
	if m.IsRequest() {
		c.relayToClient(m)
		return
	}
	if do, ok := childNotifications[m.Method]; ok {
		do(c, m.Params)
		return
	}
	c.notifyClient(m)
}

// cancelled is the child's notifications/cancelled of one of its requests
// to the client.
func (c *child) cancelled(params []byte) {
	id, reason, ok := cancelParams(params)
	if !ok {
		return
	}
	if r, ok := c.incoming.Take(jsonrpc.Key(id)); ok {
		r.cancel(&cancelReason{reason: reason})
	}
}

// progressed passes a child's progress up, untouched, when its token is
// that of a call in flight to this child; progress with any other token
// (another child's call's, or none) is dropped.
func (c *child) progressed(params []byte) {
	token, ok := jsonrpc.Member(params, "progressToken")
	var call *call
	if ok {
		call, ok = c.progress.Get(jsonrpc.Key(token))
	}
	if !ok {
		c.host.log.Debugf("server %q: progress for token %s, which is none of its calls', dropped", c.key, token)
		return
	}
	if call.progressAs != nil { // a retry's: under the retry's token
		if p, err := jsonrpc.ReplaceMember(params, "progressToken", call.progressAs); err == nil {
			params = p
		}
	}
	c.up.Notify("notifications/progress", c.host.relay.tiesToClient(c, params))
}

// maxClientRequests bounds the requests of one child that wait for the
// client's answers: past it, the child's next request is refused.
const maxClientRequests = 1024

// requestClient sends a child's request to a legacy client under a fresh id;
// the client's answer goes back under the child's id from the client's
// reader. It runs on the child's reader goroutine, so it registers the
// request before a cancel right behind it can be read; writes to the
// child are queued, so a child that is not reading cannot block its own
// reader.
func (c *child) requestClient(m *jsonrpc.Message) {
	up := c.host.client.conn
	spec, known := childRequests[m.Method]
	need := spec.need
	switch {
	case !known:
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method))
		return
	case up == nil || !c.host.client.settled().caps.Declared(need):
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %s (the client did not declare the %s capability)", m.Method, need)))
		return
	}
	if bad := undeclaredPart(c.host.client.settled().caps.Raw(), m); bad != nil {
		c.Conn().Write(bad)
		return
	}
	if c.incoming.Len() >= maxClientRequests { // only this reader adds to it
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf(
			"mcp-simple-aggregator: %d requests of this server already wait for the client's answers", maxClientRequests)))
		return
	}
	r := &childRequest{c: c, id: m.ID, key: jsonrpc.Key(m.ID), method: m.Method}
	params := m.Params
	switch m.Method {
	case "tasks/get", "tasks/result", "tasks/cancel":
		var bad []byte
		if params, r.task, bad = c.childTaskRequest(m); bad != nil {
			c.Conn().Write(bad)
			return
		}
	default:
		_, r.augmented = jsonrpc.Member(params, "task")
	}
	if m.Method == "elicitation/create" {
		c.noteElicitation(params) // before the client can see it
	}
	params, token := c.host.relay.remapProgressToken(c, c.host.relay.tiesToClient(c, params))
	r.token = token // before r is in the table, where drop may take it
	r.timer = time.AfterFunc(c.host.settings.clientRequestTimeout, r.expire)
	if !c.incoming.Add(r.key, r) {
		r.forgetToken()
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: id "+string(m.ID)+" is already used by a request in flight"))
		return
	}
	if c.dropped() && c.incoming.Remove(r.key, r) { // dropped meanwhile, after its table was emptied
		r.forgetToken()
		return
	}
	id, cancelled, err := r.Send(c.up, m.Method, r, params)
	if err != nil {
		r.Answered(nil, err)
		return
	}
	if cancelled != nil {
		c.up.Cancel(id, cancelled)
	}
}

// undeclaredPart is the error for a server's request m that asks the
// client, whose capabilities are caps (raw), for a mode it did not declare
// (capabilities.Undeclared: URL-mode elicitation of a client that
// declared form only, sampling with tools of one without sampling.tools),
// as the client would refuse it; nil when caps declare what m needs.
func undeclaredPart(caps []byte, m *jsonrpc.Message) []byte {
	part := capabilities.Undeclared(caps, m.Method, m.Params)
	if part == "" {
		return nil
	}
	return errorLine(m.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("Invalid params: %s asks for %s, which the client did not declare", m.Method, part))
}

// Answered is the client's answer, which goes to the child under its id.
func (r *childRequest) Answered(resp *jsonrpc.Message, err error) {
	if !r.c.incoming.Remove(r.key, r) {
		return // the child cancelled it, or is gone
	}
	r.forgetToken()
	if err != nil {
		r.c.Conn().Write(errorLine(r.id, jsonrpc.CodeInternalError, "the client did not answer: "+err.Error()))
		return
	}
	if resp.Error != nil {
		if r.task != nil && taskGone(r.method, resp.Error) {
			r.c.host.relay.forgetClientTask(r.task) // the client no longer knows it
		}
		r.c.Conn().Write(jsonrpc.AppendAnswer(nil, r.id, resp))
		return
	}
	result := resp.Result
	if r.involvesTask(result) { // the task tables take part only where a task does
		result = r.clientAnswer(result)
	}
	r.c.Conn().Write(jsonrpc.AppendResult(nil, r.id, result))
}

// involvesTask reports whether the client's answer result to the request
// may speak of a task (client_tasks.go: clientAnswer): a tasks/list, the
// answer to a request the server augmented with a task, or one tied to a
// task.
func (r *childRequest) involvesTask(result []byte) bool {
	return r.method == "tasks/list" || r.augmented || eras.TiedToTask(result)
}

// cancel ends the request, taken out of the child's table, because the
// child cancelled it or is gone: the client is told, under its own id.
func (r *childRequest) cancel(cause error) {
	r.forgetToken()
	if via, id := r.Request.Cancel(cause); id != nil {
		via.Cancel(id, cause)
	}
}

// expire ends the request that the client has not answered in time: the
// child gets an error, the client a cancel.
func (r *childRequest) expire() {
	if !r.c.incoming.Remove(r.key, r) {
		return
	}
	err := fmt.Errorf("the client did not answer within %v", r.c.host.settings.clientRequestTimeout)
	r.cancel(err)
	r.c.Conn().Write(errorLine(r.id, jsonrpc.CodeInternalError, "mcp-simple-aggregator: "+err.Error()))
}

// forgetToken forgets the progress token handed to the client and stops
// the timer: the request has ended.
func (r *childRequest) forgetToken() {
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.token != "" {
		r.c.host.relay.forgetProgress(r.token)
	}
}
