package aggregator

import (
	"errors"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
)

// This file is what the session does when a server tells it what happened
// to it (server.Events, but Pace and Message, which are route_server.go,
// and Opened, which differs by era: adapter.go): it is up, a list changed,
// it was dropped; and how the client is told that a list changed
// (tellClient).

// Up: the server runs (and a legacy one is set to the client's log level:
// runs); it enters the registry before its waiters go on,
// and the client hears of it when it was answered a list without it.
func (c *child) Up() {
	c.runs()
	c.host.rebuild()
	c.host.childUp(c)
}

// ListChanged: a list of the server was fetched anew; the registry is
// built anew and the client told.
func (c *child) ListChanged(method string) {
	c.host.rebuild()
	c.host.tellClient(method)
}

// Dropped: the server failed or was stopped. Its requests to the client
// are cancelled; at a failure or a reload its tasks fail, and when it was
// up, or what it listed when it last ran was listed for it, its entries
// leave the registry and the client hears that lists changed.
func (c *child) Dropped(why error, wasRunning bool) {
	if errors.Is(why, errShuttingDown) { // their timers end with the session
		for _, r := range c.incoming.TakeAll() {
			r.cancel(errShuttingDown)
		}
		return
	}
	cause := why // a reload's: it says why
	if c.Status().State == server.Failed {
		cause = c.Errorf("is gone")
	}
	for _, r := range c.incoming.TakeAll() {
		r.cancel(cause)
	}
	c.failTasks(toldClient(why))
	if wasRunning {
		c.host.rebuild()
		announceLists(c.Status().Caps, c.host.tellClient)
	} else if r, ok := c.recalled(); ok && !r.Failed && c.Status().State == server.Failed { // what it listed when it last ran was listed for it; a reload announces for itself
		c.host.rebuild()
		announceLists(r.Caps, c.host.tellClient)
	}
}

// tellClient sends a parameterless notification to the client, or keeps
// it at the gate until the client is initialized.
func (a *Aggregator) tellClient(method string) {
	if a.client.conn == nil || a.client.gate.note(method) {
		return
	}
	a.notifyListChanged(method)
}
