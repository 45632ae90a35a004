// Package aggregator serves one MCP client on behalf of many MCP servers (the
// children): it initializes each child with what the client declared,
// exposes every child tool and prompt as KEY+separator+name, routes each
// request to its child and relays everything in between (child requests to
// the client, progress, cancellation, notifications) without decoding and
// re-encoding what only passes through.
//
// Ids are rewritten per connection: a request from the client gets a fresh
// id on the child's connection and its answer goes back under the client's
// own id bytes; a request from a child gets a fresh id towards the client.
// Results and error objects travel as the raw bytes their sender wrote.
package aggregator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Protocol versions the aggregator speaks, oldest first.
var supportedVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// LatestVersion is the newest protocol version the aggregator speaks.
var LatestVersion = supportedVersions[len(supportedVersions)-1]

func isSupported(version string) bool {
	for _, v := range supportedVersions {
		if v == version {
			return true
		}
	}
	return false
}

// Process is a started child server: its pipes and its life. stdio.Process
// is the real one; tests may provide others.
type Process interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	// Done is closed once the process has ended.
	Done() <-chan struct{}
	// Err says how the process ended, naming the server; valid after Done.
	Err() error
	// Stop ends the process (and its process group) and waits for it.
	Stop() error
}

// Options configure an Aggregator.
type Options struct {
	Name      string // serverInfo.name
	Version   string // serverInfo.version
	Separator string // between server key and tool or prompt name
	// StartupTimeout bounds a child's initialize and first lists.
	StartupTimeout time.Duration
	Servers        []config.Server
	Log            *Logger
	// Start starts a child server. It is required.
	Start func(config.Server) (Process, error)
}

// Aggregator is one client session over a fixed set of children.
type Aggregator struct {
	opts     Options
	log      *Logger
	children []*child // in config order

	ctx    context.Context // ends at shutdown
	cancel context.CancelFunc

	reg      atomic.Pointer[registry]
	regMu    sync.Mutex                   // serialises rebuilds; protects warned
	warned   map[string]bool              // name collisions already reported
	handlers sync.WaitGroup               // goroutines serving a request
	ready    atomic.Bool                  // every child has started or failed
	up       atomic.Pointer[jsonrpc.Conn] // the client; nil in Check
	tokens   atomic.Int64                 // progress tokens handed to the client

	mu           sync.Mutex // protects the fields below
	initStarted  bool
	version      string // negotiated with the client
	clientCaps   clientCapabilities
	inflight     map[string]canceler      // client request id -> its cancel
	idle         chan struct{}            // if set, closed when inflight empties
	held         []heldMessage            // child messages kept until the client is initialized
	progress     map[string]progressRoute // our token -> child and its token
	stopping     bool
	clientReady  bool     // notifications/initialized has come
	pendingNotes []string // notifications kept until then
}

// New returns an aggregator for opts.Servers. Nothing starts until Serve or
// Check.
func New(opts Options) *Aggregator {
	if opts.Log == nil {
		opts.Log = NewLogger(io.Discard, "", false)
	}
	if opts.StartupTimeout <= 0 {
		opts.StartupTimeout = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Aggregator{
		opts:     opts,
		log:      opts.Log,
		ctx:      ctx,
		cancel:   cancel,
		warned:   make(map[string]bool),
		inflight: make(map[string]canceler),
		progress: make(map[string]progressRoute),
	}
	for i, s := range opts.Servers {
		a.children = append(a.children, newChild(a, i, s))
	}
	a.reg.Store(&registry{toolsResult: []byte(`{"tools":[]}`), promptsResult: []byte(`{"prompts":[]}`)})
	return a
}

// Serve starts every child and serves the client on in and out until in ends
// or ctx is done. Then it stops every child and returns once they and every
// goroutine it started are gone. A clean end of input returns nil.
func (a *Aggregator) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	up := jsonrpc.NewConn(in, out, jsonrpc.Options{
		Handle:    a.clientMessage,
		Batch:     a.clientBatch,
		Invalid:   a.clientInvalid,
		Unmatched: func(m *jsonrpc.Message) { a.log.Debugf("client answered unknown id %s", m.ID) },
		Cancelled: func(id json.RawMessage, cause error) { sendCancelled(a.upConn(), id, cause) },
	})
	a.up.Store(up)
	a.startChildren()
	readErr := make(chan error, 1)
	go func() { readErr <- up.Run() }()

	var err error
	select {
	case err = <-readErr:
		if errors.Is(err, io.EOF) {
			err = nil
			a.log.Debugf("client closed its input; shutting down")
		}
		a.drain(drainGrace)

	case <-ctx.Done():
		a.log.Debugf("shutting down: %v", context.Cause(ctx))
		up.Close(context.Cause(ctx))
	}
	a.shutdown()
	return err
}

// drainGrace is how long the requests read before the client closed its
// input may take to be answered before the children are stopped. It counts
// against the 5 s in which a shutdown ends (with 2 s + 2 s for a child that
// ignores both its stdin closing and SIGTERM).
const drainGrace = 500 * time.Millisecond

// drain waits up to grace until no client request is in flight.
func (a *Aggregator) drain(grace time.Duration) {
	a.mu.Lock()
	if len(a.inflight) == 0 {
		a.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	a.idle = idle
	a.mu.Unlock()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	}
}

func (a *Aggregator) upConn() *jsonrpc.Conn { return a.up.Load() }

// startChildren spawns every child in parallel.
func (a *Aggregator) startChildren() {
	for _, c := range a.children {
		go c.spawn()
	}
}

// shutdown stops every child at once and waits for them and for every
// request still being served. Calls in flight are not cancelled: a child
// that answers them while it stops (its stdin closed) is still heard, and
// the rest fail when it is gone.
func (a *Aggregator) shutdown() {
	a.mu.Lock()
	a.stopping = true
	a.mu.Unlock()
	defer a.handlers.Wait()
	defer a.cancel()
	var wg sync.WaitGroup
	for _, c := range a.children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stop()
		}()
	}
	wg.Wait()
}

func (a *Aggregator) isStopping() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stopping
}

// goServe runs f as a tracked goroutine, unless shutdown has begun.
func (a *Aggregator) goServe(f func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopping {
		return
	}
	a.handlers.Add(1)
	go func() {
		defer a.handlers.Done()
		f()
	}()
}
