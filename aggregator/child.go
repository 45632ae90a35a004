package aggregator

import (
	"errors"
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// child is one configured server as the session sees it: the server
// itself (package server: its process, connection, era, lists, stop),
// and the session's side of the conversation with it, which the server
// knows nothing of (its requests to the client, its calls' progress, its
// tasks, its lane into the client's queue, what its entry exposes). It is
// the server's server.Events: what the server tells the session arrives
// here.
type child struct {
	*server.Server
	host   *childHost
	key    string
	server config.Server

	quiet atomic.Bool              // started by a reload, which announces its lists itself
	view  atomic.Pointer[toolView] // what its entry exposes of its tools (filter.go); a reload may swap it
	up    *jsonrpc.Lane            // its lane into the client's queue; nil in Check

	incoming     idTable[*childRequest] // its requests relayed to the client, by its id
	progress     idTable[*call]         // the calls in flight to it that carry a progress token, by jsonrpc.Key
	tasks        idTable[*task]         // its tasks known to the client, by its task id
	clientTasks  atomic.Int64           // the tasks the client runs for it (client_tasks.go)
	heldStatuses heldStatuses           // its statuses of tasks not known yet
	listing      taskListing            // its tasks/list passes: which tasks it still keeps (tasks_list.go)
	exchanges    exchangeSet            // a modern client's calls to it that may take input (legacy child)
	logging      atomic.Int32           // a modern client's calls in flight to it that asked for logs (legacy child)
	elicitations urlElicitations        // its URL elicitations the client may see completed (owners.go)
}

// newChild is the child of config entry s; after, when not nil, is closed
// once the process it replaces (a reload) has stopped.
func newChild(host *childHost, s config.Server, after <-chan struct{}) *child {
	c := &child{host: host, key: s.Key, server: s}
	c.Server = server.New(s, &host.settings.server, c, after)
	c.view.Store(newToolView(s.Tools))
	return c
}

// The server's events (server.Events).

// Pace holds the server's reader while more than laneRoom bytes of what it
// sent the client wait to be written: the client's pace is the server's.
func (c *child) Pace(done <-chan struct{}) {
	if c.up != nil {
		c.up.WaitRoom(laneRoom, done)
	}
}

// Opened: the server's session is open; what its era needs before its
// lists are fetched is done (serverEra.opened).
func (c *child) Opened() { c.era().opened(c) }

// Up: the server runs; it enters the registry before its waiters go on,
// and the client hears of it when it was answered a list without it.
func (c *child) Up() {
	c.host.session.rebuild()
	c.host.session.childUp(c)
}

// ListChanged: a list of the server was fetched anew; the registry is
// built anew and the client told.
func (c *child) ListChanged(method string) {
	c.host.session.rebuild()
	c.host.session.tellClient(method)
}

// Dropped: the server failed or was stopped. Its requests to the client
// are cancelled; at a failure or a reload its tasks fail, and when it was
// up its entries leave the registry and the client hears that lists
// changed.
func (c *child) Dropped(why error, wasRunning bool) {
	if errors.Is(why, errShuttingDown) { // their timers end with the session
		for _, r := range c.incoming.takeAll() {
			r.cancel(errShuttingDown)
		}
		return
	}
	cause := why // a reload's: it says why
	if c.Status().State == server.Failed {
		cause = c.Errorf("is gone")
	}
	for _, r := range c.incoming.takeAll() {
		r.cancel(cause)
	}
	c.failTasks(toldClient(why))
	if wasRunning {
		c.host.session.rebuild()
		announceLists(c.Status().Caps, c.host.session.tellClient)
	}
}

// What the session asks of the server's state.

func (c *child) running() bool     { return c.Status().State == server.Running }
func (c *child) initialized() bool { return c.Status().Initialized() }
func (c *child) dropped() bool     { return c.Status().Dropped() }
func (c *child) failed() error     { return c.Failed() }

// settled reports whether the child runs, or has failed or was stopped:
// whether what it listed is its own (owners.go).
func (c *child) settled() bool { return c.Status().State != server.Starting }

func (c *child) capabilities() capabilities.Server { return c.Status().Caps }

// errShuttingDown is why a server stops, or never starts, when the
// session ends.
var errShuttingDown = server.ErrShuttingDown

// toldClient is err as the client is told it: without the server's stderr.
var toldClient = server.ToldClient
