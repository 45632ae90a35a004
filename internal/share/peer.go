package share

import (
	"encoding/json"
	"net"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A session's connection at the holder: it is given a process of its
// pool once its first request says which (its server/discover probe or its
// initialize), and is then attached to that process's mux.

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
