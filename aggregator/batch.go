package aggregator

import (
	"sync"
)

// This file is a client's batch: the answers of its elements are collected
// and written as one line once none is owed (serve.go reads the
// batch in).

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
