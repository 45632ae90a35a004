package aggregator

import (
	"sync"
	"time"
)

// This file is the table of ids in flight (idTable): what an answer, a
// cancel and a peer's end race for, taken once.

// idTable maps the ids of one id space (a peer's request ids, the
// progress tokens handed to the client) to what they stand for. The id
// mappings of calls, servers' requests, progress tokens and tasks are
// idTables (docs/architecture.md lists them, and the few that are not),
// with one rule for cleanup: an entry
// leaves its table exactly once, taken by whichever comes first of its
// answer, its cancel, or the end of either peer (take, remove, takeAll),
// and whoever took it finishes it: answers, tells the other side, forgets
// what else it held. Nothing is called with the table's lock held.
//
// Its keys are ids as JSON values, never the bytes a peer wrote, so that
// an id written another way ("a\/b" for "a/b", 7.0 for 7) finds its entry
// and an id in use is refused however it is written: jsonrpc.Key of a
// request id or progress token; the decoded text of a task id or a
// requestState, which are strings (a task id that is not a string finds
// no task: the number 0 is not the task "").
type idTable[E comparable] struct {
	mu   sync.Mutex // protects the fields below
	m    map[string]E
	idle chan struct{} // if set, closed when m empties
}

// add enters e under id and reports false, entering nothing, when id is
// taken.
func (t *idTable[E]) add(id string, e E) bool {
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

// get returns the entry of id without taking it.
func (t *idTable[E]) get(id string) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	return e, ok
}

// take removes the entry of id and returns it.
func (t *idTable[E]) take(id string) (E, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if ok {
		t.delete(id)
	}
	return e, ok
}

// remove takes e out under id and reports whether it was there (a peer may
// reuse an id once its request has ended: only e itself is removed).
func (t *idTable[E]) remove(id string, e E) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur, ok := t.m[id]; !ok || cur != e {
		return false
	}
	t.delete(id)
	return true
}

// len returns how many entries the table holds.
func (t *idTable[E]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// all returns what the table holds, leaving it.
func (t *idTable[E]) all() []E {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]E, 0, len(t.m))
	for _, e := range t.m {
		all = append(all, e)
	}
	return all
}

// takeAll empties the table and returns what it held.
func (t *idTable[E]) takeAll() []E {
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
func (t *idTable[E]) delete(id string) {
	delete(t.m, id)
	if len(t.m) == 0 && t.idle != nil {
		close(t.idle)
		t.idle = nil
	}
}

// waitEmpty waits up to grace until the table is empty, or until abort
// closes.
func (t *idTable[E]) waitEmpty(grace time.Duration, abort <-chan struct{}) {
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
