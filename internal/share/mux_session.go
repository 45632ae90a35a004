package share

import (
	"errors"
	"strconv"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// What a session sends to a shared server: its requests under ids of the
// server's connection and their answers back, and what the mux keeps of
// them (tasks, log levels, subscriptions).

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
