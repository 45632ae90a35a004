package share

import (
	"bufio"
	"context"
	"encoding/json"
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

// peer is a session's connection, before and after it is attached to a
// process: the first request picks the process (initialize, by its key;
// server/discover, by the server's era).
type peer struct {
	h  *holder
	pl *pool
	hd *Header
	nc net.Conn
	s  *Session

	mu      sync.Mutex         // protects the fields below
	state   peerState          //
	pending []*jsonrpc.Message // arrived while a process is picked
	pr      *proc              // the process it uses (attached, or probing)
	probeID []byte             // the server-side id of its server/discover probe
	rooted  *rooted            // a session that declared roots, keyed by them once known
}

type peerState int

const (
	fresh    peerState = iota // nothing asked yet
	picking                   // a process is being picked: messages wait
	probing                   // its server/discover is at the server
	keying                    // answered initialize, its roots are asked: messages wait
	attached                  // messages go to pr.sh
)

// handle takes in a message of the session. Before the session is
// attached, a message may be kept past the call (waiting, or taken in on
// another goroutine): it is copied then, as jsonrpc does not promise
// that a message's bytes outlive its Handle call.
func (p *peer) handle(m *jsonrpc.Message) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.state != attached {
		m = &jsonrpc.Message{ID: clone(m.ID), Method: m.Method, Params: clone(m.Params)}
	}
	p.dispatch(m)
}

// dispatch routes m by the peer's state; under p.mu.
func (p *peer) dispatch(m *jsonrpc.Message) {
	switch p.state {
	case attached:
		if r := p.rooted; r != nil && !r.asked && m.Method == "notifications/initialized" {
			r.asked = true
			go p.rekey(p.pr, r)
		}
		p.pr.sh.fromSession(p.s, m)
		return
	case keying:
		p.pending = append(p.pending, m)
		if r := p.rooted; !r.asked && m.Method == "notifications/initialized" {
			r.asked = true
			go p.keyRooted(r)
		}
		return
	case picking:
		p.pending = append(p.pending, m)
		return
	case probing:
		if m.Method == "initialize" && m.IsRequest() {
			// The session gave up on its probe (a legacy server ignores
			// server/discover): so does the holder.
			if p.pr.sh.conn.Forget(p.probeID) {
				p.h.mu.Lock()
				p.pr.probing = false
				if p.pl.era == eraUnknown {
					p.pl.era = eraLegacy
				}
				p.h.mu.Unlock()
				p.state = fresh
				break
			}
		}
		p.pending = append(p.pending, m)
		return
	}
	switch {
	case m.IsRequest() && m.Method == "initialize":
		p.state = picking
		go p.initialize(m)
	case m.IsRequest() && m.Method == "server/discover":
		p.discover(m)
	case m.IsRequest() && m.Method == "ping":
		p.s.conn.Reply(m.ID, []byte(`{}`))
	case m.IsRequest():
		p.s.conn.ReplyError(m.ID, errObj(codeInvalid, "the holder of shared servers expects initialize or server/discover first"))
	}
}

// couldNotStart answers the session's request m with the server's start
// error, and lets the session try afresh; under p.mu.
func (p *peer) couldNotStart(m *jsonrpc.Message, err error) {
	p.s.conn.ReplyError(m.ID, errObj(codeInternal, "the holder could not start the server: "+err.Error()))
	p.flush(fresh)
}

// flush sets the state and dispatches what waited; under p.mu.
func (p *peer) flush(state peerState) {
	p.state = state
	for len(p.pending) > 0 && p.state != picking && p.state != probing && p.state != keying {
		m := p.pending[0]
		p.pending = p.pending[1:]
		p.dispatch(m)
	}
}

var errNoAnswer = []byte(`{"code":-32601,"message":"Method not found"}`)

// discover answers a session's server/discover: a modern server's process
// gets the session; a legacy server's recorded error answers it; an
// unknown server is probed. Under p.mu.
func (p *peer) discover(m *jsonrpc.Message) {
	h := p.h
	h.mu.Lock()
	e, recorded := p.pl.era, p.pl.discoverErr
	h.mu.Unlock()
	switch e {
	case eraLegacy:
		if recorded == nil {
			recorded = errNoAnswer
		}
		p.s.conn.ReplyError(m.ID, recorded)
		return
	case eraModern:
		p.state = picking
		held := p.pr
		p.pr = nil
		go func() {
			pr, err := p.modernProc(held)
			p.mu.Lock()
			defer p.mu.Unlock()
			if err != nil {
				p.couldNotStart(m, err)
				return
			}
			p.attach(pr)
			pr.sh.forward(p.s, m, nil)
			p.flush(attached)
		}()
		return
	}
	p.state = picking
	held := p.pr
	go func() {
		pr, err := held, error(nil)
		if h.isGone(pr) {
			pr, err = h.take(p.pl, p.hd)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil {
			p.couldNotStart(m, err)
			return
		}
		p.pr = pr
		id := clone(m.ID)
		probeID, err := pr.sh.conn.Go("server/discover", m.Params, func(resp *jsonrpc.Message, err error) {
			go p.probed(pr, id, resp, err)
		})
		if err != nil {
			p.s.conn.ReplyError(m.ID, errObj(codeInternal, "the shared server ended: "+err.Error()))
			p.flush(fresh)
			return
		}
		p.probeID = probeID
		p.state = probing
		h.mu.Lock()
		pr.probing = true
		h.mu.Unlock()
	}()
}

// probed takes the server's answer to the session's probe.
func (p *peer) probed(pr *proc, id []byte, resp *jsonrpc.Message, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.h
	h.mu.Lock()
	pr.probing = false
	h.mu.Unlock()
	if err != nil { // the server ended on it: a legacy server that exits on an unknown method
		h.mu.Lock()
		p.pl.era = eraLegacy
		h.drop(pr) // no session may take it meanwhile
		h.mu.Unlock()
		p.s.close("the server ended on server/discover", true)
		return
	}
	supported, _ := jsonrpc.Member(resp.Result, "supportedVersions")
	if resp.Error == nil && supported != nil {
		h.mu.Lock()
		p.pl.era = eraModern
		if p.pl.modern == nil || p.pl.modern.gone {
			p.pl.modern = pr
			h.keyed(pr)
		} else if p.pl.modern != pr { // another session's probe won: use its process
			h.release(pr)
			pr = p.pl.modern
			h.use(pr, p.hd.Idle())
		}
		h.mu.Unlock()
		p.s.conn.Write(jsonrpc.AppendAnswer(nil, id, resp))
		p.attach(pr)
		p.flush(attached)
		return
	}
	h.mu.Lock()
	if p.pl.era == eraUnknown {
		p.pl.era = eraLegacy
		if resp.Error != nil {
			p.pl.discoverErr = clone(resp.Error)
		}
	}
	h.mu.Unlock()
	p.s.conn.Write(jsonrpc.AppendAnswer(nil, id, resp))
	p.flush(fresh) // it keeps pr for its initialize
}

// modernProc is the pool's modern process, started if it has none.
// held, when not nil, is a process the session holds, unkeyed: used,
// or released.
func (p *peer) modernProc(held *proc) (*proc, error) {
	h := p.h
	h.mu.Lock()
	if pr := p.pl.modern; pr != nil && !pr.gone {
		h.use(pr, p.hd.Idle())
		if held != nil {
			h.release(held)
		}
		h.mu.Unlock()
		return pr, nil
	}
	h.mu.Unlock()
	pr, err := held, error(nil)
	if h.isGone(pr) {
		pr, err = h.take(p.pl, p.hd)
	}
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	if cur := p.pl.modern; cur != nil && !cur.gone {
		h.release(pr)
		h.use(cur, p.hd.Idle())
		pr = cur
	} else {
		p.pl.modern = pr
		h.keyed(pr)
	}
	h.mu.Unlock()
	return pr, nil
}

// attach attaches the session to pr, which it uses already; under p.mu.
func (p *peer) attach(pr *proc) {
	p.pr = pr
	if !pr.sh.attach(p.s) {
		p.s.close("the shared server ended", true)
	}
}

// initialize picks the process for the session's initialize m, by its
// key, and attaches the session to it.
func (p *peer) initialize(m *jsonrpc.Message) {
	h := p.h
	key := baseKey(m.Params)
	if declaresRoots(m.Params) {
		p.initializeRooted(m, key)
		return
	}
	pr, err := p.initProc(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.couldNotStart(m, err)
		return
	}
	p.attach(pr)
	pr.sh.initialize(p.s, m, func(ok bool) {
		if !ok { // of no use to anyone: out of the pool, and stopped
			h.mu.Lock()
			h.drop(pr)
			h.mu.Unlock()
			go pr.p.Stop()
		}
	})
	p.flush(attached)
}

// initProc is the process of the pool for initialize key key: the one
// that has it, else the session's probe's, the spare or a new one. The
// session uses it (holder.use).
func (p *peer) initProc(key string) (*proc, error) {
	h := p.h
	p.mu.Lock()
	old := p.pr
	p.pr = nil
	p.mu.Unlock()
	h.mu.Lock()
	if pr := p.pl.byInit[key]; pr != nil && !pr.gone {
		h.use(pr, p.hd.Idle())
		if old != nil {
			h.putBack(old)
		}
		h.mu.Unlock()
		return pr, nil
	}
	if old != nil && !old.gone && old.initKey == "" {
		old.initKey = key
		p.pl.byInit[key] = old
		h.keyed(old)
		h.mu.Unlock()
		return old, nil
	}
	if old != nil {
		h.release(old)
	}
	for {
		if pr := p.pl.byInit[key]; pr != nil && !pr.gone {
			h.use(pr, p.hd.Idle())
			h.mu.Unlock()
			return pr, nil
		}
		// A process another session holds, started as it connected, and
		// not initialized or probed yet: this session may be first to
		// need it (it keys it; the other finds it under its key if it
		// has the same).
		for pr := range p.pl.unkeyed {
			if !pr.gone && !pr.probing && !pr.ended() && !pr.sh.initStarted() {
				pr.initKey = key
				p.pl.byInit[key] = pr
				h.keyed(pr)
				h.use(pr, p.hd.Idle())
				h.mu.Unlock()
				return pr, nil
			}
		}
		if p.pl.starting == 0 {
			break
		}
		h.started.Wait() // a process is being started for the entry
	}
	h.mu.Unlock()
	pr, err := h.take(p.pl, p.hd)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := p.pl.byInit[key]; cur != nil && !cur.gone { // another session's won meanwhile
		h.putBack(pr)
		h.use(cur, p.hd.Idle())
		return cur, nil
	}
	pr.initKey = key
	p.pl.byInit[key] = pr
	h.keyed(pr)
	return pr, nil
}

// putBack releases pr, uninitialized, as the pool's spare if it has none;
// under h.mu.
func (h *holder) putBack(pr *proc) {
	if pl := pr.pool; pl.spare == nil && pr.initKey == "" && !pr.gone {
		pl.spare = pr
	}
	h.release(pr)
}

// askRoots asks the session roots/list and returns the raw answer
// (result or error), within RootsWait.
func (p *peer) askRoots() ([]byte, error) {
	type answer struct {
		b   []byte
		err error
	}
	got := make(chan answer, 1)
	id, err := p.s.conn.Go("roots/list", []byte(`{}`), func(resp *jsonrpc.Message, err error) {
		if err != nil {
			got <- answer{nil, err}
			return
		}
		if resp.Error != nil {
			got <- answer{append([]byte("error:"), resp.Error...), nil}
			return
		}
		got <- answer{clone(resp.Result), nil}
	})
	if err != nil {
		return nil, err
	}
	t := time.NewTimer(p.h.opts.RootsWait)
	defer t.Stop()
	select {
	case a := <-got:
		return a.b, a.err
	case <-t.C:
		if p.s.conn.Forget(id) {
			return nil, fmt.Errorf("no answer to roots/list within %v", p.h.opts.RootsWait)
		}
		a := <-got
		return a.b, a.err
	}
}

// close ends the session's connection: the session side is told why
// (ClosingMethod) and whether the server ended with it.
func (p *peer) close(reason string, serverEnded bool) {
	p.h.opts.Logf("%s: server %q: connection closed: %s", p.s.name, p.hd.Key, reason)
	params, _ := json.Marshal(closing{Reason: reason, ServerEnded: serverEnded})
	p.s.conn.Notify(ClosingMethod, params)
	go func() {
		p.s.conn.WaitWrites(time.Second)
		p.nc.Close()
	}()
}

// end is the end of the session's connection: it is detached from its
// process and its use of it released.
func (p *peer) end() {
	p.mu.Lock()
	pr := p.pr
	p.mu.Unlock()
	if pr != nil && p.s != nil {
		pr.sh.detach(p.s) // nothing when it was not attached
	}
	p.h.mu.Lock()
	if pr != nil {
		p.h.release(pr)
	}
	p.pl.peers--
	p.h.mu.Unlock()
	if p.s != nil {
		p.h.opts.Logf("%s: server %q: session ended", p.s.name, p.hd.Key)
	}
}
