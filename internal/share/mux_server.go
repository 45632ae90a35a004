package share

import (
	"errors"
	"fmt"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// What a shared server sends: its requests, relayed to the one session
// each belongs to (or answered with an error), and its notifications, to
// the sessions each is for.

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
