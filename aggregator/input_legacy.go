package aggregator

import (
	"context"
	"fmt"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A legacy client over a modern child: the child answers a call
// input_required, but a legacy client knows only requests from servers.
// Each of the child's inputRequests becomes a real request to the client
// (under a fresh id, as a legacy child's requests are relayed); the call
// is sent to the child again with the client's answers as inputResponses
// and the child's requestState, round after round, and the client gets
// the child's final answer under its own id.

// maxInputRounds bounds the rounds of one call, against a child that
// never stops asking.
const maxInputRounds = 64

// fulfil runs the rounds of a call the child answered input_required, on
// a goroutine of its own that the client's cancel stops.
func (c *call) fulfil(resp *jsonrpc.Message) {
	ctx, release := c.local(c.a.life.Context())
	if c.IsCancelled() { // before local: nothing would stop the rounds
		release()
		c.answer(nil)
		return
	}
	served := c.a.life.Go(func() {
		defer release()
		c.rounds(ctx, resp)
	})
	if !served {
		release()
		c.answer(nil)
	}
}

func (c *call) rounds(ctx context.Context, resp *jsonrpc.Message) {
	for round := 1; ; round++ {
		if round > maxInputRounds {
			c.answer(errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("server %q asked for input more than %d times in one call", c.child.key, maxInputRounds)))
			return
		}
		responses, bad := c.askClient(ctx, resp.Result)
		if bad != nil || ctx.Err() != nil {
			c.answer(bad) // nil: cancelled, or shutting down
			return
		}
		params, err := jsonrpc.ReplaceMember(c.childParams, "inputResponses", responses)
		if state, ok := jsonrpc.Member(resp.Result, "requestState"); ok && err == nil {
			params, err = jsonrpc.ReplaceMember(params, "requestState", state)
		}
		if err != nil {
			c.answer(errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("server %q: retrying the call with the client's input: %v", c.child.key, err)))
			return
		}
		next, err := c.child.Conn().Call(ctx, c.method, params)
		if err == nil && next.Duplicate != "" {
			next, err = nil, c.child.DuplicateAnswer(next.Duplicate) // see package server, checks.go
		}
		if err != nil {
			if ctx.Err() != nil {
				c.answer(nil)
				return
			}
			c.deliver(nil, err)
			return
		}
		if next.Error != nil || !eras.IsInputRequired(next.Result) {
			c.deliver(next, nil)
			return
		}
		resp = next
	}
}

// askClient sends each of a result's inputRequests to the client, one
// after the other, and returns their answers as inputResponses; or the
// error to answer the call with (nil and nothing when ctx ended).
func (c *call) askClient(ctx context.Context, result []byte) ([]byte, []byte) {
	requests, _ := jsonrpc.Member(result, "inputRequests")
	asks, err := jsonrpc.Members(requests)
	if err != nil && requests != nil {
		return nil, errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("server %q answered input_required with inputRequests that are not an object", c.child.key))
	}
	caps := c.a.client.settled().caps
	responses := []byte{'{'}
	for i, q := range asks {
		method, _ := jsonrpc.StringMember(q.Value, "method")
		params, _ := jsonrpc.Member(q.Value, "params")
		need, known := inputNeed(method)
		if !known || !caps.Declared(need) {
			return nil, errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("server %q asked for input with %q, which the client did not declare (capability %q)", c.child.key, method, need))
		}
		if part := capabilities.Undeclared(caps.Raw(), method, params); part != "" {
			return nil, errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("server %q asked for input with %q, which the client did not declare (capability %q)", c.child.key, method, part))
		}
		answer, err := c.a.askClient(ctx, method, c.a.relay.tiesToClient(c.child, params))
		if err != nil {
			return nil, nil
		}
		if answer.Error != nil {
			return nil, errorLine(c.id, jsonrpc.CodeInternalError, fmt.Sprintf("the client answered %s for server %q with an error: %s", method, c.child.key, answer.Error))
		}
		if i > 0 {
			responses = append(responses, ',')
		}
		responses = append(append(jsonrpc.AppendString(responses, q.Key), ':'), answer.Result...)
	}
	return append(responses, '}'), nil
}

// askClient sends a request to the client and waits for its answer; when
// ctx ends first (the call was cancelled, or shutdown), the request is
// taken back and the client told, as for a child's request relayed to it.
func (a *Aggregator) askClient(ctx context.Context, method string, params []byte) (*jsonrpc.Message, error) {
	return a.client.conn.Call(ctx, method, params)
}
