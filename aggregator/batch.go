package aggregator

import (
	"sync"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// batch collects the answers to the requests of one JSON-RPC batch, which
// are answered together, as one array, once the last is in.
type batch struct {
	a *Aggregator

	ids map[string]bool // the request ids of its elements, read so far; reader goroutine only

	mu      sync.Mutex // protects the fields below
	replies [][]byte   // by element; nil: nothing to say
	owed    int        // answers not in yet, plus one while elements are read
}

// claim records the id of an element and reports false when an earlier
// element had it, whether that one is in flight or was answered at once.
func (b *batch) claim(id string) bool {
	if b.ids[id] {
		return false
	}
	b.ids[id] = true
	return true
}

// clientBatch serves a batch of the client. Each element takes the route a
// message on a line of its own takes: notifications and answers are
// handled at once, and requests become calls, all admitted before any is
// served, so that an id in use, in flight or earlier in the same batch,
// gets -32600 whatever the timing.
func (a *Aggregator) clientBatch(elems [][]byte) {
	if len(elems) == 0 {
		a.client.conn.Write(errorLine(nil, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch"))
		return
	}
	b := &batch{a: a, ids: make(map[string]bool), replies: make([][]byte, len(elems)), owed: 1}
	var calls []*call
	for i, e := range elems {
		m, err := jsonrpc.Parse(e)
		switch {
		case err != nil:
			a.client.conn.Broken(m, err)
			if reply := a.invalidReply(e, m, err); reply != nil {
				b.owe()
				b.put(i, reply)
			}
		case m.IsResponse():
			a.client.conn.Deliver(m)
		case m.IsNotification():
			a.clientNotification(m)
		default:
			b.owe()
			if c := a.admit(m, b, i); c != nil {
				calls = append(calls, c)
			}
		}
	}
	for _, c := range calls {
		a.serve(c)
	}
	b.put(-1, nil) // every element is read
}

func (b *batch) owe() {
	b.mu.Lock()
	b.owed++
	b.mu.Unlock()
}

// put records the answer of element slot (-1: none) and writes the batch
// once nothing more is owed.
func (b *batch) put(slot int, line []byte) {
	b.mu.Lock()
	if slot >= 0 {
		b.replies[slot] = line
	}
	b.owed--
	done := b.owed == 0
	b.mu.Unlock()
	if !done {
		return
	}
	var out []byte
	for _, r := range b.replies {
		if r == nil {
			continue
		}
		if out == nil {
			out = append(out, '[')
		} else {
			out = append(out, ',')
		}
		out = append(out, r[:len(r)-1]...) // without its newline
	}
	if out != nil {
		b.a.client.conn.Write(append(out, "]\n"...))
	}
}
