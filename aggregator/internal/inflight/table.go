package inflight

import (
	"sync"
	"time"
)

// Table maps the ids of one id space (a peer's request ids, the
// progress tokens handed to the client) to what they stand for. The id
// mappings of calls, servers' requests, progress tokens and tasks are
// Tables (docs/architecture.md lists them, and the few that are not), with
// one rule for cleanup: an entry leaves its table exactly once, taken by
// whichever comes first of its answer, its cancel, or the end of either
// peer (Take, Remove, TakeAll),
// and whoever took it finishes it: answers, tells the other side, forgets
// what else it held. Nothing is called with the table's lock held.
//
// Its keys are ids as JSON values, never the bytes a peer wrote, so that
// an id written another way ("a\/b" for "a/b", 7.0 for 7) finds its entry
// and an id in use is refused however it is written: jsonrpc.Key of a
// request id or progress token; the decoded text of a task id or a
// requestState, which are strings (a task id that is not a string finds
// no task: the number 0 is not the task "").
type Table[E comparable] struct {
	mu   sync.Mutex // protects the fields below
	m    map[string]E
	idle chan struct{} // if set, closed when m empties
}

// Add enters e under id and reports false, entering nothing, when id is
// taken.
func (t *Table[E]) Add(id string, e E) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, taken := t.m[id]; taken {
		return false
	}
	if t.m == nil {
		t.m = make(map[string]E)
	}
	t.m[id] = e
	return true
}

// Get returns the entry of id without taking it.
func (t *Table[E]) Get(id string) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	return e, ok
}

// Take removes the entry of id and returns it.
func (t *Table[E]) Take(id string) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if ok {
		t.delete(id)
	}
	return e, ok
}

// Remove takes e out under id and reports whether it was there (a peer may
// reuse an id once its request has ended: only e itself is removed).
func (t *Table[E]) Remove(id string, e E) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.m[id]; !ok || cur != e {
		return false
	}
	t.delete(id)
	return true
}

// Len returns how many entries the table holds.
func (t *Table[E]) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// All returns what the table holds, leaving it.
func (t *Table[E]) All() []E {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]E, 0, len(t.m))
	for _, e := range t.m {
		all = append(all, e)
	}
	return all
}

// TakeAll empties the table and returns what it held.
func (t *Table[E]) TakeAll() []E {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]E, 0, len(t.m))
	for id, e := range t.m {
		all = append(all, e)
		t.delete(id)
	}
	return all
}

// delete removes id; with t.mu held.
func (t *Table[E]) delete(id string) {
	delete(t.m, id)
	if len(t.m) == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// WaitEmpty waits up to grace until the table is empty, or until abort
// closes.
func (t *Table[E]) WaitEmpty(grace time.Duration, abort <-chan struct{}) {
	t.mu.Lock()
	if len(t.m) == 0 {
		t.mu.Unlock()
		return
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	idle := t.idle
	t.mu.Unlock()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-abort:
	}
}
