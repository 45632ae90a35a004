package aggregator

import (
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the client's side of the session (clientSession): what it
// declared at initialize, its log level, its gate and its in-flight calls.
// Every message the client sends enters at serve.go.

// clientSession is the client's side of the conversation: its connection,
// what it negotiated and declared, its requests in flight and the gate its
// children's early messages wait at.
type clientSession struct {
	conn  *jsonrpc.Conn // set in Serve before any child starts; nil in Check
	calls inflight.Table[*call]
	gate  clientGate

	serverInfo []byte // the aggregator's own serverInfo, which a client that gives no clientInfo is named by

	mu   sync.Mutex // protects init
	init clientInit
}

// clientInit is what the start of the session settled: the client's
// initialize (legacy era) or its first modern request.
type clientInit struct {
	received bool   // the session has begun
	era      era    // eraUnknown until it has
	version  string // the protocol version agreed
	caps     capabilities.Client
	info     []byte // the client's clientInfo, raw; nil when it gave none
	logLevel string // the level of the client's last logging/setLevel
}

// childMeta is the _meta of the modern era for a request to a modern
// child on the client's behalf: the modern version, the client's
// capabilities and clientInfo, and the level a legacy client set with
// logging/setLevel.
func (cs *clientSession) childMeta() []byte {
	s := cs.state()
	info := s.info
	if info == nil {
		info = cs.serverInfo
	}
	return eras.RequestMeta(s.caps.Raw(), info, s.logLevel)
}

// begin records the start of the session; it reports false when it began
// already.
func (s *clientSession) begin(init clientInit) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.init.received {
		return false
	}
	init.received = true
	s.init = init
	return true
}

// setLogLevel records the level a legacy client asked for, which modern
// children get in the _meta of its requests.
func (s *clientSession) setLogLevel(level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init.logLevel = level
}

// state returns what the start of the session settled (the zero value
// before it began).
func (s *clientSession) state() clientInit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.init
}
