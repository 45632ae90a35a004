// Package aggregator serves one MCP client on behalf of many MCP servers (the
// children): it initializes each child with what the client declared,
// exposes every child tool and prompt as KEY+separator+name, routes each
// request to its child and relays everything in between (child requests to
// the client, progress, cancellation, notifications) without decoding and
// re-encoding what only passes through.
//
// # The route of a message
//
// A client line is parsed once by the client's jsonrpc.Conn and handed to
// clientMessage (client.go). route.go then reads top to bottom: a request
// is admitted as a call (call.go: its id, its method's entry in the method
// table of methods.go, what routing needs from its params, read once) into
// the client's in-flight table, which refuses an id already in use; it is
// answered here (ping, the merged lists, fan-outs) or routed to one child
// (by prefixed name, by URI: routes.go), adapted to the child's era, and
// sent (forward); the child's answer comes back on the child's reader
// goroutine to the call, which adapts it to the client's era and writes
// it under the client's id (or into its batch, batch.go). Every request
// relayed either way is sent and taken back as send.go says: a cancel
// always goes through jsonrpc.Lane.Cancel.
//
// A child line is parsed by the child's Conn (package server) and handed to child.Message
// (route_server.go): requests go up to the client under fresh ids,
// notifications by the child method table; until the client is
// initialized they wait at the gate (gate.go).
//
// A child holds a childHost (child_host.go), not the Aggregator: the few parts
// of the session it needs (its settings, the log, the session's lifetime,
// the client's session, the relayTables of progress tokens and tasks, a
// modern client's streams) and the events it tells the session of.
//
// The two protocol eras meet in adapter.go: a server's era and the
// client's are each an interface with a legacy and a modern
// implementation, which the rest of the package asks what to do; the
// stateless conversions between the eras are package eras
// (aggregator/internal/eras). What the client and each server declared is
// read, and the aggregator's own capabilities merged from its servers', by
// package capabilities (aggregator/internal/capabilities); which servers'
// capabilities are merged, and when, is decided here.
//
// Every mapping of ids (client requests to child calls, child requests to
// client ids, progress tokens) is an idTable (idtable.go) with one rule:
// an entry leaves its table once, taken by whichever comes first of its
// answer, its cancel or the end of a peer, and whoever takes it finishes
// it. Ids are looked up as JSON values (jsonrpc.Key): "a\/b" finds "a/b",
// 7.0 finds 7, and "7" never finds 7; what goes back to a peer is the id
// as it wrote it.
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
//  2. Aggregator.regMu (a rebuild), listenSet.mu (a modern client's
//     streams), exchange.mu (a call's input rounds), taskTable.sweeping
//     (only ever TryLock) and stdio.Restartable's (held while a server is
//     started again): none of them is taken under another of them;
//  3. server.Server.mu (a rebuild reads every server's lists; a log level
//     is sent under it, in order);
//  4. the leaves, under which no other lock is taken: lifetime.mu,
//     clientSession.mu, clientGate.mu, idTable.mu, sendState.mu,
//     exchangeSet.mu, batch.mu, call.localMu, refreshState.mu, task.mu,
//     taskTable.forgetMu, heldStatuses.mu, taskListing.mu,
//     urlElicitations.mu, startWaits.mu, evictedTasks.mu, Logger.mu, Logger.hideMu, and a
//     jsonrpc.Conn's own (a write under a lock queues the line, or
//     writes what the peer takes within a millisecond).
//
// No lock is held while a reader waits (jsonrpc.Options.Pace waits with
// none).
package aggregator

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/naming"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// Process is a started child server: its pipes and its life. stdio.Process
// is the real one; tests may provide others. Err names the server; Stop
// closes stdin first, and signals the process group only after a grace
// period; Terminate closes stdin and sends SIGTERM together (SIGKILL
// shortly after), and hurries a Stop under way.
type Process = stdio.Started

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

	// pacing is the clock and the wait of a server's reader (package server, pace.go);
	// the zero value is the real ones. Tests set it.
	pacing server.Pacing
	// graces are how long the session waits for what usually comes
	// sooner (graces.go); the zero value is the defaults. Tests set them.
	graces graces
	// listDeadline, when set (by tests), is closed when a client's first
	// lists may wait no longer, instead of after listWait: the tests'
	// clock.
	listDeadline func(a *Aggregator, clientName string) <-chan struct{}
}

// DefaultClientRequestTimeout is the default of
// Options.ClientRequestTimeout: long enough for a person to answer an
// elicitation; servers usually give up sooner themselves (the TypeScript
// SDK after 60 s) and cancel.
const DefaultClientRequestTimeout = 10 * time.Minute

// DefaultMaxQueue is the default of Options.MaxQueue.
const DefaultMaxQueue = 32 << 20

// Aggregator is one client session over a fixed set of children.
type Aggregator struct {
	opts     Options
	log      *Logger
	servers  atomic.Pointer[[]*child]    // in config order: see children
	reloadMu sync.Mutex                  // a reload at a time (reload.go); Serve's start under it too
	serving  bool                        // Serve has given the children their lanes to the client; under reloadMu
	plan     atomic.Pointer[server.Plan] // how children's sessions are opened, once the client's began
	client   clientSession
	relay    *relayTables       // progress tokens and tasks, across the client and the servers
	listens  listenSet          // a modern client's subscriptions/listen streams
	parked   idTable[*exchange] // calls answered input_required, by their requestState

	reg    atomic.Pointer[registry]
	regMu  sync.Mutex    // serialises rebuilds; protects naming, clientName, warned and pinned
	pinned pinnedNames   // names a reload keeps (registry.go)
	naming naming.Scheme // how names are formed for this client
	// clientNaming is naming, for readers that must not wait for regMu
	// (startup.go's ownersOf, on the client's reader).
	clientNaming atomic.Pointer[naming.Scheme]
	clientName   string                   // the client's clientInfo.name
	warned       map[string]bool          // name collisions already reported
	readyFor     atomic.Pointer[[]*child] // the set of servers (a.servers) seen all started or failed: see allUp
	allDemanded  atomic.Bool              // a request needed every child: each was started (startup.go)
	readyOnce    sync.Once                // reports the names once every child is ready
	waits        startWaits               // how long the client waits for children still starting (startup.go)
	listedSoon   atomic.Bool              // a list was answered before every child was ready
	host         *childHost               // what the children get of the session

	life *lifetime // the session's context, its goroutines, its shutdown

	compound atomic.Pointer[[]config.Compound] // the compound tools (compound.go); a reload may swap them
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
		opts:   opts,
		log:    opts.Log,
		naming: opts.namingFor(""),
		warned: make(map[string]bool),
		life:   newLifetime(),
	}
	a.relay = &relayTables{log: opts.Log}
	a.client.serverInfo = makeServerInfo(opts.Name, opts.Version)
	a.host = &childHost{
		settings: childSettings{server: server.Settings{
			Start:          opts.Start,
			StartupTimeout: opts.StartupTimeout,
			ProbeTimeout:   opts.ProbeTimeout,
			MaxMessageSize: opts.MaxMessageSize,
			MaxQueue:       opts.MaxQueue,
			ExitGrace:      opts.graces.exit,
			Pacing:         opts.pacing,
			Memory:         opts.Memory,
			Life:           a.life,
			Log:            opts.Log,
			Meta:           a.client.childMeta,
			Watch:          watchHooks,
			Cancelled:      tellCancelled,
		}, clientRequestTimeout: opts.ClientRequestTimeout, graces: opts.graces},
		log: opts.Log, life: a.life, client: &a.client, relay: a.relay, listens: &a.listens, session: a,
	}
	children := make([]*child, 0, len(opts.Servers))
	for _, s := range opts.Servers {
		children = append(children, newChild(a.host, s, nil))
	}
	initial := a.naming
	a.clientNaming.Store(&initial)
	a.servers.Store(&children)
	a.compound.Store(&opts.Compound)
	a.reg.Store(&registry{naming: a.naming, toolsResult: []byte(`{"tools":[]}`), promptsResult: []byte(`{"prompts":[]}`)})
	return a
}

// Serve serves the client on in and out until in ends, a write to out
// fails (the client went away) or ctx is done. Children start when the
// client's requests need them (startup.go).
//
// At the end of in (the polite shutdown of the spec), the requests already
// read get up to answerGrace to be answered and every child is stopped
// politely: its stdin closed, signals only after a grace period. When out
// fails or ctx ends (a signal: the host will not wait long), children are
// terminated at once (stdin closed and SIGTERM together, SIGKILL shortly
// after), and a polite shutdown under way is hurried the same way when ctx
// ends during it. Serve then closes in if it is an io.Closer, which must
// end a Read in progress (io.Pipe, a net.Conn, a pollable file), and waits
// for its reader to stop; the reader of an in that is not a Closer cannot
// be stopped, and is not waited for. Every request still owed an answer
// gets one, and Serve returns once every other goroutine it started is
// gone. A clean end of input returns nil.
func (a *Aggregator) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	output := &clientOutput{w: out, broken: make(chan struct{})}
	var up *jsonrpc.Conn
	up = jsonrpc.NewConn(in, output, jsonrpc.Options{
		// What goes to the client waits in one queue in front of out,
		// which a goroutine of its own writes: no reader ever waits for
		// the client to read.
		Queue:       true,
		Handle:      a.clientMessage,
		Batch:       a.clientBatch,
		Invalid:     a.clientInvalid,
		Unmatched:   func(m *jsonrpc.Message) { a.log.Debugf("client answered unknown id %s", m.ID) },
		Cancelled:   tellCancelled,
		MaxLineSize: a.opts.MaxMessageSize,
		Oversized:   a.clientOversized,
		Pace:        func(bool) { up.WaitRoom(clientRoom, a.life.ctx.Done()) },
		Watch:       watchHooks("the client"),
		Written:     releaseLarge,
	})
	a.reloadMu.Lock()  // a reload spawns what it adds once serving is set
	a.client.conn = up // before any child starts: their readers use it
	for _, c := range a.children() {
		c.up = up.NewLane()
	}
	a.serving = true
	a.reloadMu.Unlock()
	readErr := make(chan error, 1)
	go func() { readErr <- up.Run() }()

	var err error
	select {
	case err = <-readErr:
		if errors.Is(err, io.EOF) {
			err = nil
			a.log.Debugf("client closed its input; shutting down")
		}
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-ctx.Done():
				a.log.Debugf("hurrying the shutdown: %v", context.Cause(ctx))
				a.life.hurryShutdown()
			case <-finished:
			}
		}()
		a.listens.endAll() // they would never be answered otherwise
		a.client.inflight.waitEmpty(a.opts.graces.forAnswers(), a.life.hurry)
		a.shutdown()

	case <-output.broken:
		a.log.Warnf("the client closed its output (%v); shutting down", output.err)
		a.life.hurryShutdown()
		a.stopReading(in, readErr)

	case <-ctx.Done():
		a.log.Debugf("shutting down: %v", context.Cause(ctx))
		a.life.hurryShutdown()
		a.stopReading(in, readErr)
	}
	a.flushClient()
	return err
}

// stopReading shuts down while the client's input is still open: it
// closes in if it can, so that its reader stops, and waits for that.
func (a *Aggregator) stopReading(in io.Reader, readErr <-chan error) {
	closer, ok := in.(io.Closer)
	if ok {
		closer.Close()
	}
	a.shutdown()
	if ok {
		<-readErr
	}
}

// hookWatchdog, when set (by the tests), watches the hooks of every
// connection, which conn names (jsonrpc.Options.Watch): nothing that runs
// on a reader may wait.
var hookWatchdog func(conn string) func(what string) (done func())

// watchHooks is hookWatchdog for conn, or nil.
func watchHooks(conn string) func(string) func() {
	if hookWatchdog == nil {
		return nil
	}
	return hookWatchdog(conn)
}

// shutdown ends the requests being served here, stops every child at once
// and waits for them; then every client request still owed an answer gets
// an error. Calls sent to children are not cancelled: a child that answers
// them while it stops (its stdin closed) is still heard, and the rest
// fail, naming the child, when it is gone.
func (a *Aggregator) shutdown() {
	a.life.end()
	a.reloadMu.Lock() // a reload under way ends (a.ctx), its servers stopped
	a.reloadMu.Unlock()
	var wg sync.WaitGroup
	for _, c := range a.children() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Stop()
		}()
	}
	wg.Wait()
	a.life.handlers.Wait()
	a.relay.stopForgetting()
	for _, x := range a.parked.takeAll() {
		x.stop()
	}
	for _, c := range a.client.inflight.takeAll() {
		c.write(errorLine(c.id, jsonrpc.CodeInternalError, errShuttingDown.Error()))
	}
}

// children are the configured servers, in config order: a snapshot, which
// a reload replaces (reload.go) and nobody changes.
func (a *Aggregator) children() []*child { return *a.servers.Load() }

// DefaultProbeTimeout is how long a server may take to answer the
// server/discover probe before it is taken for a legacy server (one that
// ignores requests before initialize).
const DefaultProbeTimeout = server.DefaultProbeTimeout
