package aggregator

import (
	"errors"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// target is where a route sends a request: the child, and the params it
// gets as parts to join (the client's params with the child's own name
// spliced in, say), so that they are copied once, straight into the line.
type target struct {
	child *child
	parts [3][]byte
}

// to returns a target sending params to c unchanged.
func to(c *child, params []byte) target {
	return target{child: c, parts: [3][]byte{params}}
}

// forward sends the call to its target under a fresh id of the child's
// connection: the one path every client request to a child takes. The
// method's rewrite hook may change the params first. The answer comes back
// to Answered on the child's reader goroutine.
func (a *Aggregator) forward(c *call, t target) {
	params := t.parts[:]
	if rewrite := c.spec.rewrite; rewrite != nil {
		var bad []byte
		if params, bad = rewrite(c, t); bad != nil {
			c.answer(bad)
			return
		}
	}
	c.child = t.child
	if c.p.progressTo != nil && !t.child.progress.add(tokenKey(c.p.progressTo), c) {
		// The client reused the token of a call still in flight to this
		// child: that call's entry lets the progress up, and only it may
		// remove the entry.
		c.p.progressTo = nil
	}
	id, err := t.child.conn.GoParts(c.method, c, params...)
	if err != nil {
		// A full queue is answered at once. A closed connection: saying
		// why may wait for the child's end (child.lost), which must not
		// hold up the client's reader.
		if errors.Is(err, jsonrpc.ErrQueueFull) || !a.goServe(func() { c.Answered(nil, err) }) {
			c.Answered(nil, err)
		}
		return
	}
	if cancelled := c.sent(id); cancelled != nil {
		c.cancelAtChild(id, cancelled)
	}
}

// Answered is the child's answer (or the error that ended the child's
// connection), on the goroutine that received it: it goes to the client
// under the client's id, through the method's modifyResponse hook if it
// has one. A child that is gone is named in the error.
func (c *call) Answered(resp *jsonrpc.Message, err error) {
	if err != nil {
		c.answer(errorLine(c.id, jsonrpc.CodeInternalError, c.child.lost(err).Error()))
		return
	}
	if modify := c.spec.modifyResponse; modify != nil {
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
	c.answer(responseLine(c.id, resp))
}
