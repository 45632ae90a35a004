package aggregator

import (
	"slices"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the client's gate: what servers send before the client is
// initialized waits here, within a bound.

// clientGate keeps what the children send before the client has sent
// notifications/initialized: before that a server should send nothing but
// pings and logs, and the aggregator's own initialize answer must come
// first. A child whose list changes while it starts is announced once the
// gate opens, as it would be on a direct connection.
//
// What one child may have waiting is bounded (heldLimit bytes): past it,
// its notifications are dropped, counted in one warning when the gate
// opens, and its requests are refused.
type clientGate struct {
	mu      sync.Mutex // protects the fields below
	open    bool
	held    []heldMessage  // child messages, in the order they came
	bytes   map[*child]int // bytes held, by child
	dropped map[*child]int // notifications dropped past heldLimit, by child
	notes   []string       // list_changed notifications for the client, once each
}

// heldLimit bounds the bytes of the messages one child may have waiting
// at the gate.
const heldLimit = 4 << 20

// heldMessage is a child's request or notification kept at the gate.
type heldMessage struct {
	child *child
	m     *jsonrpc.Message
}

// gateVerdict is what the gate did with a child's message.
type gateVerdict int

const (
	gatePassed  gateVerdict = iota // the gate is open: handle it now
	gateHeld                       // kept until the gate opens
	gateRefused                    // past the child's bound: a notification was dropped (and counted), a request must be refused
)

// hold keeps m while the gate is closed and within c's bound.
func (g *clientGate) hold(c *child, m *jsonrpc.Message) gateVerdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return gatePassed
	}
	size := len(m.ID) + len(m.Method) + len(m.Params) + 64 // about the line's
	if g.bytes[c]+size > heldLimit {
		if !m.IsRequest() {
			if g.dropped == nil {
				g.dropped = make(map[*child]int)
			}
			g.dropped[c]++
		}
		return gateRefused
	}
	if g.bytes == nil {
		g.bytes = make(map[*child]int)
	}
	g.bytes[c] += size
	g.held = append(g.held, heldMessage{c, m})
	return gateHeld
}

// note keeps a parameterless notification for the client (once) while the
// gate is closed and reports whether it did.
func (g *clientGate) note(method string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return false
	}
	if !slices.Contains(g.notes, method) {
		g.notes = append(g.notes, method)
	}
	return true
}

// release hands every held message to dispatch, in order, then opens the
// gate and returns the kept notifications and how many notifications of
// each child were dropped. A message that comes while the held ones are
// dispatched is held too, and dispatched in its turn.
func (g *clientGate) release(dispatch func(heldMessage)) (notes []string, dropped map[*child]int) {
	for {
		g.mu.Lock()
		held := g.held
		g.held = nil
		if len(held) == 0 {
			g.open = true
			notes, dropped = g.notes, g.dropped
			g.notes, g.dropped, g.bytes = nil, nil, nil
			g.mu.Unlock()
			return notes, dropped
		}
		g.mu.Unlock()
		for _, h := range held {
			dispatch(h)
		}
	}
}
