package main

import (
	"context"
	"strconv"
)

// Requests from this server to its client (sampling, elicitation, roots, ping).
// Ids come from this server's own counter starting at 0, so that ids of
// several test servers behind one aggregator collide on purpose.

// sendRequest sends a request to the client and returns its id and the
// channel on which the answer will be delivered.
func (s *server) sendRequest(method string, params []byte) (id string, ch chan *message) {
	ch = make(chan *message, 1)
	s.mu.Lock()
	id = strconv.FormatInt(s.nextID, 10)
	s.nextID++
	s.pending[id] = ch
	s.mu.Unlock()
	s.out.writeLine(requestLine([]byte(id), method, params))
	return id, ch
}

// forget drops a pending request; a late answer is then logged and ignored.
func (s *server) forget(id string) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

// await waits for the answer to request id. If ctx ends first, it sends
// notifications/cancelled for the request to the client and returns nil.
func (s *server) await(ctx context.Context, id string, ch chan *message) *message {
	select {
	case m := <-ch:
		return m
	case <-ctx.Done():
		s.forget(id)
		s.sendCancelled(id, "tool call cancelled")
		return nil
	}
}

func (s *server) sendCancelled(id, reason string) {
	p := []byte(`{"requestId":`)
	p = append(p, id...)
	p = append(p, `,"reason":`...)
	p = append(p, jsonString(reason)...)
	p = append(p, '}')
	s.out.writeLine(notificationLine("notifications/cancelled", p))
}

// handleResponse delivers the client's answer to the waiting request.
func (s *server) handleResponse(m *message) {
	key := idKey(m.ID)
	s.mu.Lock()
	ch := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if ch == nil {
		s.logf("response for unknown id %s", key)
		return
	}
	ch <- m
}
