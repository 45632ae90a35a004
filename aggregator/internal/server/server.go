// Package server is what one configured MCP server is to the aggregator:
// its process (spawned when a request first needs it, started again once
// if it exits on the server/discover probe), its connection, the opening
// of its session in its era, its lists, the pace at which its output is
// read, the watch on its end, its stop and the errors that name it.
//
// A Server knows nothing of the client's session it serves: it tells the
// session what happens through Events (a message arrived, a list changed,
// it came up, it was dropped) and asks it only for what Settings give (its
// life, its log, the _meta its own requests carry). The compiler keeps the
// direction: this package never reaches the session.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// State is where a server is in its life.
type State int

const (
	Starting State = iota
	Running        // initialized, lists fetched
	Failed         // dropped: never starts again
	Stopped        // stopped at shutdown, or by a reload
)

func (s State) String() string {
	return [...]string{"starting", "ok", "failed", "stopped"}[s]
}

// ErrShuttingDown is why a server stops, or never starts, when the
// session ends.
var ErrShuttingDown = errors.New("mcp-simple-aggregator is shutting down")

// Events are what a server tells the session of itself. Message and Pace
// run on the server's reader goroutine; the others on whichever goroutine
// the event happens.
type Events interface {
	// Message is a request or notification of the server, other than a
	// list_changed (the server refreshes that list itself, then tells
	// ListChanged).
	Message(m *jsonrpc.Message)
	// Pace holds the server's reader, before it reads its next line,
	// while what it sent the client waits to be written (done: give up).
	Pace(done <-chan struct{})
	// Opened: the session with the server is open, its era known, its
	// lists not fetched yet, so that no change in between is missed.
	Opened()
	// Up: the server runs, its lists fetched.
	Up()
	// ListChanged: a list of the server changed (method: its
	// list_changed notification) and is fetched anew.
	ListChanged(method string)
	// Dropped: the server failed or was stopped (why: ErrShuttingDown at
	// shutdown), after it is marked so, its connection closed and its
	// waiters released (what the session still holds of it, its requests
	// to the client and its tasks, ends here); wasRunning says whether it
	// was up.
	Dropped(why error, wasRunning bool)
}

// Life is the life of the session a server serves.
type Life interface {
	Context() context.Context // ends when the session's shutdown begins
	Go(f func()) bool         // runs f on a goroutine the session waits for; false once it ends
	Stopping() bool           // the shutdown has begun
	Hurried() <-chan struct{} // closed when the shutdown may not wait politely
}

// Log is where a server's warnings and errors are written.
type Log interface {
	Debugf(format string, args ...any)
	Warnf(format string, args ...any)
	Errorf(format string, args ...any)
}

// Settings are what every server of one session shares: how its process
// starts, the bounds of its messages and its start, its pace, its life.
type Settings struct {
	Start          func(config.Server) (stdio.Started, error)
	StartupTimeout time.Duration // its initialize and first lists; a list refresh
	ProbeTimeout   time.Duration // its server/discover probe
	MaxMessageSize int
	MaxQueue       int // of lines waiting to be written to it
	Pacing         Pacing
	Memory         Memory // what it declared when it last started; may be nil
	Life           Life
	Log            Log
	// Meta is the _meta a modern server's own requests (its probe, its
	// lists, its listens) carry: the client's, as a request has it.
	Meta func() []byte
	// Cancelled is handed to its connection (jsonrpc.Options).
	Cancelled func(via *jsonrpc.Lane, id json.RawMessage, cause error)
}

// exitGrace is how long a server's watcher waits, once its stdout
// ended, for its exit (whose status says more than the end of a pipe),
// and, once it exited, for its reader to take in what it wrote before.
const exitGrace = time.Second

// Server is one configured server.
type Server struct {
	key    string
	cfg    config.Server
	set    *Settings
	events Events

	spawned  chan struct{} // closed once spawn has finished, either way, or it never will (settle)
	inited   chan struct{} // closed once initialize was answered or failed
	ready    chan struct{} // closed once running with lists fetched, or failed
	once     struct{ spawn, inited, ready, start, recall sync.Once }
	launched atomic.Bool     // a request needed it: its launch has begun
	after    <-chan struct{} // closed once the process it replaces has stopped (a reload); nil: none

	proc   stdio.Started // set before spawned closes; nil if spawn failed
	conn   *jsonrpc.Conn // likewise
	gone   chan struct{} // closed when the watcher has seen it end
	ended  chan struct{} // closed when it is dropped or stopped: failure is set
	unread chan struct{} // closed when the reader of conn has returned, answers delivered

	refreshing sync.Mutex               // one list refresh at a time, so an older one never wins
	refreshes  map[string]*refreshState // by list_changed method
	modern     atomic.Bool              // it speaks the modern era; set before it is inited
	notifies   notifyBucket             // the rate of its messages (pace.go); its reader's only
	lineCost   float64                  // what the last line cost (0: 1), for pace; its reader's only
	scope      []byte                   // its plan's Scope, set once at Launch
	recalled   *Remembered              // what Memory kept of it when the session began (once.recall); nil: nothing
	keeping    sync.Mutex               // one Keep at a time (memory.go); protects kept
	kept       []byte                   // the record it last kept

	mu           sync.Mutex // protects the fields below
	state        State
	failure      error // why it was dropped or stopped
	startedAt    time.Time
	startup      time.Duration
	version      string
	caps         capabilities.Server
	declared     []byte // its capabilities, raw, as Memory keeps them
	instructions string
	lists        Lists
	reported     map[string]bool   // malformed entries already reported (lists.go): a list fetched again warns once
	stored       map[string]uint64 // by list method, the fetch whose list is stored (lists.go)
	logLevel     string            // the level last set at it (SetLevel)
}

// New is the server of config entry cfg, not started: Launch starts it.
// after, when not nil, is closed once the process it replaces has stopped.
func New(cfg config.Server, set *Settings, events Events, after <-chan struct{}) *Server {
	s := &Server{
		key: cfg.Key, cfg: cfg, set: set, events: events, after: after,
		spawned: make(chan struct{}),
		inited:  make(chan struct{}),
		ready:   make(chan struct{}),
		gone:    make(chan struct{}),
		ended:   make(chan struct{}),
		unread:  make(chan struct{}),
	}
	s.refreshes = make(map[string]*refreshState, len(Kinds))
	for _, k := range Kinds {
		s.refreshes[k.Changed] = &refreshState{}
	}
	return s
}

// Conn is the server's connection; nil until it is spawned, or when it
// could not be.
func (s *Server) Conn() *jsonrpc.Conn { return s.conn }

// Modern reports whether the server speaks the 2026-07-28 era; false
// until its probe said so.
func (s *Server) Modern() bool { return s.modern.Load() }

// Launched reports whether a request needed the server: its launch began.
func (s *Server) Launched() bool { return s.launched.Load() }

// Ready is closed once the server runs with its lists fetched, or has
// failed.
func (s *Server) Ready() <-chan struct{} { return s.ready }

func (s *Server) markInited() { s.once.inited.Do(func() { close(s.inited) }) }
func (s *Server) markReady()  { s.once.ready.Do(func() { close(s.ready) }) }

// Status is a snapshot of a server's state.
type Status struct {
	State        State
	Failure      error
	Version      string
	Modern       bool // it speaks the 2026-07-28 era
	Caps         capabilities.Server
	Instructions string
	Startup      time.Duration
	Lists        Lists
}

// Initialized reports whether it answered initialize and is not gone.
func (st Status) Initialized() bool {
	return st.Version != "" && (st.State == Starting || st.State == Running)
}

// Dropped reports whether it failed or was stopped.
func (st Status) Dropped() bool { return st.State == Failed || st.State == Stopped }

// Status is a snapshot of the server's state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Status{State: s.state, Failure: s.failure, Version: s.version, Modern: s.modern.Load(),
		Caps: s.caps, Instructions: s.instructions, Startup: s.startup, Lists: s.lists}
}
