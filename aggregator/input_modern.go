package aggregator

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A modern client over a legacy child: the child asks the client for input
// with requests of its own (elicitation/create, sampling/createMessage,
// roots/list) during a call, but a modern client takes no requests. The
// call is answered input_required instead, with the child's requests as
// inputRequests and a requestState of the aggregator's; the client's retry
// (another call, with inputResponses and that requestState) hands the
// answers to the child's waiting requests and waits for what the child
// does next: its final answer, or more requests, round after round.
//
// The requests a child may ask for input with, and the calls that may
// take input, are marked input in the method tables (client_methods.go,
// server_methods.go). A child's request is attributed to a call only when
// exactly one call that may take input (tools/call, prompts/get,
// resources/read) is in flight to that child; otherwise it is never
// guessed: the child gets an error saying why.

// beginExchange makes the call, about to be sent to a legacy child, an
// exchange, so that the child's requests during it reach the client.
func (a *Aggregator) beginExchange(c *call) {
	x := &exchange{parked: &a.parked, timeout: a.opts.InputTimeout, log: a.log, c: c.child, origin: c, method: c.method, waiter: c}
	c.exchange = x
	c.child.exchanges.add(x)
}

// inputRequest takes a legacy child's request while the client is modern.
func (c *child) inputRequest(m *jsonrpc.Message) {
	need, ok := inputNeed(m.Method)
	if !ok {
		if m.Method == "ping" {
			c.Conn().Write(jsonrpc.AppendResult(nil, m.ID, []byte("{}")))
			return
		}
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" (the client speaks "+eras.ModernVersion+", which has no requests from servers)"))
		return
	}
	x, n := c.exchanges.sole()
	if x == nil {
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeInternalError, fmt.Sprintf(
			"mcp-simple-aggregator: the client speaks %s, where a server asks for input only as part of a call; %d calls that may take input are in flight to this server, so %s cannot be given to exactly one of them", eras.ModernVersion, n, m.Method)))
		return
	}
	if !x.origin.declares(need) {
		c.Conn().Write(errorLine(m.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %s (the client did not declare the %s capability)", m.Method, need)))
		return
	}
	if bad := undeclaredPart(x.origin.declared(), m); bad != nil {
		c.Conn().Write(bad)
		return
	}
	x.ask(inputAsk{id: m.ID, method: m.Method, params: m.Params})
}

// declares reports whether the modern request declared a client
// capability in its _meta.
func (c *call) declares(capability string) bool {
	v, ok := jsonrpc.Member(c.declared(), capability)
	return ok && string(v) != "null"
}

// declared is the client capabilities the modern request declared in its
// _meta, raw.
func (c *call) declared() []byte {
	caps, _ := jsonrpc.Member(c.p.meta, eras.MetaClientCapabilities)
	return caps
}

// ask adds a child's request and, when a call of the client is waiting,
// answers it input_required.
func (x *exchange) ask(q inputAsk) {
	x.mu.Lock()
	if x.ended {
		x.mu.Unlock()
		x.c.Conn().Write(errorLine(q.id, jsonrpc.CodeInternalError, "mcp-simple-aggregator: the call this request belongs to has ended"))
		return
	}
	x.next++
	q.key = "input-" + strconv.Itoa(x.next)
	x.asks = append(x.asks, q)
	w := x.present()
	x.mu.Unlock()
	if w != nil {
		w.answer(w.line)
	}
}

// presented is a call answered input_required, with its answer line.
type presented struct {
	*call
	line []byte
}

// present parks the exchange: the waiting call is to be answered with the
// asks not answered yet and a fresh requestState; with x.mu held. It
// returns nil when no call waits or nothing is asked.
func (x *exchange) present() *presented {
	w := x.waiter
	if w == nil || len(x.asks) == 0 {
		return nil
	}
	x.waiter = nil
	x.token = newInputToken()
	x.parked.Add(x.token, x)
	token := x.token
	x.timer = time.AfterFunc(x.timeout, func() { x.expire(token) })
	b := []byte(`{"resultType":"input_required","inputRequests":{`)
	for i, q := range x.asks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(jsonrpc.AppendString(b, q.key), `:{"method":`...)
		b = jsonrpc.AppendString(b, q.method)
		if q.params != nil {
			b = append(append(b, `,"params":`...), q.params...)
		}
		b = append(b, '}')
	}
	b = jsonrpc.AppendString(append(b, `},"requestState":`...), x.token)
	return &presented{w, jsonrpc.AppendResult(nil, w.id, append(b, '}'))}
}

// inputTokenPrefix begins every requestState of the aggregator's.
const inputTokenPrefix = "mcp-simple-aggregator/input/"

func newInputToken() string {
	var b [16]byte
	rand.Read(b[:])
	return inputTokenPrefix + hex.EncodeToString(b[:])
}

// resume is the client's retry of a call answered input_required, with
// the aggregator's requestState: it takes the exchange (a token is good
// once), hands the answers to the child's requests, and waits for what
// the child does next. It returns the error to answer, if any.
func (a *Aggregator) resume(c *call, token string, ch *child) []byte {
	if x, ok := a.parked.Get(token); ok && (x.c != ch || x.method != c.method) {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: requestState belongs to another request")
	}
	x, ok := a.parked.Take(token)
	if !ok {
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: requestState is unknown, expired or already used")
	}
	x.mu.Lock()
	x.timer.Stop()
	if x.ended {
		x.mu.Unlock()
		return errorLine(c.id, jsonrpc.CodeInvalidParams, "Invalid params: requestState belongs to a call that has ended (its server is gone)")
	}
	x.token = ""
	c.child, c.exchange = x.c, x
	final := x.final
	if final == nil {
		// Before the child hears its answers: the progress it sends
		// right after them reaches c.
		x.waiter = c
		x.followProgress(c)
	}
	responses, _ := jsonrpc.Member(c.params, "inputResponses")
	x.asks = slices.DeleteFunc(x.asks, func(q inputAsk) bool { // the answered ones go to the child
		v, ok := jsonrpc.Member(responses, q.key)
		if ok {
			x.c.Conn().Write(jsonrpc.AppendResult(nil, q.id, v))
		}
		return ok
	})
	if final != nil {
		x.ended = true
		x.mu.Unlock()
		x.c.exchanges.remove(x)
		c.deliver(final, nil)
		return nil
	}
	w := x.present()
	x.mu.Unlock()
	if w != nil {
		w.answer(w.line)
		return nil
	}
	if via, id := x.origin.Request.ID(); id != nil {
		if cancelled := c.Sent(via, id); cancelled != nil {
			c.takeBack(via, id, cancelled)
		}
	}
	return nil
}

// finish is the child's answer to the exchange's call (or the error that
// ended its connection): it returns the call waiting for it, if any; while
// the exchange is parked, the answer waits for the client's retry.
func (x *exchange) finish(resp *jsonrpc.Message, err error) *call {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.waiter == nil && err == nil && !x.ended {
		x.final = resp
		return nil
	}
	x.ended = true
	x.c.exchanges.remove(x)
	w := x.waiter
	x.waiter = nil
	return w
}

// cancel is the client's cancel of c, the call waiting for the exchange:
// decided under x.mu, so that it cannot cross present or finish (which
// take the waiter there first). The child's call is cancelled at the child
// with it, and its requests waiting for input get an error.
func (x *exchange) cancel(c *call, via *jsonrpc.Lane, id []byte, cause error) {
	x.mu.Lock()
	if x.waiter != c {
		x.mu.Unlock()
		return // answered already (input_required, or the child's answer)
	}
	x.waiter, x.ended = nil, true
	asks := x.asks
	x.asks = nil
	x.mu.Unlock()
	x.c.exchanges.remove(x)
	via.Cancel(id, cause)
	if c.settle() {
		c.write(nil)
	}
	for _, q := range asks {
		x.c.Conn().Write(errorLine(q.id, jsonrpc.CodeInternalError, "mcp-simple-aggregator: the client cancelled the call this request belongs to"))
	}
}

// expire cancels a parked exchange the client never resumed.
func (x *exchange) expire(token string) {
	if _, ok := x.parked.Take(token); !ok {
		return // resumed meanwhile
	}
	x.mu.Lock()
	x.ended = true
	asks := x.asks
	x.asks = nil
	x.mu.Unlock()
	x.c.exchanges.remove(x)
	for _, q := range asks {
		x.c.Conn().Write(errorLine(q.id, jsonrpc.CodeInternalError, "mcp-simple-aggregator: the client did not retry the call within "+x.timeout.String()))
	}
	if via, id := x.origin.Request.ID(); id != nil {
		via.Cancel(id, fmt.Errorf("the client did not retry the call within %v", x.timeout))
	}
	x.log.Debugf("server %q: a call waiting for the client's input was cancelled after %v", x.c.key, x.timeout)
}

// isInputToken reports whether a requestState is one of the aggregator's.
func isInputToken(s string) bool { return strings.HasPrefix(s, inputTokenPrefix) }

// stop ends a parked exchange's timer at shutdown.
func (x *exchange) stop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.timer != nil {
		x.timer.Stop()
	}
}

// followProgress lets the child's progress on the exchange's call, which
// carries the first call's token, reach the client under the token of the
// retry c, while c waits.
func (x *exchange) followProgress(c *call) {
	from, to := x.origin.p.progressTo, c.p.progressTo
	if from == nil || to == nil {
		return
	}
	c.progressAt, c.progressAs = from, to // before c is in the table, where the child's reader finds it
	if !x.c.progress.Add(jsonrpc.Key(from), c) {
		c.progressAt, c.progressAs = nil, nil
	}
}
