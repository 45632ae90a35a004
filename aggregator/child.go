package aggregator

import (
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/lifetime"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is what a server is to the session (child) and what a child
// gets of the session (childHost): state, and what works on that state
// alone. What the session does when a server tells it something is
// child_events.go (its lifecycle) and route_server.go (its messages).

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

	incoming     inflight.Table[*childRequest] // its requests relayed to the client, by its id
	progress     inflight.Table[*call]         // the calls in flight to it that carry a progress token, by jsonrpc.Key
	tasks        inflight.Table[*task]         // its tasks known to the client, by its task id
	clientTasks  atomic.Int64                  // the tasks the client runs for it (client_tasks.go)
	heldStatuses heldStatuses                  // its statuses of tasks not known yet
	listing      taskListing                   // its tasks/list passes: which tasks it still keeps (tasks.go)
	exchanges    exchangeSet                   // a modern client's calls to it that may take input (legacy child)
	logging      atomic.Int32                  // a modern client's calls in flight to it that asked for logs (legacy child)
	elicitations urlElicitations               // its URL elicitations the client may see completed (owners.go)
}

// newChild is the child of config entry s; after, when not nil, is closed
// once the process it replaces (a reload) has stopped.
func newChild(host *childHost, s config.Server, after <-chan struct{}) *child {
	c := &child{host: host, key: s.Key, server: s}
	c.Server = server.New(s, &host.settings.server, c, after)
	c.view.Store(newToolView(s.Tools))
	return c
}

// childHost is what a child needs of the session it serves, and all that
// a child's own code (its methods, and the exchanges its reader drives)
// uses of it: the settings of its process and messages, the log, the
// session's life, the client's side, the tables that tie ids across the
// client and the servers, a modern client's streams, and the four things
// it tells or asks the session's parts (the catalog, start-up, the
// session), as funcs: no more of them. The other children and reloads
// are not in it; the client's calls a child carries belong to the
// client's side and keep their Aggregator. Every child of a session
// shares one.
type childHost struct {
	settings childSettings
	log      *Logger
	life     *lifetime.Session
	client   *clientSession
	relay    *relayTables
	listens  *listenSet

	rebuild    func()                  // its lists changed: the registry is built anew (catalog)
	childUp    func(c *child)          // it is up and in the registry (startup)
	tellClient func(method string)     // a list changed: the client is told, or will be
	uriOwner   func(uri string) *child // the server that owns a resource URI (owners.go); never waits
}

// childSettings are what Options say of a server: what every server of
// the session shares (package server's), and how long the session waits
// for the client's answers to its requests.
type childSettings struct {
	server               server.Settings
	clientRequestTimeout time.Duration // its requests to the client
}

func (c *child) running() bool { return c.Status().State == server.Running }

func (c *child) initialized() bool { return c.Status().Initialized() }

func (c *child) dropped() bool { return c.Status().Dropped() }

// settled reports whether the child runs, or has failed or was stopped:
// whether what it listed is its own (owners.go).
func (c *child) settled() bool { return c.Status().State != server.Starting }

func (c *child) capabilities() capabilities.Server { return c.Status().Caps }

// toolView is the view of the child's tools its entry asks for now.
func (c *child) toolView() *toolView { return c.view.Load() }

// setTools makes t the child's view of its tools and reports whether that
// changed it.
func (c *child) setTools(t config.Tools) bool {
	if c.view.Load().tools.Equal(t) {
		return false
	}
	c.view.Store(newToolView(t))
	return true
}

// errShuttingDown is why a server stops, or never starts, when the
// session ends.
var errShuttingDown = server.ErrShuttingDown

// toldClient is err as the client is told it: without the server's stderr.
var toldClient = server.ToldClient

// childRequest is a child's request relayed to the client: in the child's
// incoming table under the child's id from when it is read until the
// client answers, the child cancels it, or either is gone.
type childRequest struct {
	c         *child
	id        []byte // the child's id
	key       string // jsonrpc.Key(id)
	token     string // the key (jsonrpc.Key) of the progress token handed to the client; "" if none
	method    string
	augmented bool        // it asks the client for a task
	task      *clientTask // of tasks/get, tasks/result, tasks/cancel
	timer     *time.Timer // ends it unanswered after Options.ClientRequestTimeout

	inflight.Request // its id at the client, the child's cancel
}

// progressRoute leads a progress token the aggregator gave the client back to
// the child whose request carried it, and to the child's own token.
type progressRoute struct {
	child *child
	token string // the child's token, raw JSON as the child wrote it
}
