package aggregator

import (
	"bytes"

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
// answer comes back to Answered on the child's reader goroutine.
func (a *Aggregator) forward(c *call, t target) {
	params := t.parts[:]
	c.child = t.child
	if t.child.up != nil {
		c.via.Store(t.child.up)
	}
	if modern := t.child.modern.Load(); modern != c.modern {
		params = a.acrossEras(c, t.child, params)
		if c.modern && takesInput(c.method) {
			if state, ok := jsonrpc.String(c.p.state); ok && isInputToken(state) {
				if bad := a.resume(c, state, t.child); bad != nil {
					c.answer(bad)
				}
				return
			}
			a.beginExchange(c)
		}
	}
	if c.p.progressTo != nil && !t.child.progress.add(tokenKey(c.p.progressTo), c) {
		// The client reused the token of a call still in flight to this
		// child: that call's entry lets the progress up, and only it may
		// remove the entry.
		c.p.progressTo = nil
	}
	via := t.child.conn.Lane()
	id, cancelled, err := c.send(via, c.method, c, params...)
	if err != nil {
		c.Answered(nil, err)
		return
	}
	if cancelled != nil {
		c.takeBack(via, id, cancelled)
	}
}

// acrossEras adapts a request for a child of the other era: a modern child
// gets a legacy client's capabilities, clientInfo and log level in _meta; a
// legacy child is set to the log level a modern request asks for.
func (a *Aggregator) acrossEras(c *call, ch *child, params [][]byte) [][]byte {
	if !c.modern {
		c.childParams = withMeta(bytes.Join(params, nil), a.childMeta())
		return [][]byte{c.childParams}
	}
	if c.logLevel != "" {
		ch.logLevelFor(c.logLevel)
	}
	return params
}

// Answered is the child's answer (or the error that ended the child's
// connection), on the goroutine that received it. The answer to an
// exchange goes to the call waiting for it, if any (input_modern.go).
func (c *call) Answered(resp *jsonrpc.Message, err error) {
	if resp != nil && resp.Duplicate != "" {
		resp, err = nil, c.child.duplicateAnswer(resp.Duplicate)
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
// if it has one; an answer input_required for a legacy client starts the
// rounds of input (input_legacy.go). A child that is gone is named in the
// error.
func (c *call) deliver(resp *jsonrpc.Message, err error) {
	if err != nil {
		c.child.explain(err, func(err error) {
			c.answer(errorLine(c.id, jsonrpc.CodeInternalError, err.Error()))
		})
		return
	}
	if modern := c.child.modern.Load(); c.modern && !modern {
		resp = c.upgrade(resp)
	} else if modern && !c.modern && resp.Error == nil {
		if isInputRequired(resp.Result) {
			c.fulfil(resp)
			return
		}
		down := *resp
		down.Result = legacyResult(resp.Result)
		resp = &down
	}
	if resp.Error == nil {
		// Its task ties, if any, are its own tasks' (under the ids the
		// client knows), or taken out.
		if tied := c.a.relatedToClient(c.child, resp.Result); !sameSlice(tied, resp.Result) {
			own := *resp
			own.Result = tied
			resp = &own
		}
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

// upgrade turns a legacy child's answer into one for a modern client: a
// result gets its resultType (and a read its caching hint); the legacy
// "resource not found" becomes the modern era's -32602.
func (c *call) upgrade(resp *jsonrpc.Message) *jsonrpc.Message {
	up := *resp
	if resp.Error != nil {
		if code, _ := jsonrpc.Member(resp.Error, "code"); string(code) == "-32002" {
			if e, err := jsonrpc.ReplaceMember(resp.Error, "code", []byte("-32602")); err == nil {
				up.Error = e
			}
		}
		return &up
	}
	up.Result = withResultType(resp.Result, c.method == "resources/read")
	return &up
}

// sameSlice reports whether a and b are the same bytes in memory (not a
// copy).
func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
