package aggregator

import (
	"encoding/json"
	"errors"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is how a request the aggregator relays is sent and taken back.
// Every request goes out through a jsonrpc.Lane (GoParts, or Call for the
// aggregator's own), and every cancel of one through jsonrpc.Lane.Cancel:
// withdrawn while it waits in the queue, else forgotten and the peer told
// by tellCancelled, on the request's own lane. inflight.Request settles the
// race between a relayed request's sending and its cancel.

// tellCancelled is every connection's Options.Cancelled: the peer hears,
// on the request's own lane (never before the request), that a request it
// may have received is cancelled. initialize and the server/discover
// probe, ended by the start-up's own timeouts or a restart, are not: a
// legacy server knows of no request before initialize.
func tellCancelled(via *jsonrpc.Lane, id json.RawMessage, cause error) {
	if server.IsStartCancel(cause) {
		return
	}
	sendCancelled(via, id, cause)
}

// cancelReason is the cause of a request cancelled by a peer's
// notifications/cancelled; reason is the raw "reason" member, if any.
type cancelReason struct{ reason []byte }

func (*cancelReason) Error() string { return "cancelled by the peer" }

// cancelParams reads the params of notifications/cancelled.
func cancelParams(params []byte) (id, reason []byte, ok bool) {
	id, ok = jsonrpc.Member(params, "requestId")
	reason, _ = jsonrpc.Member(params, "reason")
	return id, reason, ok
}

// notifier sends notifications: a jsonrpc.Conn, or one lane into one.
type notifier interface {
	Notify(method string, params []byte) error
}

// sendCancelled tells conn's peer that the request id is cancelled.
func sendCancelled(conn notifier, id []byte, cause error) {
	if conn == nil || conn == (*jsonrpc.Conn)(nil) || conn == (*jsonrpc.Lane)(nil) { // no client (Check)
		return
	}
	b := append([]byte(`{"requestId":`), id...)
	var cr *cancelReason
	if errors.As(cause, &cr) {
		if cr.reason != nil {
			b = append(append(b, `,"reason":`...), cr.reason...)
		}
	} else if cause != nil {
		b = jsonrpc.AppendString(append(b, `,"reason":`...), cause.Error())
	}
	conn.Notify("notifications/cancelled", append(b, '}'))
}
