package aggregator

import (
	"slices"

	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientGate keeps what the children send before the client has sent
// notifications/initialized: before that a server should send nothing but
// pings and logs, and the aggregator's own initialize answer must come
// first. A child whose list changes while it starts is announced once the
// gate opens, as it would be on a direct connection.
type clientGate struct {
	mu    sync.Mutex // protects the fields below
	open  bool
	held  []heldMessage // child messages, in the order they came
	notes []string      // list_changed notifications for the client, once each
}

// heldMessage is a child's request or notification kept at the gate.
type heldMessage struct {
	child *child
	m     *jsonrpc.Message
}

// hold keeps m while the gate is closed and reports whether it did.
func (g *clientGate) hold(c *child, m *jsonrpc.Message) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return false
	}
	g.held = append(g.held, heldMessage{c, m})
	return true
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
// gate and returns the kept notifications. A message that comes while the
// held ones are dispatched is held too, and dispatched in its turn.
func (g *clientGate) release(dispatch func(heldMessage)) []string {
	for {
		g.mu.Lock()
		held := g.held
		g.held = nil
		if len(held) == 0 {
			g.open = true
			notes := g.notes
			g.notes = nil
			g.mu.Unlock()
			return notes
		}
		g.mu.Unlock()
		for _, h := range held {
			dispatch(h)
		}
	}
}

// clientInitialized is the client's notifications/initialized: what the
// children sent until then goes up, then the list changes.
func (a *Aggregator) clientInitialized([]byte) {
	notes := a.client.gate.release(func(h heldMessage) { h.child.dispatch(h.m) })
	for _, method := range notes {
		a.client.conn.Notify(method, nil)
	}
	a.log.Debugf("client initialized")
}

// tellClient sends a parameterless notification to the client, or keeps
// it at the gate until the client is initialized.
func (a *Aggregator) tellClient(method string) {
	if a.client.conn == nil || a.client.gate.note(method) {
		return
	}
	a.client.conn.Notify(method, nil)
}
