package aggregator

import (
	"sync"
	"sync/atomic"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientSession is what the session knows of its client: its connection,
// what it negotiated and declared, its log level, its requests in flight
// and the gate its children's early messages wait at. Its methods are in
// this file (what its start settled, and what servers are told of it:
// the plan their sessions are opened with, the _meta of its requests), but
// its era, which adapter.go asks (modern). Every message the client sends
// enters at serve.go.
type clientSession struct {
	conn  *jsonrpc.Conn // set in Serve before any child starts; nil in Check
	calls inflight.Table[*call]
	gate  clientGate

	serverInfo []byte // the aggregator's own serverInfo, which a client that gives no clientInfo is named by

	// began is what the start of the session settled, read without a
	// lock on every message: never nil (New stores the zero clientInit,
	// the session not begun), replaced once, by begin, and never changed.
	began atomic.Pointer[clientInit]

	mu       sync.Mutex // protects logLevel
	logLevel string     // the level of the client's last logging/setLevel
}

// clientInit is what the start of the session settled: the client's
// initialize (legacy era) or its first modern request.
type clientInit struct {
	received bool   // the session has begun
	era      era    // eraUnknown until it has
	version  string // the protocol version agreed
	caps     capabilities.Client
	info     []byte // the client's clientInfo, raw; nil when it gave none
}

// settled is what the start of the session settled: the zero clientInit
// before it began.
func (cs *clientSession) settled() *clientInit { return cs.began.Load() }

// childMeta is the _meta of the modern era for a request to a modern
// child on the client's behalf: the modern version, the client's
// capabilities and clientInfo, and the level a legacy client set with
// logging/setLevel.
func (cs *clientSession) childMeta() []byte {
	return eras.RequestMeta(cs.began.Load().caps.Raw(), cs.info(), cs.level())
}

// info is the client's clientInfo, raw; the aggregator's serverInfo when
// it gave none.
func (cs *clientSession) info() []byte {
	if info := cs.began.Load().info; info != nil {
		return info
	}
	return cs.serverInfo
}

// plan is how the servers' sessions are opened for the client: a legacy
// server's initialize of version with the client's capabilities and
// clientInfo, after a server/discover probe when probe, and what they
// declared and listed remembered under memoryScope.
func (cs *clientSession) plan(version string, probe bool) server.Plan {
	b := jsonrpc.AppendString([]byte(`{"protocolVersion":`), version)
	b = append(append(b, `,"capabilities":`...), cs.began.Load().caps.Raw()...)
	b = append(append(b, `,"clientInfo":`...), cs.info()...)
	return server.Plan{Probe: probe, Init: append(b, '}'), Scope: cs.memoryScope()}
}

// memoryScope is what the servers' answers may depend on of the client,
// under which what they declare and list is remembered (server.Memory):
// the protocol version agreed and the capabilities the client declared,
// as it wrote them. nil before the session began.
func (cs *clientSession) memoryScope() []byte {
	s := cs.began.Load()
	if !s.received {
		return nil
	}
	return append(append([]byte(s.version), '\n'), s.caps.Raw()...)
}

// begin records the start of the session; it reports false when it began
// already.
func (s *clientSession) begin(init clientInit) bool {
	before := s.began.Load()
	if before.received {
		return false
	}
	init.received = true
	return s.began.CompareAndSwap(before, &init)
}

// setLogLevel records the level a legacy client asked for, which modern
// children get in the _meta of its requests.
func (s *clientSession) setLogLevel(level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logLevel = level
}

// level is the level of the client's last logging/setLevel, if any.
func (s *clientSession) level() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logLevel
}
