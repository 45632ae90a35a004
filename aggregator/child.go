package aggregator

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

type childState int

const (
	stateStarting childState = iota
	stateRunning             // initialized, lists fetched
	stateFailed              // dropped: never starts again
	stateStopped             // stopped at shutdown
)

func (s childState) String() string {
	return [...]string{"starting", "ok", "failed", "stopped"}[s]
}

// errStartupTimeout is the cause of a context that bounds a child's start.
var errStartupTimeout = errors.New("start-up timeout")

// child is one configured server: its process, its connection and its
// side of the conversation (its state, its lists, its requests to the
// client). Other files use its methods; only its own files touch c.mu.
type child struct {
	host   *childHost
	key    string
	server config.Server

	spawned  chan struct{} // closed once spawn has finished, either way, or it never will (settle)
	inited   chan struct{} // closed once initialize was answered or failed
	ready    chan struct{} // closed once running with lists fetched, or failed
	once     struct{ spawn, inited, ready, start sync.Once }
	launched atomic.Bool              // a request needed it: its launch has begun (startup.go)
	after    <-chan struct{}          // closed once the process it replaces has stopped (a reload); nil: none
	quiet    atomic.Bool              // started by a reload, which announces its lists itself
	view     atomic.Pointer[toolView] // what its entry exposes of its tools (filter.go); a reload may swap it

	proc   Process       // set before spawned closes; nil if spawn failed
	conn   *jsonrpc.Conn // likewise
	up     *jsonrpc.Lane // its lane into the client's queue; nil in Check
	gone   chan struct{} // closed when the watcher has seen the child end
	ended  chan struct{} // closed when it is dropped or stopped: failure is set
	unread chan struct{} // closed when the reader of conn has returned, answers delivered

	incoming     idTable[*childRequest]   // its requests relayed to the client, by its id
	progress     idTable[*call]           // the calls in flight to it that carry a progress token, by jsonrpc.Key
	tasks        idTable[*task]           // its tasks known to the client, by its task id
	clientTasks  atomic.Int64             // the tasks the client runs for it (client_tasks.go)
	heldStatuses heldStatuses             // its statuses of tasks not known yet
	listing      taskListing              // its tasks/list passes: which tasks it still keeps (tasks_list.go)
	refreshing   sync.Mutex               // one list refresh at a time, so an older one never wins
	refreshes    map[string]*refreshState // by list_changed method
	modern       atomic.Bool              // it speaks the modern era; set before it is inited
	exchanges    exchangeSet              // a modern client's calls to it that may take input (legacy child)
	logging      atomic.Int32             // a modern client's calls in flight to it that asked for logs (legacy child)
	notifies     notifyBucket             // the rate of its messages (pace.go); its reader's only
	lineCost     float64                  // what handle found the last line to cost (0: 1), for pace; its reader's only
	elicitations urlElicitations          // its URL elicitations the client may see completed (owners.go)

	mu           sync.Mutex // protects the fields below
	state        childState
	failure      error // why it was dropped or stopped
	startedAt    time.Time
	startup      time.Duration
	version      string
	caps         capabilities.Server
	instructions string
	lists        childLists
	hints        childHints
	logLevel     string // the level last set at it (child_modern.go's setLevel)
}

func newChild(host *childHost, s config.Server) *child {
	c := &child{
		host: host, key: s.Key, server: s,
		spawned: make(chan struct{}),
		inited:  make(chan struct{}),
		ready:   make(chan struct{}),
		gone:    make(chan struct{}),
		ended:   make(chan struct{}),
		unread:  make(chan struct{}),
	}
	c.refreshes = make(map[string]*refreshState, len(listKinds))
	for _, k := range listKinds {
		c.refreshes[k.changed] = &refreshState{}
	}
	c.view.Store(newToolView(s.Tools))
	return c
}

// spawnOnce starts the process and its connection (spawn), once, unless
// settle said it never will.
func (c *child) spawnOnce() { c.once.spawn.Do(c.spawn) }

// settle makes a child that was never spawned stay so (at shutdown, or
// when a reload retires it): it reports whether it was never spawned.
func (c *child) settle() (never bool) {
	c.once.spawn.Do(func() {
		never = true
		close(c.gone)
		close(c.spawned)
	})
	return never
}

// spawn starts the process and its connection, once the process it
// replaces has stopped (what that held, a lock file or a port, is free).
func (c *child) spawn() {
	defer close(c.spawned)
	if c.after != nil {
		select {
		case <-c.after:
		case <-c.host.life.ctx.Done():
		}
	}
	if c.host.life.ctx.Err() != nil { // the session is ending: nothing more starts
		close(c.gone)
		c.drop(errShuttingDown)
		return
	}
	c.mu.Lock()
	c.startedAt = time.Now()
	c.mu.Unlock()
	proc, err := c.host.settings.start(c.server)
	if err != nil {
		close(c.gone)
		c.drop(err)
		return
	}
	// A legacy server may exit on the server/discover probe: it is then
	// started again (once) and initialized.
	c.proc = stdio.NewRestartable(proc, func() (stdio.Started, error) { return c.host.settings.start(c.server) })
	c.conn = jsonrpc.NewConn(c.proc.Stdout(), c.proc.Stdin(), jsonrpc.Options{
		// Writes to a child never block: one that stops reading its stdin
		// must not stall the client or the other children.
		Queue:           true,
		MaxQueued:       c.host.settings.maxQueue,
		CheckDuplicates: true, // see duplicates.go
		Handle:          c.handle,
		Invalid:         c.invalid,
		MaxLineSize:     c.host.settings.maxMessageSize,
		Oversized:       c.oversized,
		Unmatched: func(m *jsonrpc.Message) {
			c.host.log.Debugf("server %q: dropped the answer to id %s (cancelled or timed out)", c.key, m.ID)
		},
		Pace:      c.pace,
		Watch:     watchHooks(fmt.Sprintf("server %q", c.key)),
		Cancelled: tellCancelled,
	})
	go func() {
		defer close(c.unread)
		c.conn.Run()
	}()
	go c.watch()
	c.host.log.Debugf("server %q: started %s", c.key, c.server.Command)
}

// pace holds the child's reader while more than laneRoom bytes of what it
// sent the client wait to be written (the client's pace is the child's),
// and while it sends messages faster than notifyRate (pace.go): an answer
// to one of the aggregator's requests earns, every other line (a request,
// a notification, a line that is not JSON-RPC or is blank, an answer to
// nothing) costs.
func (c *child) pace(answered bool) {
	if c.up != nil {
		c.up.WaitRoom(laneRoom, c.host.life.ctx.Done())
	}
	cost := max(c.lineCost, 1)
	c.lineCost = 0
	p := c.host.settings.pacing
	if answered {
		c.notifies.answered(p.clock())
		return
	}
	if d := c.notifies.take(p.clock(), cost); d > 0 {
		p.sleep(d, c.host.life.ctx.Done())
	}
}

// invalid handles a line of the child that is not a valid message; the
// warning quotes the line (clipLine), escapes and all.
func (c *child) invalid(line []byte, m *jsonrpc.Message, err error) {
	var id []byte // null: a request with a null or malformed id still gets an answer
	switch {
	case errors.Is(err, jsonrpc.ErrDuplicateMember):
		c.host.log.Warnf("server %q: refused a message in which %v (clients disagree on which copy counts): %s", c.key, err, clipLine(line))
		id = m.ID // the message is whole: its id was read
	case errors.Is(err, jsonrpc.ErrTooDeep):
		c.host.log.Warnf("server %q: refused a message %v: %s", c.key, err, clipLine(line))
		id = m.ID // its id, if it has one, was read
	default:
		c.host.log.Warnf("server %q: skipped a line that is not JSON-RPC (%v): %s", c.key, err, clipLine(line))
	}
	if m != nil && m.Method != "" && !isBrokenNotification(line, m) {
		c.conn.Write(errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error()))
	}
}

// oversized drops the child for a line longer than MaxMessageSize: what
// it sends can no longer be trusted to be whole.
func (c *child) oversized(head []byte, size int64) error {
	err := c.errorf("sent a message of %d bytes, more than the limit of %d (--max-message-size)", size, c.host.settings.maxMessageSize)
	c.drop(err)
	return err
}

// watch waits for the child to end, at any time, and drops it.
func (c *child) watch() {
	defer close(c.gone)
	select {
	case <-c.proc.Done():
		// Let the reader take in what the child wrote before it exited.
		select {
		case <-c.conn.Done():
		case <-time.After(c.host.settings.graces.forExit()):
		}
		err := c.proc.Err()
		if err == nil {
			err = c.errorf("exited")
		}
		c.drop(err)
	case <-c.conn.Done():
		// Its stdout ended: usually because it is exiting, and then its
		// exit status says more than the end of a pipe.
		select {
		case <-c.proc.Done():
			if err := c.proc.Err(); err != nil {
				c.drop(err)
				break
			}
			c.drop(c.errorf("exited"))
		case <-time.After(c.host.settings.graces.forExit()):
			c.drop(c.errorf("closed its stdout: %w", c.conn.Err()))
		}
		c.proc.Stop()
	}
}

// drop ends the child for good because of err: its calls fail, naming it;
// its requests to the client are cancelled; its entries leave the
// registry, and the client hears that lists changed. At shutdown the
// child is only marked stopped: its connection stays open, so that
// answers it sends while it stops are still relayed.
func (c *child) drop(err error) {
	c.mu.Lock()
	if c.state == stateFailed || c.state == stateStopped {
		c.mu.Unlock()
		return
	}
	if c.host.life.isStopping() {
		c.state = stateStopped
		c.failure = c.errorf("was stopped: %w", errShuttingDown)
		close(c.ended)
		c.mu.Unlock()
		for _, r := range c.incoming.takeAll() { // their timers end with the session
			r.cancel(errShuttingDown)
		}
		c.markInited()
		c.markReady()
		return
	}
	was := c.state
	c.state, c.failure = stateFailed, err
	close(c.ended)
	caps := c.caps
	c.mu.Unlock()

	c.host.log.Errorf("server %q dropped: %v", c.key, err)
	for _, r := range c.incoming.takeAll() {
		r.cancel(c.errorf("is gone"))
	}
	c.failTasks(toldClient(err))
	if c.conn != nil {
		c.conn.Close(err)
		// Reap it and whatever is left of its group; refused only once
		// shutdown has begun, which stops it too.
		c.host.life.goServe(func() { c.proc.Stop() })
	}
	c.markInited()
	c.markReady()
	if was == stateRunning {
		c.host.session.rebuild()
		announceLists(caps, c.host.session.tellClient)
	}
}

func (c *child) markInited() { c.once.inited.Do(func() { close(c.inited) }) }
func (c *child) markReady()  { c.once.ready.Do(func() { close(c.ready) }) }

// stop stops the child at shutdown, politely unless or until the shutdown
// is hurried, and waits until it is gone, its reader has delivered its
// last answers and its connection writes no more.
func (c *child) stop() {
	if c.settle() {
		c.drop(errShuttingDown) // marks it stopped
		return
	}
	<-c.spawned
	if c.proc == nil {
		return
	}
	c.drop(errShuttingDown) // marks it stopped: a shutdown is no failure
	c.stopProcess()
}

// stopProcess stops the child's process, politely unless or until the
// shutdown is hurried, and waits until it is gone, its reader has
// delivered its last answers and its connection writes no more.
func (c *child) stopProcess() {
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.proc.Stop()
	}()
	select {
	case <-stopped:
	case <-c.host.life.hurry:
		c.proc.Terminate()
		<-stopped
	}
	<-c.gone
	<-c.unread
	c.conn.WaitWrites(0) // the process is gone: a write still waiting fails
}

// explain calls say with the error to give the client for a request the
// child could not answer (err: why the call ended). When the child's
// connection closed before the watcher said how the child ended, that is
// awaited first on a goroutine of its own (see watch: within a second),
// so that no reader ever waits for a child's end.
func (c *child) explain(err error, say func(error)) {
	if errors.Is(err, jsonrpc.ErrClosed) && c.failed() == nil && c.host.life.goServe(func() { say(c.lostAtEnd(err)) }) {
		return
	}
	say(c.lost(err))
}

// lostAtEnd is lost once the watcher has said how the child ended, when
// err says that its connection closed. It may wait: never on a reader.
func (c *child) lostAtEnd(err error) error {
	if errors.Is(err, jsonrpc.ErrClosed) {
		<-c.ended
	}
	return c.lost(err)
}

// lost is the error to give the client for a call that the child could not
// answer: how the child ended, once it has, else err naming the child.
func (c *child) lost(err error) error {
	if failure := c.failed(); failure != nil {
		return toldClient(failure)
	}
	if errors.Is(err, jsonrpc.ErrQueueFull) {
		return c.errorf("is not reading its input: %w", err)
	}
	var named *serverError
	if errors.As(err, &named) && named.key == c.key {
		return err
	}
	return c.errorf("failed: %w", err)
}

// serverError is an error about one server that names it: "server "KEY"
// did ...".
type serverError struct {
	key string
	err error // what it did
}

func (e *serverError) Error() string { return fmt.Sprintf("server %q %v", e.key, e.err) }
func (e *serverError) Unwrap() error { return e.err }

// errorf returns a *serverError naming the child: format says what it did.
func (c *child) errorf(format string, args ...any) error {
	return &serverError{key: c.key, err: fmt.Errorf(format, args...)}
}

func (c *child) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failure
}

// childStatus is a snapshot of a child's state.
type childStatus struct {
	state        childState
	failure      error
	version      string
	caps         capabilities.Server
	instructions string
	startup      time.Duration
	tools        []string // the child's own tool names
}

func (c *child) status() childStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := childStatus{state: c.state, failure: c.failure, version: c.version, caps: c.caps, instructions: c.instructions, startup: c.startup}
	for _, t := range c.lists.tools {
		s.tools = append(s.tools, t.name)
	}
	return s
}

// running reports whether the child serves requests.
func (c *child) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateRunning
}

// initialized reports whether the child has answered initialize and is not
// gone.
func (c *child) initialized() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version != "" && (c.state == stateStarting || c.state == stateRunning)
}

// dropped reports whether the child failed or was stopped.
func (c *child) dropped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateFailed || c.state == stateStopped
}

func (c *child) capabilities() capabilities.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caps
}
