package aggregator

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
)

// This file is what the task tables hold (relayTables, relay.go): a
// task's entry and its id maps, the ids forgotten to make room, the
// statuses a server sent for a task not known yet, and a server's tasks/list
// passes. What moves tasks through them is relayTables' methods.

// taskIndex is the shape of both task tables, the servers' tasks (taskTable)
// and the client's: the tasks by the id the client knows,
// and the ids forgotten to make room.
type taskIndex[T comparable] struct {
	byID    inflight.Table[T]
	evicted evictedTasks // the ids forgotten to make room, with their server
}

// taskEntry is what both task tables hold of each task.
type taskEntry struct {
	id      string    // the id the client knows
	child   *child    // the server it belongs to
	seq     int64     // the order of registration, for forgetting the oldest
	expires time.Time // when its ttl runs out; zero: it has none
}

// expired reports whether the task's ttl had run out at now.
func (e *taskEntry) expired(now time.Time) bool {
	return !e.expires.IsZero() && now.After(e.expires)
}

// ttlExpiry is when the ttl of a Task object (raw, in milliseconds) runs
// out, from now; zero when it gives none that is a number of 0 or more.
func ttlExpiry(ttl []byte) time.Time {
	ms, err := strconv.ParseFloat(string(ttl), 64)
	if err != nil || ms < 0 {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(ms * float64(time.Millisecond)))
}

// task is a child's task, known to the client under id.
type task struct {
	taskEntry        // id: the aggregator's, shown to the client
	childID   []byte // the child's id, as it wrote it (a JSON string)
	// createdAt and ttl are the task's, as the child gave them, for the
	// status the client is sent when the child dies.
	createdAt, ttl []byte

	listed atomic.Int64 // the last of its child's tasks/list passes that listed it (taskListing)

	mu       sync.Mutex // protects terminal
	terminal bool       // completed, failed or cancelled
}

// taskTable is the aggregator's side of every child's tasks: by the id the
// client knows, and per child by the child's id. A task leaves both when
// its ttl has run out, when its child no longer knows it or is gone, when
// its child's table is full, or with the session.
type taskTable struct {
	taskIndex[*task]
	seq      atomic.Int64 // the last id handed out (the client's tasks are numbered with them)
	sweeping sync.Mutex   // one sweep at a time
	sweepAt  atomic.Int64 // the registration count at which the next sweep runs

	forgetMu   sync.Mutex     // protects timers
	timers     []*time.Timer  // forgetLater's, one per child that died
	forgetting sync.WaitGroup // forgetLater's timers not stopped
}

// clientTask is a task the client runs for a child.
type clientTask struct {
	taskEntry // id: the client's, which the child knows too; child: its owner
}

// maxTasksPerServer bounds the tasks of one server that the aggregator
// maps; makeRoom forgets an eighth of them when it is passed. (A variable
// for the tests.)
var maxTasksPerServer = 4096

// evictedTasks remembers, for the error a later use gets, the ids of the
// last maxEvictedKept tasks forgotten to make room, with their server.
type evictedTasks struct {
	mu    sync.Mutex // protects the fields below
	key   map[string]string
	order []string // oldest first
}

const maxEvictedKept = 4096

func (e *evictedTasks) add(id, serverKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.key == nil {
		e.key = make(map[string]string)
	}
	if len(e.order) >= maxEvictedKept {
		delete(e.key, e.order[0])
		e.order = e.order[1:]
	}
	e.key[id] = serverKey
	e.order = append(e.order, id)
}

// server returns the key of the server whose task id was forgotten to make
// room, if it was.
func (e *evictedTasks) server(id string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k, ok := e.key[id]
	return k, ok
}

// heldStatuses are a child's statuses of tasks not known yet, by the
// child's task id: at most heldStatusTasks tasks (the oldest make room),
// heldStatusPerTask statuses each.
type heldStatuses struct {
	mu    sync.Mutex // protects the fields below
	byID  map[string][][]byte
	order []string // the ids in byID, oldest first
}

const (
	heldStatusTasks   = 64
	heldStatusPerTask = 16
)

// hold keeps the status, and reports false when it cannot.
func (h *heldStatuses) hold(key string, params []byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = make(map[string][][]byte)
	}
	held, ok := h.byID[key]
	switch {
	case len(held) >= heldStatusPerTask:
		return false
	case !ok && len(h.order) >= heldStatusTasks:
		delete(h.byID, h.order[0])
		h.order = h.order[1:]
	}
	if !ok {
		h.order = append(h.order, key)
	}
	h.byID[key] = append(held, params)
	return true
}

// take returns and forgets the statuses held for key.
func (h *heldStatuses) take(key string) [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	held, ok := h.byID[key]
	if !ok {
		return nil
	}
	delete(h.byID, key)
	h.order = slices.DeleteFunc(h.order, func(k string) bool { return k == key })
	return held
}

// taskListing follows a child's tasks/list passes, each from its first
// page to its last, to tell the tasks the child still keeps from those it
// no longer does: the spec has every task a requestor may tasks/get in
// its tasks/list, so a task missing from a whole pass that began after it
// was registered is gone from the child.
type taskListing struct {
	mu       sync.Mutex // protects the fields below
	current  listPass   // the latest pass begun
	done     listPass   // the latest pass that reached its last page
	noneGone int64      // done.n once forgetGone found no task gone by it
}

// listPass is one tasks/list pass of a child.
type listPass struct {
	n     int64 // counts the passes begun, from 1
	lastT int64 // the last task registered (taskTable.seq) when it began
}

// begin begins a pass after task lastT, and returns its number.
func (l *taskListing) begin(lastT int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = listPass{n: l.current.n + 1, lastT: lastT}
	return l.current.n
}

// at returns the number of the pass under way (0: none began).
func (l *taskListing) at() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current.n
}

// finish records that pass n reached its last page, unless a later pass
// has begun meanwhile.
func (l *taskListing) finish(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n == l.current.n {
		l.done = l.current
	}
}

// whole returns the latest pass that reached its last page, and whether
// forgetGone found no task gone in it already.
func (l *taskListing) whole() (listPass, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.done, l.done.n == 0 || l.noneGone == l.done.n
}

// noneGoneIn records that no task of the child is gone by pass p (the tasks
// gone by one pass only ever become fewer).
func (l *taskListing) noneGoneIn(p listPass) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.noneGone = p.n
}

// lacks reports whether the whole pass p shows that the child no longer
// keeps t: it began after t was registered, and did not list it.
func (p listPass) lacks(t *task) bool {
	return p.n > 0 && t.seq <= p.lastT && t.listed.Load() < p.n
}

// listedLast reports whether the child listed t in its latest pass, whole
// or under way.
func (l *taskListing) listedLast(t *task) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := t.listed.Load()
	return n > 0 && (n == l.current.n || n == l.done.n)
}
