package inflight

import (
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Request is the part of a request relayed to another peer that a cancel
// racing its sending needs: where it went and the cancel, whichever comes
// first; the other side acts on both.
type Request struct {
	mu        sync.Mutex    // protects the fields below
	via       *jsonrpc.Lane // the lane it went through, once sent
	sentID    []byte        // its id on the other peer's connection, once sent
	cancelled error         // the cancel, once it came
}

// Send sends the relayed request through via under a fresh id; w gets its
// answer. It returns the id and the cancel that came while it was being
// sent, if one did: the caller takes the request back then. An error means
// it was not sent, and w is not called.
func (s *Request) Send(via *jsonrpc.Lane, method string, w jsonrpc.Waiter, params ...[]byte) (id []byte, cancelled, err error) {
	id, err = via.GoParts(method, w, params...)
	if err != nil {
		return nil, nil, err
	}
	return id, s.Sent(via, id), nil
}

// IsCancelled reports whether the cancel came.
func (s *Request) IsCancelled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled != nil
}

// Sent records where the request went and returns the cancel that came
// first, if one did.
func (s *Request) Sent(via *jsonrpc.Lane, id []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.via, s.sentID = via, id
	return s.cancelled
}

// ID returns the lane and id the request went under, once sent.
func (s *Request) ID() (*jsonrpc.Lane, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.via, s.sentID
}

// Cancel records the cancel and returns where the request went, if it was
// sent.
func (s *Request) Cancel(cause error) (*jsonrpc.Lane, []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelled = cause
	return s.via, s.sentID
}
