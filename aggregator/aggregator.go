// Package aggregator serves one MCP client on behalf of many MCP servers (the
// children): it initializes each child with what the client declared,
// exposes every child tool and prompt as KEY+separator+name, routes each
// request to its child and relays everything in between (child requests to
// the client, progress, cancellation, notifications) without decoding and
// re-encoding what only passes through.
//
// # Who owns what
//
// An Aggregator is one client session: it holds the configured servers
// (each a child, which reaches the session only through its childHost)
// and the parts that own the rest of the session's state, each with its
// methods where its type is declared: clientSession (what the session
// knows of its client), catalog (the names the client is served: the
// registry), startup (when servers start, and how long a request waits
// for them), relayTables (the ids tied across the client and the
// servers: progress tokens, tasks) and lifetime.Session (the session's
// goroutines and shutdown). The Aggregator itself routes and reloads.
//
// # The route of a message
//
// A client line is parsed once by the client's jsonrpc.Conn and handed to
// clientMessage. A request is admitted as a call (its id, its method's
// entry in clientMethods, what routing needs from its params, read once)
// into the client's in-flight table, which refuses an id already in use;
// it waits for the servers it needs (startup), and is answered here (ping,
// the merged lists, fan-outs) or routed to one child, adapted to the
// child's era and sent (forward); the child's answer comes back on the
// child's reader goroutine to the call, which adapts it to the client's
// era and writes it under the client's id (or into its batch). Every
// request relayed either way is sent and taken back as send.go says: a
// cancel always goes through jsonrpc.Lane.Cancel. A child line is parsed
// by the child's Conn (package server) and handed to child.Message:
// requests go up to the client as its era has them (childRequests),
// notifications by childNotifications; until the client is initialized
// they wait at the gate.
//
// The two protocol eras meet in adapter.go: it alone asks which era a
// peer speaks (but where an era is settled) and does what differs; the
// stateless conversions between the eras are package eras. What the
// client and each server declared is read, and the aggregator's own
// capabilities merged from its servers', by package capabilities; which
// servers' capabilities are merged, and when, is decided here.
//
// The mappings of ids that an answer, a cancel and a peer's end race for
// are inflight.Tables with one rule: an entry leaves its table once,
// taken by whichever comes first of its answer, its cancel or the end of
// a peer, and whoever takes it finishes it. Ids are looked up as JSON
// values (jsonrpc.Key): "a\/b" finds "a/b", 7.0 finds 7, and "7" never
// finds 7; what goes back to a peer is the id as it wrote it.
//
// # Locks
//
// Where two locks nest, the outer one is taken first, in this order:
//
//  0. Aggregator.reloadMu: a reload holds it while it stops and starts
//     servers and waits for them (bounded by the start-up timeout);
//     Serve, while it begins the session, and shutdown, to wait for a
//     reload under way, take it alone;
//  1. server.Server.refreshing: a refresh holds it across its requests to
//     the server (bounded by the start-up timeout), the rebuild and the
//     client's list_changed (child.ListChanged);
//  2. catalog.mu (a rebuild), listenSet.mu (a modern client's
//     streams), exchange.mu (a call's input rounds), taskTable.sweeping
//     (only ever TryLock) and stdio.Restartable's (held while a server is
//     started again): none of them is taken under another of them;
//  3. server.Server.mu (a rebuild reads every server's lists; a log level
//     is sent under it, in order);
//  4. the leaves, under which no other lock is taken: lifetime.Session.mu,
//     clientSession.mu, clientGate.mu, inflight.Table.mu, inflight.Request.mu,
//     exchangeSet.mu, batch.mu, call.localMu, refreshState.mu, task.mu,
//     taskTable.forgetMu, heldStatuses.mu, taskListing.mu,
//     urlElicitations.mu, evictedTasks.mu, Logger.mu, Logger.hideMu, and a
//     jsonrpc.Conn's own (a write under a lock queues the line, or
//     writes what the peer takes within a millisecond).
//
// No lock is held while a reader waits (jsonrpc.Options.Pace waits with
// none).
package aggregator

import (
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/lifetime"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// Options configure an Aggregator.
type Options struct {
	Name    string // serverInfo.name
	Version string // serverInfo.version
	// Separator joins server key and tool or prompt name; "" means ":",
	// or "__" for a client served strict names.
	Separator string
	// StrictNames serves every client the strict form of names (matching
	// ^[a-zA-Z0-9_-]{1,64}$), as clients known to need it always are.
	StrictNames bool
	// StartupTimeout bounds a child's initialize and first lists.
	StartupTimeout time.Duration
	// FastListWait bounds how long the first lists of a client known to
	// fetch them again on list_changed wait for children still starting;
	// 0 means DefaultFastListWait. See listWait for the other clients.
	FastListWait time.Duration
	// ServerNameLen is the length of the name the client gives the
	// aggregator in its config, which names are made to fit with; 0
	// means DefaultServerNameLen.
	ServerNameLen int
	Servers       []config.Server
	// Log is where diagnostics go; New (and Reload) have it hide the
	// values of the servers' env and variables (Logger.Hide).
	Log *Logger
	// Start starts a child server. It is required.
	Start func(config.Server) (Process, error)
	// Memory keeps what each server declared when it last started, for
	// the initialize answers of later sessions (memory.go); nil: nothing
	// is remembered.
	Memory Memory
	// MaxMessageSize bounds one message, in bytes: a longer line of the
	// client gets an error and is discarded; a child that sends one is
	// dropped as broken. 0 means no bound.
	MaxMessageSize int
	// MaxQueue bounds the bytes waiting to be written to one child that
	// does not read its stdin fast enough: past it, new requests to that
	// child fail at once. 0 means DefaultMaxQueue.
	MaxQueue int
	// InputTimeout bounds how long a call a modern client got answered
	// input_required (for a legacy child's request) waits for the client's
	// retry before it is cancelled at the child; 0 means
	// DefaultInputTimeout.
	InputTimeout time.Duration
	// ProbeTimeout bounds the server/discover probe of each child when the
	// client speaks the modern era; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// ClientRequestTimeout bounds how long a child's request to the client
	// (sampling, elicitation, roots) waits for the client's answer before
	// the child gets an error and the client a cancel; 0 means
	// DefaultClientRequestTimeout.
	ClientRequestTimeout time.Duration

	// Skipped are the config's entries that are not stdio servers, which
	// Check shows as skipped.
	Skipped []config.Skipped
	// Compound are the compound tools (compound.go).
	Compound []config.Compound

	// pacing is the clock and the wait of a server's reader (package
	// server, pace.go); the zero value is the real ones. Tests set it, and
	// only they: the rate is real time (10,000 messages a second), so a
	// test that saw a reader held back on the real clock would flood it
	// for seconds, and one that floods less sees nothing.
	pacing server.Pacing
	// listDeadline, when set (by tests, and only they), is closed when a
	// client's first lists may wait no longer, instead of after listWait:
	// the tests' clock. The real wait is 1 s, 4 s or 24 s by client; the
	// tests end it on an event (every server up, or a named one), which no
	// option can say: on the real clock a test of a server still starting
	// would wait it out, and one of servers that start would race it on a
	// loaded machine.
	listDeadline func(st *startup, clientName string) <-chan struct{}
}

// DefaultClientRequestTimeout is the default of
// Options.ClientRequestTimeout: long enough for a person to answer an
// elicitation; servers usually give up sooner themselves (the TypeScript
// SDK after 60 s) and cancel.
const DefaultClientRequestTimeout = 10 * time.Minute

// DefaultMaxQueue is the default of Options.MaxQueue.
const DefaultMaxQueue = 32 << 20

// DefaultProbeTimeout is how long a server may take to answer the
// server/discover probe before it is taken for a legacy server (one that
// ignores requests before initialize).
const DefaultProbeTimeout = server.DefaultProbeTimeout

// DefaultInputTimeout bounds how long a call answered input_required waits
// for the client's retry before it is cancelled at the child.
const DefaultInputTimeout = 5 * time.Minute

// DefaultFastListWait is the default of Options.FastListWait: how long the
// first lists of a client known to fetch them again on list_changed wait
// for servers still starting. Such clients do not wait long before their
// first model request (measured: Claude Code 2.1.197 in print mode about
// 2 s), so the servers that are up are listed within it, and the others
// follow with list_changed.
const DefaultFastListWait = time.Second

// DefaultServerNameLen is the length assumed for the name the client gives
// the aggregator in its config (which no client sends) when
// Options.ServerNameLen is 0: names are made to fit each known client's
// limit with its prefix for a server name of up to this many characters.
const DefaultServerNameLen = naming.DefaultServerNameLen

// serverNameLen is the length of the name the client gives the aggregator.
func (o Options) serverNameLen() int {
	if o.ServerNameLen > 0 {
		return o.ServerNameLen
	}
	return DefaultServerNameLen
}

// namingFor is the naming a client gets (naming.Settings.For) with
// Options.Separator, Options.StrictNames and Options.ServerNameLen.
func (o Options) namingFor(clientName string) naming.Scheme {
	return naming.Settings{Sep: o.Separator, Strict: o.StrictNames, ServerNameLen: o.serverNameLen()}.For(clientName)
}

// listWait is how long the first lists wait for servers still starting,
// from the first request that needs them: for a client known to fetch a
// list again on list_changed, FastListWait (the rest follows with
// list_changed); for any other, as long as its own budget allows
// (naming.Startup: a client not in the table gives up after 5 s), and
// answered inside it (listWaitShare), but no longer than the start-up
// timeout.
func (o Options) listWait(clientName string) time.Duration {
	refetches, budget := naming.Startup(clientName)
	return o.listWaitFor(refetches, budget)
}

// listWaitFor is listWait for a client that fetches the lists again, or
// not, with its budget.
func (o Options) listWaitFor(refetches bool, budget time.Duration) time.Duration {
	switch {
	case refetches:
		return o.FastListWait
	case budget == 0:
		return o.StartupTimeout
	}
	return min(o.StartupTimeout, budget-budget/listWaitShare)
}

// listWaitShare: the first list of a client that lists once is answered
// when a listWaitShare-th of its budget is left (4 s of 5 s, 24 s of 30 s),
// room for the client's own clock starting before the request reached us.
const listWaitShare = 5

// Process is a started child server: its pipes and its life. stdio.Process
// is the real one; tests may provide others. Err names the server; Stop
// closes stdin first, and signals the process group only after a grace
// period; Terminate closes stdin and sends SIGTERM together (SIGKILL
// shortly after), and hurries a Stop under way.
type Process = stdio.Started

// Aggregator is one client session over a fixed set of children.
type Aggregator struct {
	opts     Options
	log      *Logger
	servers  atomic.Pointer[[]*child] // in config order: see children
	reloadMu sync.Mutex               // a reload at a time (reload.go); Serve's start under it too
	serving  bool                     // Serve has given the children their lanes to the client; under reloadMu
	client   clientSession
	relay    *relayTables              // progress tokens and tasks, across the client and the servers
	listens  listenSet                 // a modern client's subscriptions/listen streams
	parked   inflight.Table[*exchange] // calls answered input_required, by their requestState

	catalog *catalog   // the names the client is served: the registry, the compound tools
	start   *startup   // the servers started when a request needs them, and its waits for them
	host    *childHost // what the children get of the session

	life *lifetime.Session // the session's context, its goroutines, its shutdown
}

// New returns an aggregator for opts.Servers. Nothing starts until Serve or
// Check.
func New(opts Options) *Aggregator {
	if opts.Log == nil {
		opts.Log = NewLogger(io.Discard, "", false)
	}
	opts.Log.Hide(opts.Servers)
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = 30 * time.Second
	}
	if opts.FastListWait <= 0 {
		opts.FastListWait = DefaultFastListWait
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = DefaultMaxQueue
	}
	if opts.InputTimeout <= 0 {
		opts.InputTimeout = DefaultInputTimeout
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = DefaultProbeTimeout
	}
	if opts.ClientRequestTimeout <= 0 {
		opts.ClientRequestTimeout = DefaultClientRequestTimeout
	}
	a := &Aggregator{
		opts: opts,
		log:  opts.Log,
		life: lifetime.New(),
	}
	a.catalog = newCatalog(&opts, a.children)
	a.start = &startup{opts: &a.opts, log: opts.Log, life: a.life, servers: a.servers.Load, catalog: a.catalog, hears: a.clientHears, tell: a.tellClient}
	a.relay = &relayTables{log: opts.Log}
	a.client.serverInfo = makeServerInfo(opts.Name, opts.Version)
	a.client.began.Store(&clientInit{}) // the session not begun
	a.host = &childHost{
		settings: childSettings{server: server.Settings{
			Start:          opts.Start,
			StartupTimeout: opts.StartupTimeout,
			ProbeTimeout:   opts.ProbeTimeout,
			MaxMessageSize: opts.MaxMessageSize,
			MaxQueue:       opts.MaxQueue,
			Pacing:         opts.pacing,
			Memory:         opts.Memory,
			Life:           a.life,
			Log:            opts.Log,
			Meta:           a.client.childMeta,
			Cancelled:      tellCancelled,
		}, clientRequestTimeout: opts.ClientRequestTimeout},
		log: opts.Log, life: a.life, client: &a.client, relay: a.relay, listens: &a.listens,
		rebuild: a.catalog.rebuild, childUp: a.start.childUp, tellClient: a.tellClient, uriOwner: a.uriOwner,
	}
	children := make([]*child, 0, len(opts.Servers))
	for _, s := range opts.Servers {
		children = append(children, newChild(a.host, s, nil))
	}
	a.servers.Store(&children)
	return a
}

// makeServerInfo is the serverInfo of an aggregator named name, of
// version.
func makeServerInfo(name, version string) []byte {
	b := jsonrpc.AppendString([]byte(`{"name":`), name)
	b = jsonrpc.AppendString(append(b, `,"version":`...), version)
	return append(b, '}')
}

// children are the configured servers, in config order: a snapshot, which
// a reload replaces (reload.go) and nobody changes.
func (a *Aggregator) children() []*child { return *a.servers.Load() }

// resourceChildren are the running children that declared resources.
func (a *Aggregator) resourceChildren() []*child {
	var cs []*child
	for _, c := range a.children() {
		if c.running() && c.capabilities().Resources {
			cs = append(cs, c)
		}
	}
	return cs
}
