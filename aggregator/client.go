package aggregator

import (
	"errors"
	"fmt"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// clientSession is the client's side of the conversation: its connection,
// what it negotiated and declared, its requests in flight and the gate its
// children's early messages wait at.
type clientSession struct {
	conn     *jsonrpc.Conn // set in Serve before any child starts; nil in Check
	inflight idTable[*call]
	gate     clientGate

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

// clientMessage receives each request and notification of the client, on
// the reader goroutine.
func (a *Aggregator) clientMessage(m *jsonrpc.Message) {
	if m.IsNotification() {
		a.clientNotification(m)
		return
	}
	a.clientRequest(m)
}

// clientInvalid answers a line of the client that is not a valid message.
func (a *Aggregator) clientInvalid(line []byte, m *jsonrpc.Message, err error) {
	if reply := a.invalidReply(line, m, err); reply != nil {
		a.client.conn.Write(reply)
	}
}

// clientOversized answers a client line longer than MaxMessageSize, which
// was not read, with -32600 under its id when its head shows one, and
// goes on reading.
func (a *Aggregator) clientOversized(head []byte, size int64) error {
	id, _ := jsonrpc.HeadID(head) // nil: null
	a.log.Warnf("client sent a message of %d bytes, more than the limit of %d (--max-message-size); discarded: %s", size, a.opts.MaxMessageSize, printable.Clip(head))
	a.client.conn.Write(errorLine(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"Invalid Request: a message of %d bytes, more than mcp-simple-aggregator's limit of %d bytes (--max-message-size)", size, a.opts.MaxMessageSize)))
	return nil
}

// invalidReply logs a message of the client that is not valid (on a line
// of its own or in a batch) and returns its answer; nil for a broken
// answer (which the client's connection has taken: Conn.Broken) or a
// broken notification, which get none.
func (a *Aggregator) invalidReply(msg []byte, m *jsonrpc.Message, err error) []byte {
	a.log.Warnf("client sent a line that is not a valid JSON-RPC message (%v): %s", err, printable.Clip(msg))
	if m != nil && (m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil) || jsonrpc.IsBrokenNotification(msg, m)) {
		return nil
	}
	return invalidLine(m, err)
}

// clientNotification handles a notification of the client.
func (a *Aggregator) clientNotification(m *jsonrpc.Message) {
	if do, ok := clientNotifications[m.Method]; ok {
		do(a, m.Params)
		return
	}
	a.log.Debugf("client notification %s not relayed", m.Method)
}

// clientCancelled cancels the client request that notifications/cancelled
// names; an unknown id is ignored.
func (a *Aggregator) clientCancelled(params []byte) {
	id, reason, ok := cancelParams(params)
	if !ok {
		return
	}
	if c, ok := a.client.inflight.get(jsonrpc.Key(id)); ok {
		c.cancel(&cancelReason{reason: reason})
	}
}

// rootsChanged passes the client's roots/list_changed to every legacy
// child.
func (a *Aggregator) rootsChanged(params []byte) {
	for _, c := range a.children() {
		if c.initialized() {
			c.era().rootsChanged(c, params)
		}
	}
}

func invalidLine(m *jsonrpc.Message, err error) []byte {
	if errors.Is(err, jsonrpc.ErrParse) {
		return errorLine(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	}
	var id []byte
	if m != nil {
		id = m.ID
	}
	return errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
}

func errorLine(id []byte, code int, message string) []byte {
	e := jsonrpc.Error{Code: code, Message: message}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

func errorDataLine(id []byte, code int, message string, data []byte) []byte {
	e := jsonrpc.Error{Code: code, Message: message, Data: data}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

// responseLine answers id with a child's or the client's raw answer.
func responseLine(id []byte, resp *jsonrpc.Message) []byte {
	if resp.Error != nil {
		return jsonrpc.AppendError(nil, id, resp.Error)
	}
	return jsonrpc.AppendResult(nil, id, resp.Result)
}
