package main

import (
	"context"
	"encoding/json"
	"time"
)

// The answer to initialize: protocol version, capabilities, server info
// and instructions, as the flags ask (-init-delay, -hang-init, -version,
// -caps, -tasks, -instructions). -exit-init is in loop.go.

// initialize answers initialize and keeps the client's params for the
// tool initparams.
func (s *server) initialize(ctx context.Context, params json.RawMessage) ([]byte, *rpcError) {
	if s.cfg.hangInit {
		<-ctx.Done()
		return nil, errNoReply
	}
	if s.cfg.initDelay > 0 {
		select {
		case <-time.After(s.cfg.initDelay):
		case <-ctx.Done():
			return nil, errNoReply
		}
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{code: -32602, message: "invalid initialize params: " + err.Error()}
		}
	}
	s.mu.Lock()
	s.initParams = append(json.RawMessage(nil), params...)
	s.mu.Unlock()

	version := s.cfg.version
	if version == "" {
		version = p.ProtocolVersion
	}
	if version == "" {
		version = "2025-11-25"
	}
	b := []byte(`{"protocolVersion":`)
	b = append(b, jsonString(version)...)
	b = append(b, `,"capabilities":{"tools":{"listChanged":true}`...)
	if s.cfg.caps["resources"] {
		if s.cfg.caps["subscribe"] {
			b = append(b, `,"resources":{"subscribe":true,"listChanged":true}`...)
		} else {
			b = append(b, `,"resources":{"listChanged":true}`...)
		}
	}
	if s.cfg.caps["prompts"] {
		b = append(b, `,"prompts":{"listChanged":true}`...)
	}
	if s.cfg.caps["logging"] {
		b = append(b, `,"logging":{}`...)
	}
	if s.cfg.caps["completions"] {
		b = append(b, `,"completions":{}`...)
	}
	if s.cfg.tasks {
		b = append(b, taskCapability...)
	}
	if s.cfg.capsJSON != "" {
		b = append(append(b, ','), s.cfg.capsJSON...)
	}
	b = append(b, `},"serverInfo":{"name":`...)
	b = append(b, jsonString(s.cfg.name)...)
	b = append(b, `,"version":"1.0.0"}`...)
	if s.cfg.instructions != "" {
		b = append(b, `,"instructions":`...)
		b = append(b, jsonString(s.cfg.instructions)...)
	}
	b = append(b, '}')
	return b, nil
}
