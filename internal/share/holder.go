package share

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/stdio"
)

// The holder: a process of this binary, detached from every session, that
// listens on holder.sock in the socket directory, keeps one pool of
// server processes per config entry, and exits when it holds nothing.
//
// One holder at a time: it takes holder.lock (an exclusive, non-blocking
// lock) before it binds, and removes a stale socket only under it. A
// holder that finds the lock taken exits at once (ErrHolderRunning); the
// session connects to the one that holds it.
//
// In a pool, a 2025-era server is shared by the sessions whose initialize
// is the same (protocol version and capabilities) and, when the client
// declared roots, whose roots are the same: the holder asks the session
// roots/list before it picks the process. A 2026-07-28 server (it answers
// server/discover) is one process for the entry. The first session of a
// pool has a process started at once, as its connection opens, so that
// a server that cannot start fails that session's start.

// SocketName and LockName are the holder's files in the socket directory.
const (
	SocketName = "holder.sock"
	LockName   = "holder.lock"
)

// ErrHolderRunning is RunHolder's error when another holder holds the lock.
var ErrHolderRunning = errors.New("share: another holder is running")

// HolderOptions configure RunHolder.
type HolderOptions struct {
	// Dir is the socket directory (Dir()); it is prepared and checked.
	Dir string
	// Start starts the server a header names.
	Start func(h *Header) (stdio.Started, error)
	// Logf logs one line.
	Logf func(format string, args ...any)
	// Ready is called once the holder listens.
	Ready func()
	// RootsWait bounds the wait for a session's roots/list answer, after
	// which the session gets a process of its own; 0 means 10 s.
	RootsWait time.Duration
}

// holder is the running holder.
type holder struct {
	opts HolderOptions
	ln   net.Listener

	// mu protects the fields below and every proc's and pool's. Lock
	// order: peer.mu, then holder.mu, then Shared.mu; none is held while
	// waiting for a peer.
	mu    sync.Mutex
	pools map[string]*pool  // by entry key; kept for the holder's life (a pool without processes is small, and knows its server's era)
	conns int               // open connections
	open  map[net.Conn]bool // them
	procs int               // server processes up
	done  chan struct{}     // closed when it holds nothing
	idle  time.Duration     // the longest idle time a session asked for
	// started is signalled (on mu) when a process started as a session
	// connected is in its pool (pool.starting).
	started *sync.Cond
}

// era of a pool's server, as far as known.
type era int

const (
	eraUnknown era = iota
	eraLegacy
	eraModern
)

// pool holds the processes of one config entry.
type pool struct {
	key         string
	era         era
	discoverErr []byte           // a legacy server's error answer to server/discover
	byInit      map[string]*proc // a legacy server's processes, by initialize key
	modern      *proc            // a modern server's one process
	spare       *proc            // started, not yet given to a session
	unkeyed     map[*proc]bool   // held by a session, not keyed yet (its probe, or started as it connected)
	peers       int              // connections of this entry
	starting    int              // processes being started as a session connects
}

// proc is one server process of a pool.
type proc struct {
	pool    *pool
	sh      *Shared
	p       stdio.Started
	pid     string // for the log
	initKey string // in pool.byInit under it ("" none)
	users   int    // sessions using it (attached, or holding it as a probe)
	idle    time.Duration
	timer   *time.Timer // its idle timer, while users is 0
	gone    bool        // ended or stopped: out of its pool
	base    string      // its initialize key without roots (baseKey)
	probing bool        // a session's server/discover probe is at it
}

// RunHolder runs the holder until it holds nothing or ctx ends. It
// returns ErrHolderRunning when another holder holds the lock.
func RunHolder(ctx context.Context, opts HolderOptions) error {
	if opts.RootsWait <= 0 {
		opts.RootsWait = 10 * time.Second
	}
	if err := PrepareDir(opts.Dir); err != nil {
		return err
	}
	unlock, err := lockFile(filepath.Join(opts.Dir, LockName))
	if err != nil {
		return err
	}
	defer unlock()
	sock := filepath.Join(opts.Dir, SocketName)
	os.Remove(sock) // stale: its holder has released the lock
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("share: listen on %s: %w", sock, err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	defer os.Remove(sock) // before the lock goes: under it
	h := &holder{opts: opts, ln: ln, pools: map[string]*pool{}, done: make(chan struct{}), open: map[net.Conn]bool{}}
	h.started = sync.NewCond(&h.mu)
	opts.Logf("listening on %s", sock)
	if opts.Ready != nil {
		opts.Ready()
	}
	go h.accept()
	select {
	case <-h.done:
		opts.Logf("holds nothing: exiting")
	case <-ctx.Done():
		opts.Logf("stopping: %v", context.Cause(ctx))
	}
	ln.Close()
	// Sessions first, with no closing word: to them the holder ended, and
	// they connect anew (to a new holder) on their next request, rather
	// than taking the servers' stop for their end.
	h.mu.Lock()
	for nc := range h.open {
		nc.Close()
	}
	h.mu.Unlock()
	h.stopAll()
	return nil
}

func (h *holder) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		h.conns++
		h.open[c] = true
		h.mu.Unlock()
		go h.serve(c)
	}
}

// checkEmpty closes done when nothing is held; under h.mu.
func (h *holder) checkEmpty() {
	if h.conns == 0 && h.procs == 0 {
		select {
		case <-h.done:
		default:
			close(h.done)
		}
	}
}

// stopAll stops every process, and waits for them.
func (h *holder) stopAll() {
	h.mu.Lock()
	var all []*proc
	for _, pl := range h.pools {
		for _, pr := range pl.all() {
			all = append(all, pr)
		}
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range all {
		wg.Add(1)
		go func() { defer wg.Done(); pr.p.Stop() }()
	}
	wg.Wait()
}

func (pl *pool) all() []*proc {
	var out []*proc
	for _, pr := range pl.byInit {
		out = append(out, pr)
	}
	if pl.modern != nil {
		out = append(out, pl.modern)
	}
	if pl.spare != nil {
		out = append(out, pl.spare)
	}
	for pr := range pl.unkeyed {
		out = append(out, pr)
	}
	return out
}

// ended reports whether pr's process has ended (its end may not be
// handled yet).
func (pr *proc) ended() bool {
	select {
	case <-pr.p.Done():
		return true
	case <-pr.sh.conn.Done():
		return true
	default:
		return false
	}
}

// start starts a process for pool pl as header hd asks.
func (h *holder) start(pl *pool, hd *Header) (*proc, error) {
	p, err := h.opts.Start(hd)
	if err != nil {
		return nil, err
	}
	pr := &proc{pool: pl, p: p, idle: hd.Idle()}
	if pider, ok := p.(interface{ Pid() int }); ok {
		pr.pid = strconv.Itoa(pider.Pid())
	}
	name := fmt.Sprintf("server %q (pid %s)", hd.Key, pr.pid)
	pr.sh = newShared(name, h.opts.Logf)
	pr.sh.conn = jsonrpc.NewConn(p.Stdout(), p.Stdin(), pr.sh.serverOptions())
	h.mu.Lock()
	h.procs++
	h.mu.Unlock()
	h.opts.Logf("%s started for entry %s", name, pl.key[:8])
	go pr.sh.conn.Run()
	go func() {
		select {
		case <-p.Done():
		case <-pr.sh.conn.Done():
		}
		p.Stop()
		why := "the shared server ended"
		if err := p.Err(); err != nil {
			why += ": " + err.Error()
		}
		pr.sh.conn.Close(errors.New(why))
		h.opts.Logf("%s ended: %v", name, p.Err())
		pr.sh.end(why)
		h.mu.Lock()
		h.drop(pr)
		h.procs--
		h.checkEmpty()
		h.mu.Unlock()
	}()
	return pr, nil
}

// drop takes pr out of its pool; under h.mu.
func (h *holder) drop(pr *proc) {
	pr.gone = true
	if pr.timer != nil {
		pr.timer.Stop()
	}
	pl := pr.pool
	if pl.spare == pr {
		pl.spare = nil
	}
	if pl.modern == pr {
		pl.modern = nil
	}
	if pr.initKey != "" && pl.byInit[pr.initKey] == pr {
		delete(pl.byInit, pr.initKey)
	}
	delete(pl.unkeyed, pr)
}

// isGone says whether pr is nil or out of its pool (drop: the process
// ended, or was of no use); it takes h.mu, under which drop marks it.
func (h *holder) isGone(pr *proc) bool {
	if pr == nil {
		return true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return pr.gone
}

// keyed says pr is in its pool under a key now (byInit or modern); under h.mu.
func (h *holder) keyed(pr *proc) { delete(pr.pool.unkeyed, pr) }

// use marks one more user of pr; under h.mu.
func (h *holder) use(pr *proc, idle time.Duration) {
	pr.users++
	pr.idle = max(pr.idle, idle)
	if pr.timer != nil {
		pr.timer.Stop()
		pr.timer = nil
	}
}

// release marks one user less of pr: with none left it stays up its idle
// time, then stops. Under h.mu.
func (h *holder) release(pr *proc) {
	pr.users--
	if pr.users > 0 || pr.gone {
		return
	}
	if pl := pr.pool; pl.unkeyed[pr] { // held, never keyed: the spare, or idle out
		delete(pl.unkeyed, pr)
		if pl.spare == nil && pr.sh.recordedAnswer() == nil && pr.sh.count() == 0 {
			pl.spare = pr
		}
	}
	var timer *time.Timer
	timer = time.AfterFunc(pr.idle, func() {
		h.mu.Lock()
		if pr.timer != timer || pr.users > 0 || pr.gone {
			h.mu.Unlock()
			return
		}
		h.drop(pr)
		h.mu.Unlock()
		h.opts.Logf("%s idle for %v: stopping it", pr.sh.name, pr.idle)
		pr.p.Stop()
	})
	pr.timer = timer
}

// take gives a session a process of pool pl that no session has
// initialized: the spare, else a new one. Under no lock.
func (h *holder) take(pl *pool, hd *Header) (*proc, error) {
	h.mu.Lock()
	if pr := pl.spare; pr != nil && !pr.gone {
		pl.spare = nil
		pl.unkeyed[pr] = true
		h.use(pr, hd.Idle())
		h.mu.Unlock()
		return pr, nil
	}
	h.mu.Unlock()
	pr, err := h.start(pl, hd)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	pl.unkeyed[pr] = true
	h.use(pr, hd.Idle())
	h.mu.Unlock()
	return pr, nil
}

// serve serves one session's connection.
func (h *holder) serve(nc net.Conn) {
	defer func() {
		nc.Close()
		h.mu.Lock()
		delete(h.open, nc)
		h.conns--
		h.checkEmpty()
		h.mu.Unlock()
	}()
	br := bufio.NewReader(nc)
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hd Header
	if err := readLine(br, &hd); err != nil {
		h.opts.Logf("a connection sent no header: %v", err)
		return
	}
	nc.SetReadDeadline(time.Time{})
	ack := Ack{V: HeaderVersion, Pid: os.Getpid()}
	if hd.V != HeaderVersion {
		ack.Error = fmt.Sprintf("holder speaks header version %d, not %d", HeaderVersion, hd.V)
		writeLine(nc, ack)
		return
	}
	key := hd.EntryKey()
	h.mu.Lock()
	h.idle = max(h.idle, hd.Idle())
	pl := h.pools[key]
	if pl == nil {
		pl = &pool{key: key, byInit: map[string]*proc{}, unkeyed: map[*proc]bool{}}
		h.pools[key] = pl
	}
	pl.peers++
	need := len(pl.all()) == 0 && pl.starting == 0
	if need {
		pl.starting++
	}
	h.mu.Unlock()
	p := &peer{h: h, pl: pl, hd: &hd, nc: nc}
	defer p.end()
	if need { // the first of its entry: started now, so that a failure is this session's
		pr, err := h.take(pl, &hd)
		h.mu.Lock()
		pl.starting--
		h.started.Broadcast()
		h.mu.Unlock()
		if err != nil {
			ack.Error = err.Error()
			writeLine(nc, ack)
			h.opts.Logf("session pid %d: server %q: %v", hd.Pid, hd.Key, err)
			return
		}
		p.pr = pr // held by this session until it is keyed
	}
	if err := writeLine(nc, ack); err != nil {
		return
	}
	p.s = &Session{name: fmt.Sprintf("session pid %d", hd.Pid), close: p.close}
	p.s.conn = jsonrpc.NewConn(br, nc, sessionOptions(p.handle))
	h.opts.Logf("session pid %d: server %q (entry %s)", hd.Pid, hd.Key, key[:8])
	p.s.conn.Run()
}
