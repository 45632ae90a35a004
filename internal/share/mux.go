package share

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Shared is one server process shared by sessions: the protocol rules.
//
//   - initialize: the first session's goes to the server and its answer is
//     recorded; later sessions get the recorded answer under their own id,
//     and their notifications/initialized is swallowed. (A 2026-07-28
//     server has no initialize: it is shared as it is, stateless.)
//   - Ids: every request of a session is sent under an id of the server's
//     connection (its lane's) and the answer goes back under the session's
//     id; notifications/cancelled of a session reaches the server only for
//     a request of its own, under the server-side id.
//   - Progress tokens (params._meta.progressToken) are rewritten per
//     request and notifications/progress goes back to the one session,
//     under its own token.
//   - A request of the server (sampling, elicitation, roots) goes to the
//     session its related-task meta or its progress token names, else to
//     the one session with a call in flight (or the only session attached);
//     if that is not exactly one, the server gets an error and the log
//     says why: never a guess. A roots/list is then answered with the
//     roots every session here has, when the process is keyed by them
//     (roots.go). ping is answered here.
//   - notifications/*/list_changed go to every session;
//     resources/subscribe and unsubscribe are counted per URI (the first
//     subscribe and the last unsubscribe reach the server) and
//     notifications/resources/updated goes to the sessions subscribed.
//   - logging/setLevel: the server gets the most verbose level any session
//     asked for; a log message goes to the session its related-task meta
//     names, else to the one session with a call in flight, else (none or
//     several: a message names no call) to every session; each gets it only
//     at or above its own level.
//   - Tasks belong to the session whose call created them: tasks/list is
//     filtered to the session's own (the one payload re-encoded), and
//     tasks/get, tasks/result, tasks/cancel of any other task fail with
//     -32602 as unknown.
//   - A session that ends: its requests in flight are cancelled at the
//     server, its subscriptions released, its tasks forgotten, and the
//     server's log level is the most verbose of those left.
//
// Results and errors pass byte for byte.
type Shared struct {
	conn *jsonrpc.Conn // to the server
	logf func(format string, args ...any)
	name string // for the log: the server's key and pid

	mu       sync.Mutex            // protects the fields below, and each Session's marked so
	sessions map[*Session]bool     // attached
	calls    map[string]*call      // by the key of the server-side id
	tokens   map[string]*call      // by the key of the server-side progress token
	asks     map[string]*ask       // the server's requests relayed, by the key of its id
	tasks    map[string]*Session   // task id key -> the session that created it
	elicits  map[string]*Session   // URL elicitation id key -> the session asked
	subs     map[string][]*Session // URI -> the sessions subscribed
	level    string                // the log level set at the server ("": none)
	init     *initRecord           // the recorded initialize (nil: none sent yet)
	roots    []byte                // the roots/list result of every session here, when keyed by it
	seq      int                   // for progress tokens
	ended    bool                  // the server ended: attach refused
}

// initRecord is the first initialize and the server's answer to it.
type initRecord struct {
	done            chan struct{}    // closed once answer or err is set
	answer          *jsonrpc.Message // a copy
	err             error
	sentInitialized bool // notifications/initialized went to the server
}

// Session is one session's connection to a Shared.
type Session struct {
	conn *jsonrpc.Conn // to the session
	lane *jsonrpc.Lane // its lane into the server's connection
	name string        // for the log
	// close ends the session's connection with a reason (logged, and
	// told to the session side in ClosingMethod).
	close func(reason string, serverEnded bool)

	// Under Shared.mu:
	inflight map[string]*call // by the key of the session's id
	level    int              // index in logLevels; -1: none asked
	gone     bool
}

// call is a session's request relayed to the server; it is the Waiter of
// its answer.
type call struct {
	sh       *Shared
	s        *Session
	sessID   []byte // the session's id, copied
	method   string
	token    []byte // the session's progress token (nil: none)
	tokKey   string // the key of the server-side token
	holderID []byte // the server-side id, once sent
	taskAug  bool   // params.task was set: the answer may create a task
	answered bool   // under Shared.mu
	// then, when set, runs on the answer before it is relayed (under no lock).
	then func(resp *jsonrpc.Message, err error)
}

// ask is a server's request relayed to a session; it is the Waiter of
// the session's answer.
type ask struct {
	sh       *Shared
	s        *Session
	serverID []byte
	sessID   []byte
}

// logLevels are MCP's levels, most verbose first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelIndex(l string) int {
	for i, v := range logLevels {
		if v == l {
			return i
		}
	}
	return -1
}

// Error codes the holder answers with.
const (
	codeInvalidParams = -32602
	codeInternal      = -32603
	codeInvalid       = -32600
)

func errObj(code int, msg string) []byte {
	b := append([]byte(`{"code":`), strconv.Itoa(code)...)
	b = append(b, `,"message":`...)
	b = jsonrpc.AppendString(b, msg)
	return append(b, '}')
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// newShared makes the mux of a server; the caller sets its conn, made
// with serverOptions, and runs it. name is for the log.
func newShared(name string, logf func(string, ...any)) *Shared {
	return &Shared{
		name: name, logf: logf,
		sessions: map[*Session]bool{}, calls: map[string]*call{}, tokens: map[string]*call{},
		asks: map[string]*ask{}, tasks: map[string]*Session{}, elicits: map[string]*Session{},
		subs: map[string][]*Session{},
	}
}

// serverOptions are the hooks of the server's connection.
func (sh *Shared) serverOptions() jsonrpc.Options {
	return jsonrpc.Options{
		Queue:     true,
		Handle:    sh.fromServer,
		Cancelled: sh.cancelledAtServer,
		Unmatched: func(m *jsonrpc.Message) {},
		Invalid: func(line []byte, m *jsonrpc.Message, err error) {
			sh.logf("%s: skipped a line that is not JSON-RPC: %v", sh.name, err)
		},
	}
}

// sessionOptions are the hooks of a session's connection.
func sessionOptions(handle func(*jsonrpc.Message)) jsonrpc.Options {
	return jsonrpc.Options{
		Queue:  true,
		Handle: handle,
		Cancelled: func(via *jsonrpc.Lane, id json.RawMessage, cause error) {
			via.Notify("notifications/cancelled", cancelParams(id, cause))
		},
		Unmatched: func(*jsonrpc.Message) {},
	}
}

func cancelParams(id []byte, cause error) []byte {
	b := append([]byte(`{"requestId":`), id...)
	if cause != nil {
		b = append(b, `,"reason":`...)
		b = jsonrpc.AppendString(b, cause.Error())
	}
	return append(b, '}')
}

// cancelledAtServer tells the server a request of a session was
// cancelled, under the server-side id.
func (sh *Shared) cancelledAtServer(via *jsonrpc.Lane, id json.RawMessage, cause error) {
	via.Notify("notifications/cancelled", cancelParams(id, cause))
}

// attach adds s to the sessions; false when the server has ended.
func (sh *Shared) attach(s *Session) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.ended {
		return false
	}
	s.lane = sh.conn.NewLane()
	s.inflight = map[string]*call{}
	s.level = -1
	sh.sessions[s] = true
	return true
}

// count is how many sessions are attached.
func (sh *Shared) count() int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return len(sh.sessions)
}

// initRecord is the server's initialize record, and whether it is new:
// the caller then sends the initialize that fills it.
func (sh *Shared) initRecord() (rec *initRecord, first bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.init == nil {
		sh.init = &initRecord{done: make(chan struct{})}
		return sh.init, true
	}
	return sh.init, false
}

// initialize answers the initialize request m of s: the first goes to
// the server, later ones get the recorded answer. ok is false when the
// answer is an error (the server is of no use to anyone then): answered
// says so, of the first.
func (sh *Shared) initialize(s *Session, m *jsonrpc.Message, answered func(ok bool)) {
	rec, first := sh.initRecord()
	id := clone(m.ID)
	if first {
		c := &call{sh: sh, s: s, sessID: id, method: m.Method}
		c.then = func(resp *jsonrpc.Message, err error) {
			answered(rec.set(resp, err))
		}
		sh.send(s, c, m.Params)
		return
	}
	go func() {
		<-rec.done
		if rec.err != nil {
			s.conn.ReplyError(id, errObj(codeInternal, "the shared server ended: "+rec.err.Error()))
			return
		}
		s.conn.Write(jsonrpc.AppendAnswer(nil, id, rec.answer))
	}()
}

// set records the answer to the first initialize (a copy) and reports
// whether it is a success.
func (rec *initRecord) set(resp *jsonrpc.Message, err error) bool {
	if resp != nil {
		resp = &jsonrpc.Message{ID: clone(resp.ID), Result: clone(resp.Result), Error: clone(resp.Error)}
	}
	rec.answer, rec.err = resp, err
	close(rec.done)
	return err == nil && resp.Error == nil
}

// setRoots records the roots/list result every session attached has:
// the process is keyed by it (roots.go).
func (sh *Shared) setRoots(roots []byte) {
	sh.mu.Lock()
	sh.roots = roots
	sh.mu.Unlock()
}

// initStarted reports whether an initialize was sent to the server.
func (sh *Shared) initStarted() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.init != nil
}

// recordedAnswer is the server's answer to its initialize, when it has
// answered it with a success; else nil.
func (sh *Shared) recordedAnswer() *jsonrpc.Message {
	sh.mu.Lock()
	rec := sh.init
	sh.mu.Unlock()
	if rec == nil {
		return nil
	}
	select {
	case <-rec.done:
		if rec.err == nil && rec.answer.Error == nil {
			return rec.answer
		}
	default:
	}
	return nil
}

// initializeQuiet initializes the server for session s, whose initialize
// was answered already (from another process's record): the answer is
// recorded, not relayed. It waits for it, within wait, and reports
// whether it is a success.
func (sh *Shared) initializeQuiet(s *Session, params []byte, wait time.Duration) bool {
	rec, first := sh.initRecord()
	if first {
		var parts [][]byte
		if params != nil {
			parts = [][]byte{params}
		}
		_, err := s.lane.GoParts("initialize", jsonrpc.AnswerFunc(func(resp *jsonrpc.Message, err error) { rec.set(resp, err) }), parts...)
		if err != nil {
			rec.set(nil, err)
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-rec.done:
		return rec.err == nil && rec.answer.Error == nil
	case <-t.C:
		return false
	}
}

// detach takes s out: its requests in flight are cancelled at the
// server, its subscriptions released (the last of a URI unsubscribed at
// the server), its tasks and requests asked of it forgotten.
func (sh *Shared) detach(s *Session) {
	sh.mu.Lock()
	if s.gone || !sh.sessions[s] {
		s.gone = true
		sh.mu.Unlock()
		return
	}
	s.gone = true
	delete(sh.sessions, s)
	// The level it asked for may have been the most verbose: the server
	// gets the most verbose of those left, if any asked.
	level := ""
	if s.level >= 0 && sh.level != "" {
		most := -1
		for o := range sh.sessions {
			if o.level >= 0 && (most < 0 || o.level < most) {
				most = o.level
			}
		}
		if most >= 0 && logLevels[most] != sh.level {
			level = logLevels[most]
			sh.level = level
		}
	}
	var cancel []*call
	for _, c := range s.inflight {
		cancel = append(cancel, c)
	}
	var release []string
	for uri, subs := range sh.subs {
		has := false
		for _, o := range subs {
			has = has || o == s
		}
		if !has {
			continue
		}
		if sh.subs[uri] = remove(subs, s); len(sh.subs[uri]) == 0 {
			delete(sh.subs, uri)
			release = append(release, uri)
		}
	}
	for id, o := range sh.tasks {
		if o == s {
			delete(sh.tasks, id)
		}
	}
	for id, o := range sh.elicits {
		if o == s {
			delete(sh.elicits, id)
		}
	}
	sh.mu.Unlock()
	for _, c := range cancel {
		sh.mu.Lock()
		id := c.holderID
		sh.mu.Unlock()
		if id != nil && s.lane.Cancel(id, errors.New("the session ended")) {
			sh.finish(c)
		}
	}
	if level != "" {
		params := jsonrpc.AppendString([]byte(`{"level":`), level)
		sh.conn.Go("logging/setLevel", append(params, '}'), func(*jsonrpc.Message, error) {})
	}
	for _, uri := range release {
		params := jsonrpc.AppendString([]byte(`{"uri":`), uri)
		sh.conn.Go("resources/unsubscribe", append(params, '}'), func(*jsonrpc.Message, error) {})
	}
}

// end tells every session that the server ended, and closes them.
func (sh *Shared) end(why string) {
	sh.mu.Lock()
	sh.ended = true
	var all []*Session
	for s := range sh.sessions {
		all = append(all, s)
	}
	sh.mu.Unlock()
	for _, s := range all {
		s.close(why, true)
	}
}
