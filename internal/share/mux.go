package share

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// fromSession takes in a message of session s.
func (sh *Shared) fromSession(s *Session, m *jsonrpc.Message) {
	sh.mu.Lock()
	gone := s.gone
	sh.mu.Unlock()
	if gone { // detached (its roots changed), its connection closing
		if m.IsRequest() {
			s.conn.ReplyError(m.ID, errObj(codeInternal, "this connection to the shared server is closing (its roots changed): try again"))
		}
		return
	}
	if !m.IsRequest() {
		sh.sessionNotification(s, m)
		return
	}
	switch m.Method {
	case "initialize":
		s.conn.ReplyError(m.ID, errObj(codeInvalid, "initialize was already sent on this connection"))
	case "ping":
		s.conn.Reply(m.ID, []byte(`{}`))
	case "logging/setLevel":
		sh.setLevel(s, m)
	case "resources/subscribe", "resources/unsubscribe":
		sh.subscribe(s, m)
	case "tasks/get", "tasks/result", "tasks/cancel":
		taskID, _ := jsonrpc.Member(m.Params, "taskId")
		sh.mu.Lock()
		owner := sh.tasks[jsonrpc.Key(taskID)]
		sh.mu.Unlock()
		if taskID == nil || owner != s {
			s.conn.ReplyError(m.ID, errObj(codeInvalidParams, "unknown task"))
			return
		}
		sh.forward(s, m, nil)
	default: // tasks/list is filtered in call.Answered
		sh.forward(s, m, nil)
	}
}

// sessionNotification takes in a notification of session s.
func (sh *Shared) sessionNotification(s *Session, m *jsonrpc.Message) {
	switch m.Method {
	case "notifications/initialized":
		sh.mu.Lock()
		rec := sh.init
		send := rec != nil && !rec.sentInitialized
		if send {
			rec.sentInitialized = true
		}
		sh.mu.Unlock()
		if send {
			s.lane.Notify(m.Method, m.Params)
		}
	case "notifications/cancelled":
		id, _ := jsonrpc.Member(m.Params, "requestId")
		sh.mu.Lock()
		c := s.inflight[jsonrpc.Key(id)]
		var holderID []byte
		if c != nil && !c.answered {
			holderID = c.holderID
		}
		sh.mu.Unlock()
		if holderID == nil {
			return // not one of its own in flight (or not sent yet): ignored
		}
		reason, _ := jsonrpc.StringMember(m.Params, "reason")
		if s.lane.Cancel(holderID, errors.New(reason)) {
			sh.finish(c)
		}
	case "notifications/roots/list_changed":
		// Nothing more of it reaches this process, shared by sessions of
		// its old roots: not even an answer to a roots/list in flight.
		sh.detach(s)
		s.close("its roots changed: it is keyed afresh", false)
	default: // notifications/progress (of a server's request) and the rest
		s.lane.Notify(m.Method, m.Params)
	}
}

// forward relays request m of s to the server; c, when nil, is made.
func (sh *Shared) forward(s *Session, m *jsonrpc.Message, then func(*jsonrpc.Message, error)) {
	c := &call{sh: sh, s: s, sessID: clone(m.ID), method: m.Method, then: then}
	_, c.taskAug = jsonrpc.Member(m.Params, "task")
	sh.send(s, c, m.Params)
}

// send registers c and sends it with params, its progress token rewritten.
func (sh *Shared) send(s *Session, c *call, params []byte) {
	meta, _ := jsonrpc.Member(params, "_meta")
	tok, hasTok := jsonrpc.Member(meta, "progressToken")
	sh.mu.Lock()
	if s.gone {
		sh.mu.Unlock()
		return
	}
	if hasTok {
		sh.seq++
		holderTok := jsonrpc.AppendString(nil, "share-"+strconv.Itoa(sh.seq))
		c.token, c.tokKey = clone(tok), jsonrpc.Key(holderTok)
		sh.tokens[c.tokKey] = c
		if nm, err := jsonrpc.ReplaceMember(meta, "progressToken", holderTok); err == nil {
			if np, err := jsonrpc.ReplaceMember(params, "_meta", nm); err == nil {
				params = np
			}
		}
	}
	s.inflight[jsonrpc.Key(c.sessID)] = c
	sh.mu.Unlock()
	var parts [][]byte
	if params != nil {
		parts = [][]byte{params}
	}
	id, err := s.lane.GoParts(c.method, c, parts...)
	if err != nil {
		sh.finish(c)
		c.reply(nil, err)
		return
	}
	sh.mu.Lock()
	if !c.answered {
		c.holderID = id
		sh.calls[jsonrpc.Key(id)] = c
	}
	sh.mu.Unlock()
}

// finish forgets c; it reports whether c was still in flight.
func (sh *Shared) finish(c *call) bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c.answered {
		return false
	}
	c.answered = true
	if c.holderID != nil {
		delete(sh.calls, jsonrpc.Key(c.holderID))
	}
	if c.tokKey != "" {
		delete(sh.tokens, c.tokKey)
	}
	if cur := c.s.inflight[jsonrpc.Key(c.sessID)]; cur == c {
		delete(c.s.inflight, jsonrpc.Key(c.sessID))
	}
	return true
}

// Answered relays the server's answer to the session.
func (c *call) Answered(resp *jsonrpc.Message, err error) {
	if !c.sh.finish(c) {
		return
	}
	if err == nil && resp.Result != nil {
		switch {
		case c.taskAug:
			c.sh.ownTask(c.s, resp.Result)
		case c.method == "tasks/list":
			resp = c.sh.filterTasks(c.s, resp)
		}
	}
	c.reply(resp, err)
}

// reply writes the answer (or err) to the session under its own id.
func (c *call) reply(resp *jsonrpc.Message, err error) {
	if c.then != nil {
		c.then(resp, err)
	}
	if err != nil {
		c.s.conn.ReplyError(c.sessID, errObj(codeInternal, "the shared server ended: "+err.Error()))
		return
	}
	c.s.conn.Write(jsonrpc.AppendAnswer(nil, c.sessID, resp))
}

// ownTask records the task a session's call created (a CreateTaskResult).
func (sh *Shared) ownTask(s *Session, result []byte) {
	task, _ := jsonrpc.Member(result, "task")
	id, ok := jsonrpc.Member(task, "taskId")
	if !ok {
		return
	}
	sh.mu.Lock()
	if !s.gone {
		sh.tasks[jsonrpc.Key(id)] = s
	}
	sh.mu.Unlock()
}

// filterTasks keeps, of a tasks/list answer, the session's own tasks.
func (sh *Shared) filterTasks(s *Session, resp *jsonrpc.Message) *jsonrpc.Message {
	list, ok := jsonrpc.Member(resp.Result, "tasks")
	if !ok {
		return resp
	}
	elems, err := jsonrpc.Elements(list)
	if err != nil {
		return resp
	}
	kept := []byte{'['}
	sh.mu.Lock()
	for _, e := range elems {
		id, _ := jsonrpc.Member(e, "taskId")
		if sh.tasks[jsonrpc.Key(id)] == s {
			if len(kept) > 1 {
				kept = append(kept, ',')
			}
			kept = append(kept, e...)
		}
	}
	sh.mu.Unlock()
	kept = append(kept, ']')
	result, err := jsonrpc.ReplaceMember(resp.Result, "tasks", kept)
	if err != nil {
		return resp
	}
	return &jsonrpc.Message{ID: resp.ID, Result: result}
}

// setLevel keeps s's level and sets the most verbose one at the server.
func (sh *Shared) setLevel(s *Session, m *jsonrpc.Message) {
	level, _ := jsonrpc.StringMember(m.Params, "level")
	i := levelIndex(level)
	if i < 0 {
		sh.forward(s, m, nil) // the server says what is wrong
		return
	}
	sh.mu.Lock()
	s.level = i
	most := i
	for o := range sh.sessions {
		if o.level >= 0 && o.level < most {
			most = o.level
		}
	}
	send := logLevels[most] != sh.level
	if send {
		sh.level = logLevels[most]
	}
	sh.mu.Unlock()
	if !send {
		s.conn.Reply(m.ID, []byte(`{}`))
		return
	}
	params := jsonrpc.AppendString([]byte(`{"level":`), logLevels[most])
	params = append(params, '}')
	sh.send(s, &call{sh: sh, s: s, sessID: clone(m.ID), method: m.Method}, params)
}

// subscribe counts resources/subscribe and unsubscribe of s per URI: the
// first subscribe and the last unsubscribe go to the server.
func (sh *Shared) subscribe(s *Session, m *jsonrpc.Message) {
	uri, _ := jsonrpc.StringMember(m.Params, "uri")
	sub := m.Method == "resources/subscribe"
	sh.mu.Lock()
	subs := sh.subs[uri]
	has := false
	for _, o := range subs {
		has = has || o == s
	}
	others := len(subs) - map[bool]int{true: 1, false: 0}[has]
	switch {
	case sub && !has:
		sh.subs[uri] = append(subs, s)
	case !sub && has:
		sh.subs[uri] = remove(subs, s)
		if len(sh.subs[uri]) == 0 {
			delete(sh.subs, uri)
		}
	}
	sh.mu.Unlock()
	if others > 0 && (sub || has) {
		s.conn.Reply(m.ID, []byte(`{}`)) // the server holds it for the others already
		return
	}
	var then func(*jsonrpc.Message, error)
	if sub && !has {
		then = func(resp *jsonrpc.Message, err error) {
			if err != nil || resp.Error != nil { // not subscribed after all
				sh.mu.Lock()
				sh.subs[uri] = remove(sh.subs[uri], s)
				if len(sh.subs[uri]) == 0 {
					delete(sh.subs, uri)
				}
				sh.mu.Unlock()
			}
		}
	}
	sh.forward(s, m, then)
}

func remove(list []*Session, s *Session) []*Session {
	out := list[:0:0]
	for _, o := range list {
		if o != s {
			out = append(out, o)
		}
	}
	return out
}

// fromServer takes in a request or notification of the server.
func (sh *Shared) fromServer(m *jsonrpc.Message) {
	if m.IsRequest() {
		sh.serverRequest(m)
		return
	}
	sh.serverNotification(m)
}

// target finds the session a message of the server belongs to, by its
// related-task meta or progress token, else the one session with a call in
// flight; why says why there is none. Under sh.mu.
func (sh *Shared) target(params []byte) (s *Session, why string) {
	meta, _ := jsonrpc.Member(params, "_meta")
	if rel, ok := jsonrpc.Member(meta, "io.modelcontextprotocol/related-task"); ok {
		id, _ := jsonrpc.Member(rel, "taskId")
		if s := sh.tasks[jsonrpc.Key(id)]; s != nil {
			return s, ""
		}
		return nil, "its related task is no session's"
	}
	if tok, ok := jsonrpc.Member(meta, "progressToken"); ok {
		if c := sh.tokens[jsonrpc.Key(tok)]; c != nil {
			return c.s, ""
		}
	}
	var one *Session
	n := 0
	for o := range sh.sessions {
		if len(o.inflight) > 0 {
			one = o
			n++
		}
	}
	switch {
	case n == 1:
		return one, ""
	case n == 0 && len(sh.sessions) == 1: // the only session here: no other it could be for
		for s := range sh.sessions {
			return s, ""
		}
	case n == 0:
		return nil, "no session has a call in flight on this server"
	}
	return nil, fmt.Sprintf("%d sessions have calls in flight on this server, and it does not say for which it asks", n)
}

// serverRequest relays a request of the server to the one session it
// belongs to, or answers it.
func (sh *Shared) serverRequest(m *jsonrpc.Message) {
	if m.Method == "ping" {
		sh.conn.Reply(m.ID, []byte(`{}`))
		return
	}
	sh.mu.Lock()
	s, why := sh.target(m.Params)
	roots := sh.roots
	sh.mu.Unlock()
	if s == nil && m.Method == "roots/list" && roots != nil {
		// Every session here has these roots: it is keyed by them.
		sh.conn.Reply(m.ID, roots)
		return
	}
	if s == nil {
		sh.logf("%s: its %s request answered with an error: %s (a shared server's request goes to one session, never a guess)", sh.name, m.Method, why)
		sh.conn.ReplyError(m.ID, errObj(codeInternal, "mcp-simple-aggregator --share: cannot tell which session "+m.Method+" is for: "+why))
		return
	}
	a := &ask{sh: sh, s: s, serverID: clone(m.ID)}
	if m.Method == "elicitation/create" {
		if eid, ok := jsonrpc.Member(m.Params, "elicitationId"); ok {
			sh.mu.Lock()
			sh.elicits[jsonrpc.Key(eid)] = s
			sh.mu.Unlock()
		}
	}
	sh.mu.Lock()
	sh.asks[jsonrpc.Key(a.serverID)] = a
	sh.mu.Unlock()
	var parts [][]byte
	if m.Params != nil {
		parts = [][]byte{m.Params}
	}
	id, err := s.conn.GoParts(m.Method, a, parts...)
	if err != nil {
		a.Answered(nil, err)
		return
	}
	sh.mu.Lock()
	if sh.asks[jsonrpc.Key(a.serverID)] == a {
		a.sessID = id
	}
	sh.mu.Unlock()
}

// Answered relays the session's answer to the server under its own id.
func (a *ask) Answered(resp *jsonrpc.Message, err error) {
	a.sh.mu.Lock()
	mine := a.sh.asks[jsonrpc.Key(a.serverID)] == a
	if mine {
		delete(a.sh.asks, jsonrpc.Key(a.serverID))
	}
	gone := a.s.gone
	a.sh.mu.Unlock()
	if !mine {
		return
	}
	if gone && err == nil {
		err = errors.New("it left this server")
	}
	if err != nil {
		a.sh.conn.ReplyError(a.serverID, errObj(codeInternal, "the session asked ended: "+err.Error()))
		return
	}
	a.sh.conn.Write(jsonrpc.AppendAnswer(nil, a.serverID, resp))
}

// serverNotification relays a notification of the server to the sessions
// it is for.
func (sh *Shared) serverNotification(m *jsonrpc.Message) {
	params := m.Params
	var to []*Session
	sh.mu.Lock()
	meta, _ := jsonrpc.Member(params, "_meta")
	subID, isSub := jsonrpc.Member(meta, "io.modelcontextprotocol/subscriptionId")
	switch {
	case isSub: // 2026-07-28: of one session's subscriptions/listen
		if c := sh.calls[jsonrpc.Key(subID)]; c != nil {
			nm, err1 := jsonrpc.ReplaceMember(meta, "io.modelcontextprotocol/subscriptionId", c.sessID)
			np, err2 := jsonrpc.ReplaceMember(params, "_meta", nm)
			if err1 == nil && err2 == nil {
				params, to = np, []*Session{c.s}
			}
		}
	case m.Method == "notifications/progress":
		tok, _ := jsonrpc.Member(params, "progressToken")
		if c := sh.tokens[jsonrpc.Key(tok)]; c != nil {
			if np, err := jsonrpc.ReplaceMember(params, "progressToken", c.token); err == nil {
				params, to = np, []*Session{c.s}
			}
		}
	case m.Method == "notifications/cancelled": // of a request the server made
		id, _ := jsonrpc.Member(params, "requestId")
		a := sh.asks[jsonrpc.Key(id)]
		if a != nil {
			delete(sh.asks, jsonrpc.Key(id))
		}
		sh.mu.Unlock()
		if a != nil && a.sessID != nil {
			reason, _ := jsonrpc.StringMember(params, "reason")
			a.s.conn.Lane().Cancel(a.sessID, errors.New(reason))
		}
		return
	case m.Method == "notifications/resources/updated":
		uri, _ := jsonrpc.StringMember(params, "uri")
		to = append(to, sh.subs[uri]...)
	case m.Method == "notifications/tasks/status":
		id, _ := jsonrpc.Member(params, "taskId")
		if s := sh.tasks[jsonrpc.Key(id)]; s != nil {
			to = []*Session{s}
		}
	case m.Method == "notifications/elicitation/complete":
		id, _ := jsonrpc.Member(params, "elicitationId")
		if s := sh.elicits[jsonrpc.Key(id)]; s != nil {
			delete(sh.elicits, jsonrpc.Key(id))
			to = []*Session{s}
		}
	case m.Method == "notifications/message":
		level, _ := jsonrpc.StringMember(params, "level")
		li := levelIndex(level)
		var cand []*Session
		_, related := jsonrpc.Member(meta, "io.modelcontextprotocol/related-task")
		if s, _ := sh.target(params); s != nil {
			cand = []*Session{s}
		} else if !related { // of no call, or of several: the server's own
			for s := range sh.sessions {
				cand = append(cand, s)
			}
		}
		for _, s := range cand {
			if s.level < 0 || li < 0 || li >= s.level {
				to = append(to, s)
			}
		}
	default: // list_changed and anything else: every session
		for s := range sh.sessions {
			to = append(to, s)
		}
	}
	sh.mu.Unlock()
	if len(to) == 0 {
		sh.logf("%s: %s for no session here: dropped", sh.name, m.Method)
		return
	}
	line := jsonrpc.AppendNotification(nil, m.Method, params)
	for _, s := range to {
		s.conn.Write(line)
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
