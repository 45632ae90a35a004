package share

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Keying a legacy session by its roots. A session whose client declared
// roots shares a process only with sessions of the same roots: the holder
// asks it roots/list. It cannot ask before it answers initialize: the
// aggregator relays a server's request to its client only once that
// client is initialized, and may wait for this very server's initialize
// answer first. So:
//
//   - When a process of the same initialize key without roots (baseKey)
//     has answered initialize already, the session gets that answer at
//     once; once its notifications/initialized comes, its roots are asked,
//     and it is attached to the process of its full key (started and
//     initialized, its answer swallowed, if there is none). What it sends
//     meanwhile waits.
//   - Otherwise it gets a process of its own at once, initialized as
//     usual; once its roots are known, that process is keyed by them, for
//     later sessions with the same roots to join.

// rooted is the keying of a session that declared roots.
type rooted struct {
	base   string
	params []byte // its initialize params
	asked  bool   // roots/list was asked (under peer.mu)
}

// baseKey is the key of a legacy session's initialize params: its
// protocol version and capabilities.
func baseKey(params []byte) string {
	d := sha256.New()
	version, _ := jsonrpc.Member(params, "protocolVersion")
	caps, _ := jsonrpc.Member(params, "capabilities")
	fmt.Fprintf(d, "%d:%s%d:%s", len(version), version, len(caps), caps)
	return hex.EncodeToString(d.Sum(nil))
}

// declaresRoots reports whether initialize params declare roots.
func declaresRoots(params []byte) bool {
	caps, _ := jsonrpc.Member(params, "capabilities")
	_, ok := jsonrpc.Member(caps, "roots")
	return ok
}

// fullKey is base with the session's roots (its raw answer).
func fullKey(base string, roots []byte) string {
	d := sha256.Sum256(fmt.Appendf(nil, "%s:roots:%d:%s", base, len(roots), roots))
	return hex.EncodeToString(d[:])
}

// aloneKey is a key no other session has.
func (p *peer) aloneKey(base string) string { return fmt.Sprintf("%s:alone:%p", base, p) }

// recorded is an initialize answer (a success) that a process of pool pl
// with initialize key base (without roots) gave; nil when none has.
func (h *holder) recorded(pl *pool, base string) *jsonrpc.Message {
	h.mu.Lock()
	var procs []*proc
	for _, pr := range pl.byInit {
		if pr.base == base && !pr.gone {
			procs = append(procs, pr)
		}
	}
	h.mu.Unlock()
	for _, pr := range procs {
		if a := pr.sh.recordedAnswer(); a != nil {
			return a
		}
	}
	return nil
}

// initializeRooted answers the initialize m of a session that declared
// roots: see the top of this file.
func (p *peer) initializeRooted(m *jsonrpc.Message, base string) {
	h := p.h
	r := &rooted{base: base, params: clone(m.Params)}
	if answer := h.recorded(p.pl, base); answer != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.rooted = r
		p.s.conn.Write(jsonrpc.AppendAnswer(nil, m.ID, answer))
		p.state = keying
		p.flush(keying)
		return
	}
	pr, err := p.initProc(p.aloneKey(base))
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.couldNotStart(m, err)
		return
	}
	h.mu.Lock()
	pr.base = base
	h.mu.Unlock()
	p.rooted = r
	p.attach(pr)
	pr.sh.initialize(p.s, m, p.onInit(pr))
	p.flush(attached)
}

// onInit drops a process whose initialize failed: of no use to anyone.
func (p *peer) onInit(pr *proc) func(ok bool) {
	return func(ok bool) {
		if !ok {
			p.h.mu.Lock()
			p.h.drop(pr)
			p.h.mu.Unlock()
			go pr.p.Stop()
		}
	}
}

// keyRooted asks the session's roots and attaches it to the process of
// its full key (state keying).
func (p *peer) keyRooted(r *rooted) {
	h := p.h
	key, roots := p.rootsKey(r)
	pr, fresh, err := p.rootedProc(key, r.base)
	p.mu.Lock()
	if err != nil {
		p.mu.Unlock()
		p.s.close("the holder could not start the server: "+err.Error(), true)
		return
	}
	p.attach(pr)
	p.mu.Unlock()
	if fresh {
		pr.sh.setRoots(roots)
	}
	if fresh && !pr.sh.initializeQuiet(p.s, r.params, h.opts.RootsWait*6) {
		h.mu.Lock()
		h.drop(pr)
		h.mu.Unlock()
		go pr.p.Stop()
		p.s.close("the server's initialize failed", true)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.flush(attached)
}

// rootsKey asks the session's roots: its full key, or one of its own
// when it does not answer (logged).
// roots is the session's answer (a result) when it is one.
func (p *peer) rootsKey(r *rooted) (key string, roots []byte) {
	answer, err := p.askRoots()
	if err != nil {
		p.h.opts.Logf("%s: server %q: a process of its own: its roots: %v", p.s.name, p.hd.Key, err)
		return p.aloneKey(r.base), nil
	}
	if !bytes.HasPrefix(answer, []byte("error:")) {
		roots = answer
	}
	return fullKey(r.base, answer), roots
}

// rootedProc is the process of key: the one that has it (fresh false),
// else one taken and keyed (fresh: to be initialized).
func (p *peer) rootedProc(key, base string) (pr *proc, fresh bool, err error) {
	h := p.h
	h.mu.Lock()
	if pr := p.pl.byInit[key]; pr != nil && !pr.gone {
		h.use(pr, p.hd.Idle())
		h.mu.Unlock()
		return pr, false, nil
	}
	h.mu.Unlock()
	pr, err = p.initProc(key)
	if err != nil {
		return nil, false, err
	}
	h.mu.Lock()
	pr.base = base
	h.mu.Unlock()
	return pr, pr.sh.recordedAnswer() == nil, nil
}

// rekey keys pr, the process of a session's own, by the session's roots
// once known, for later sessions with the same roots to join.
func (p *peer) rekey(pr *proc, r *rooted) {
	key, roots := p.rootsKey(r)
	h := p.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if pr.gone || p.pl.byInit[key] != nil {
		return
	}
	pr.sh.setRoots(roots)
	delete(p.pl.byInit, pr.initKey)
	pr.initKey = key
	p.pl.byInit[key] = pr
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
