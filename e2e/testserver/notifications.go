package main

import (
	"context"
	"encoding/json"
)

// Notifications from the client: initialized (and -ask-on-init), cancelled,
// roots and progress.

// handleNotification handles one notification, on the reader goroutine.
func (s *server) handleNotification(m *message) {
	switch m.Method {
	case "notifications/initialized":
		s.mu.Lock()
		s.initialized = true
		s.mu.Unlock()
		if method := s.cfg.askOnInit; method != "" {
			// Sent before the next line is read: it comes before the
			// answer to any request read after notifications/initialized.
			id, ch := s.sendRequest(method, []byte(`{}`))
			go func() {
				m := s.await(context.Background(), id, ch)
				if m != nil {
					s.logf("asked %s on init: %s%s", method, m.Result, m.Error)
				}
			}()
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || len(p.RequestID) == 0 {
			s.logf("bad notifications/cancelled: %s", truncate(m.Params, 200))
			return
		}
		s.mu.Lock()
		c := s.inflight[idKey(p.RequestID)]
		s.mu.Unlock()
		if c == nil {
			s.logf("cancel for unknown request %s", p.RequestID)
			return
		}
		c.cancel()
	case "notifications/roots/list_changed":
		s.logf("roots changed")
	case "notifications/progress":
		var p struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.logf("client progress %s", p.ProgressToken)
	}
}
