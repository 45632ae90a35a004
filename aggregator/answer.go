package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/shape"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is how a call sent to a server ends: its answer arrives on the
// server's reader (Answered), is adapted to the client's era (toClientEra,
// adapter.go) and delivered under the client's id (deliver); or the client
// cancels it and the call is taken back (cancel, takeBack).

// Answered is the child's answer (or the error that ended the child's
// connection), on the goroutine that received it. An answer with a member
// twice, or one a client could not read (package shape), becomes an error
// naming the child. The answer to an
// exchange goes to the call waiting for it, if any (input_modern.go).
func (c *call) Answered(resp *jsonrpc.Message, err error) {
	if resp != nil && resp.Duplicate != "" {
		resp, err = nil, c.child.DuplicateAnswer(resp.Duplicate)
	} else if resp != nil {
		if problem := shape.Answer(resp); problem != "" {
			resp, err = nil, c.child.MalformedAnswer(problem)
		}
	}
	if x := c.exchange; x != nil {
		if w := x.finish(resp, err); w != nil {
			w.deliver(resp, err)
		}
		return
	}
	c.deliver(resp, err)
}

// deliver sends the child's answer to the client under the client's id,
// adapted to the client's era and through the method's modifyResponse hook
// if it has one. A child that is gone is named in the error.
func (c *call) deliver(resp *jsonrpc.Message, err error) {
	if err != nil {
		c.child.Explain(err, func(err error) {
			c.answer(errorLine(c.id, jsonrpc.CodeInternalError, err.Error()))
		})
		return
	}
	resp, ok := c.toClientEra(resp)
	if !ok {
		return
	}
	if resp.Error != nil {
		c.child.noteRequiredElicitations(resp.Error)
	} else {
		// Its task ties, if any, are its own tasks' (under the ids the
		// client knows), or taken out.
		if tied := c.a.relay.tiesToClient(c.child, resp.Result); !sameSlice(tied, resp.Result) {
			own := *resp
			own.Result = tied
			resp = &own
		}
	}
	modify := c.spec.modifyResponse
	if c.p.augmented && c.spec.taskCreated != nil {
		modify = c.spec.taskCreated
	}
	if modify != nil {
		if line := modify(c, resp); line != nil {
			c.answer(line)
			if c.task != nil { // statuses the child sent before this answer
				c.child.releaseStatuses(c.task)
			}
			return
		}
	}
	if resp.Error == nil && len(resp.Result) >= largeResult {
		c.answerLarge(resp.Result)
		return
	}
	c.answer(jsonrpc.AppendAnswer(nil, c.id, resp))
}

// cancel is the client's notifications/cancelled for this call. A call
// served here stops; a call sent to a child is forgotten and the child is
// told, under its own id; a call being sent is cancelled as soon as it is.
func (c *call) cancel(cause error) {
	// Recorded first: a call served here that stops on it must find
	// itself cancelled, and so answer nothing.
	via, id := c.Request.Cancel(cause)
	c.localMu.Lock()
	stop := c.stopLocal
	c.localMu.Unlock()
	if stop != nil {
		stop(cause)
	}
	if id != nil {
		c.takeBack(via, id, cause)
	}
}

// takeBack takes back the call sent to the child through via under id
// (jsonrpc.Lane.Cancel): when the answer has not come yet, the call ends
// without one. A call waiting for an exchange ends with it.
func (c *call) takeBack(via *jsonrpc.Lane, id []byte, cause error) {
	if c.exchange != nil {
		c.exchange.cancel(c, via, id, cause)
		return
	}
	if via.Cancel(id, cause) && c.settle() {
		c.write(nil)
	}
}
