package aggregator

import (
	"slices"
	"sync"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the state of a modern client's call to a legacy server that
// may take input (exchange): what it asks of the client and the set of them
// a server has. How an exchange runs is input_modern.go.

// exchange is a call of a modern client to a legacy child that may take
// input, from when it is sent to when the child answers it for good.
type exchange struct {
	parked  *inflight.Table[*exchange] // where it waits for the client's retry (the Aggregator's)
	timeout time.Duration              // how long it waits there (Options.InputTimeout)
	log     *Logger
	c       *child
	origin  *call  // the call the child got; its answer comes to origin
	method  string // the method a retry must have

	mu     sync.Mutex // protects the fields below
	waiter *call      // the client's call waiting now; nil while parked
	asks   []inputAsk // the child's requests not answered yet
	next   int        // numbers the asks' keys
	token  string     // the requestState handed out, while parked
	timer  *time.Timer
	final  *jsonrpc.Message // the child's answer, when it came while parked
	ended  bool
}

// exchangeSet is a child's exchanges in flight.
type exchangeSet struct {
	mu sync.Mutex
	xs []*exchange
}

// inputAsk is a child's request waiting for the client's input.
type inputAsk struct {
	key    string
	id     []byte // the child's id
	method string
	params []byte
}

func (s *exchangeSet) add(x *exchange) {
	s.mu.Lock()
	s.xs = append(s.xs, x)
	s.mu.Unlock()
}

func (s *exchangeSet) remove(x *exchange) {
	s.mu.Lock()
	s.xs = slices.DeleteFunc(s.xs, func(y *exchange) bool { return y == x })
	s.mu.Unlock()
}

// sole returns the one exchange in flight, and how many there are.
func (s *exchangeSet) sole() (*exchange, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.xs) != 1 {
		return nil, len(s.xs)
	}
	return s.xs[0], 1
}
