package aggregator

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/inflight"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// relayTables are the tables that tie ids across the client and the
// servers, besides a call's own id: the progress tokens of servers'
// requests handed to the client, the servers' tasks under the ids the
// client knows, and the client's tasks run for servers; with the one hook
// through which a server's message reaches the task tables (tiesToClient).
// All their methods are in this file, in that order: ties, progress, the
// servers' tasks (their ids, their sweep, the room of each server, their
// tasks/list), the client's tasks. What a task holds is tasks_state.go;
// the paths that call these methods are the tasks' own files and the
// routes. The Aggregator and each child share them; nothing else reaches
// into their fields.
type relayTables struct {
	log         *Logger
	progress    inflight.Table[progressRoute] // progress tokens handed to the client, by token
	tokens      atomic.Int64                  // the last progress token number handed out
	tasks       taskTable                     // the children's tasks, by the ids the client knows
	clientTasks taskIndex[*clientTask]        // the client's tasks for children, by the ids they know
}

// tiesToClient returns msg, a server's params or result on its way to the
// client, with its related-task tie told as the client may see it
// (relatedToClient, below): the task hook of every message a server
// sends up. A message that carries no tie, nearly every one, passes as it
// is, and no task code runs for it.
func (rt *relayTables) tiesToClient(c *child, msg []byte) []byte {
	if !eras.TiedToTask(msg) {
		return msg
	}
	return rt.relatedToClient(c, msg)
}

// relatedToClient returns msg (params or a result) with the child's task
// id in _meta's related-task replaced by the aggregator's. A related-task
// naming a task that is not one of the child's is taken out: a server
// speaks only for its own tasks ("A's deploy needs your password" from
// server B must not reach the client tied to A's task).
func (rt *relayTables) relatedToClient(c *child, msg []byte) []byte {
	return rewriteRelatedRaw(msg, func(id []byte) ([]byte, bool) {
		key, isString := jsonrpc.String(id)
		if t, ok := c.tasks.Get(key); ok && isString {
			return jsonrpc.AppendString(nil, t.id), true
		}
		rt.log.Debugf("server %q: related-task %s is none of its tasks; its tie taken out", c.key, id)
		return nil, false
	}, true)
}

// rewriteRelatedRaw replaces _meta[relatedTask].taskId in msg with the id
// (raw JSON) that ours maps it to; an id ours does not map is left as it
// is, or, with untie, taken out with its related-task.
func rewriteRelatedRaw(msg []byte, ours func(id []byte) ([]byte, bool), untie bool) []byte {
	return eras.EditMeta(msg, func(meta []byte) []byte {
		rel, ok := jsonrpc.Member(meta, relatedTask)
		if !ok {
			return nil
		}
		id, _ := jsonrpc.Member(rel, "taskId")
		mapped, ok := ours(id)
		if !ok && untie {
			return eras.RemoveMembers(meta, func(k string) bool { return k == relatedTask })
		}
		if !ok {
			return nil
		}
		return setMember(meta, relatedTask, setMember(rel, "taskId", mapped))
	})
}

// setMember returns the object obj with the member key set to value, or obj
// unchanged when it has no such member.
func setMember(obj []byte, key string, value []byte) []byte {
	out, err := jsonrpc.ReplaceMember(obj, key, value)
	if err != nil {
		return obj
	}
	return out
}

// relatedTask is the _meta key that ties a message to a task.
const relatedTask = eras.RelatedTask

// Progress tokens of servers' requests, handed to the client.

// remapProgressToken gives a child request's progress token a fresh name
// towards the client (two children may use the same token) and remembers
// the way back, under the key (jsonrpc.Key) of the fresh token: a client
// may write it back escaped otherwise ("mcp-simple-aggregator\/1"). It
// returns params unchanged, and no key, when there is no token.
func (rt *relayTables) remapProgressToken(c *child, params []byte) ([]byte, string) {
	var token, ours []byte
	newParams := eras.EditMeta(params, func(meta []byte) []byte {
		t, ok := jsonrpc.Member(meta, "progressToken")
		if !ok {
			return nil
		}
		o := jsonrpc.AppendString(nil, "mcp-simple-aggregator/"+strconv.FormatInt(rt.tokens.Add(1), 10))
		newMeta, err := jsonrpc.ReplaceMember(meta, "progressToken", o)
		if err != nil {
			return nil
		}
		token, ours = t, o
		return newMeta
	})
	if ours == nil {
		return params, ""
	}
	key := jsonrpc.Key(ours)
	rt.progress.Add(key, progressRoute{child: c, token: string(token)})
	return newParams, key
}

// forgetProgress forgets a progress token handed to the client: its
// request has ended.
func (rt *relayTables) forgetProgress(token string) { rt.progress.Take(token) }

// progressFromClient passes the client's progress on a child's request back
// to that child under the child's own token, as the child wrote it; the
// client's token is found by its value, however the client wrote it.
func (rt *relayTables) progressFromClient(params []byte) {
	token, ok := jsonrpc.Member(params, "progressToken")
	if !ok {
		return
	}
	r, ok := rt.progress.Get(jsonrpc.Key(token))
	if !ok {
		rt.log.Debugf("client progress for unknown token %s dropped", token)
		return
	}
	if p, err := jsonrpc.ReplaceMember(params, "progressToken", []byte(r.token)); err == nil {
		r.child.Conn().Notify("notifications/progress", p)
	}
}

// The servers' tasks, under ids of the aggregator's (tasks.go: for how long).

// register returns the task the child calls childID, entering it under a
// fresh id of the aggregator's when it is new. taskObj is the child's Task
// object, for its createdAt and ttl.
func (rt *relayTables) registerTask(c *child, childID []byte, taskObj []byte) (*task, bool) {
	key, ok := jsonrpc.String(childID)
	if !ok {
		return nil, false
	}
	if t, ok := c.tasks.Get(key); ok {
		return t, true
	}
	// Copies: slices would keep the child's whole line (a page of
	// tasks/list, say) alive as long as the task.
	seq := rt.tasks.seq.Add(1)
	t := &task{taskEntry: taskEntry{id: "mcp-simple-aggregator-task-" + strconv.FormatInt(seq, 10), child: c, seq: seq}, childID: bytes.Clone(childID)}
	createdAt, _ := jsonrpc.Member(taskObj, "createdAt")
	ttl, _ := jsonrpc.Member(taskObj, "ttl")
	t.createdAt, t.ttl = bytes.Clone(createdAt), bytes.Clone(ttl)
	t.expires = ttlExpiry(t.ttl)
	rt.maybeSweepTasks() // before t is in: a ttl of 0 does not end t before its id is given
	if !c.tasks.Add(key, t) {
		t, _ = c.tasks.Get(key) // registered meanwhile
		return t, t != nil
	}
	rt.tasks.byID.Add(t.id, t)
	if c.tasks.Len() > maxTasksPerServer {
		rt.makeRoom(c)
	}
	return t, true
}

// sweepEvery is how many tasks are registered between two sweeps of the
// expired ones.
const sweepEvery = 1024

// maybeSweepTasks sweeps both task tables every sweepEvery ids handed out.
func (rt *relayTables) maybeSweepTasks() {
	if n := rt.tasks.seq.Load(); n >= rt.tasks.sweepAt.Load() {
		rt.tasks.sweepAt.Store(n + sweepEvery)
		rt.sweepTasks(time.Now())
	}
}

// forgetTask removes the task from both tables.
func (rt *relayTables) forgetTask(t *task) {
	rt.tasks.byID.Remove(t.id, t)
	if key, ok := jsonrpc.String(t.childID); ok {
		t.child.tasks.Remove(key, t)
	}
}

// sweepTasks forgets the tasks whose ttl has run out, of both tables, but
// for those their server listed in its latest tasks/list pass: a server
// may keep a task past its ttl, and one it lists it still keeps.
func (rt *relayTables) sweepTasks(now time.Time) {
	if !rt.tasks.sweeping.TryLock() {
		return
	}
	defer rt.tasks.sweeping.Unlock()
	for _, t := range rt.tasks.byID.All() {
		if t.expired(now) && !t.child.listing.listedLast(t) {
			rt.forgetTask(t)
		}
	}
	rt.sweepClientTasks(now)
}

// forgetLater forgets every task of the child once deadTaskGrace has
// passed, unless the session ends first (stopForgetting).
func (rt *relayTables) forgetLater(c *child) {
	rt.tasks.forgetting.Add(1)
	timer := time.AfterFunc(deadTaskGrace, func() {
		defer rt.tasks.forgetting.Done()
		for _, t := range c.tasks.TakeAll() {
			rt.tasks.byID.Remove(t.id, t)
		}
	})
	rt.tasks.forgetMu.Lock()
	rt.tasks.timers = append(rt.tasks.timers, timer)
	rt.tasks.forgetMu.Unlock()
}

// stopForgetting stops the timers of forgetLater and waits for those that
// fired: nothing of the session runs after it.
func (rt *relayTables) stopForgetting() {
	rt.tasks.forgetMu.Lock()
	timers := rt.tasks.timers
	rt.tasks.timers = nil
	rt.tasks.forgetMu.Unlock()
	for _, t := range timers {
		if t.Stop() {
			rt.tasks.forgetting.Done()
		}
	}
	rt.tasks.forgetting.Wait()
}

// The room of each server: at most maxTasksPerServer tasks mapped.

// makeRoom forgets the tasks the child no longer keeps, if it can
// (forgetGone); else the oldest eighth of its tasks, finished ones first,
// and remembers their ids for the error a later use of them gets.
func (rt *relayTables) makeRoom(c *child) {
	if rt.forgetGone(c) > 0 {
		return
	}
	ts := c.tasks.All()
	slices.SortFunc(ts, func(x, y *task) int {
		if tx, ty := x.isTerminal(), y.isTerminal(); tx != ty {
			if tx {
				return -1
			}
			return 1
		}
		return int(x.seq - y.seq)
	})
	for _, t := range ts[:max(len(ts)/8, 1)] {
		rt.forgetTask(t)
		rt.tasks.evicted.add(t.id, c.key)
	}
	rt.log.Debugf("server %q: more than %d tasks known; the oldest %d forgotten", c.key, maxTasksPerServer, max(len(ts)/8, 1))
}

// forgetGone forgets up to an eighth of the bound of the child's tasks
// that the child no longer keeps, as its latest whole tasks/list pass
// shows (taskListing), the oldest first, and returns how many it forgot.
// A later use of their ids gets the error of a task its server no longer
// knows.
func (rt *relayTables) forgetGone(c *child) int {
	pass, noneGone := c.listing.whole()
	if noneGone {
		return 0
	}
	var gone []*task
	for _, t := range c.tasks.All() {
		if pass.lacks(t) {
			gone = append(gone, t)
		}
	}
	if len(gone) == 0 {
		c.listing.noneGoneIn(pass)
		return 0
	}
	slices.SortFunc(gone, func(x, y *task) int { return cmp.Compare(x.seq, y.seq) })
	gone = gone[:min(len(gone), max(maxTasksPerServer/8, 1))]
	for _, t := range gone {
		rt.forgetTask(t)
	}
	rt.log.Debugf("server %q: %d tasks it no longer lists forgotten to make room", c.key, len(gone))
	return len(gone)
}

// task is the task the client knows as id; nil, and the message of
// -32602, when the aggregator does not map it (any more).
func (rt *relayTables) task(id string) (*task, string) {
	if t, ok := rt.tasks.byID.Get(id); ok {
		return t, ""
	}
	if key, ok := rt.tasks.evicted.server(id); ok {
		return nil, fmt.Sprintf("Invalid params: unknown task %q: server %q had more than %d tasks, and mcp-simple-aggregator forgot its oldest to make room", id, key, maxTasksPerServer)
	}
	return nil, "Invalid params: unknown task " + strconv.Quote(id) + " (a task is forgotten once its ttl has run out, its server no longer knows it or its server is gone)"
}

// A server's tasks/list, mapped to the ids the client knows.

// lastTask is the number of the last task id handed out: a tasks/list
// pass begun now sees the tasks numbered up to it.
func (rt *relayTables) lastTask() int64 { return rt.tasks.seq.Load() }

// childTaskPage maps one page of a child's tasks/list, of its listing pass
// pass, to the aggregator's ids and returns its entries and the child's
// next cursor. The client sees every task the child lists, as directly:
// one the aggregator maps under its id; one it does not (created before
// the client's session, forgotten to make room, or past its ttl) under a
// new id, registered (listedTask). The tasks of the page the aggregator
// maps are marked listed first, so that none of them is taken for one the
// child no longer keeps when room is made for another; an entry whose task
// was forgotten all the same before the page was done (a running task
// makes room) is left out: its id would be unknown already.
func (rt *relayTables) childTaskPage(ch *child, resp *jsonrpc.Message, pass int64) ([][]byte, []byte, error) {
	items, err := ch.ListEntries(resp, "tasks/list", "tasks")
	if err != nil {
		return nil, nil, err
	}
	ts := make([]*task, len(items))
	for i, it := range items {
		if key, ok := taskIDMember(it); ok {
			if t, known := ch.tasks.Get(key); known {
				t.listed.Store(pass)
				ts[i] = t
			}
		}
	}
	next, ok := jsonrpc.Member(resp.Result, "nextCursor")
	if !ok || string(next) == "null" {
		next = nil
		ch.listing.finish(pass) // its last page: the child lists no other task
	}
	for i, it := range items {
		if ts[i] == nil {
			ts[i] = rt.listedTask(ch, it, pass)
		}
		if ts[i] != nil {
			ts[i].markTerminal(statusOf(it))
		}
	}
	var page [][]byte
	for i, t := range ts {
		if t != nil && rt.mapped(t) {
			page = append(page, setTaskID(items[i], t.id))
		}
	}
	return page, next, nil
}

// listedTask registers a task a child lists that the aggregator does not
// map, and returns it; nil when the task is left out. When the child's
// table is full, room is made first from the tasks the child no longer
// keeps (forgetGone); only when there are none, every task in the table is one
// the child still lists, or one created since, and:
//   - a running task still comes in, and the oldest finished task goes
//     (makeRoom), as for a task the client creates;
//   - a finished task is left out. Only here does the bound
//     (maxTasksPerServer) keep a task the child lists from the client: it
//     lists more than the bound, and taking room from the tasks it listed
//     would push them out one listing after another, each coming back
//     under a new id (the client's ids would churn instead of staying).
func (rt *relayTables) listedTask(ch *child, it []byte, pass int64) *task {
	full := ch.tasks.Len() >= maxTasksPerServer
	if full && rt.forgetGone(ch) == 0 && isTerminal(statusOf(it)) {
		return nil
	}
	childID, _ := jsonrpc.Member(it, "taskId")
	t, ok := rt.registerTask(ch, childID, it)
	if !ok {
		return nil
	}
	t.listed.Store(pass)
	return t
}

// mapped reports whether the task is still known under its id.
func (rt *relayTables) mapped(t *task) bool {
	cur, ok := rt.tasks.byID.Get(t.id)
	return ok && cur == t
}

// The client's tasks run for servers (client_tasks.go), by the client's id.

// clientTask is the client's task id, run for child c; nil, and the
// message of -32602, when it is none of c's (any more).
func (rt *relayTables) clientTask(c *child, id string) (*clientTask, string) {
	if t, ok := rt.clientTasks.byID.Get(id); ok && t.child == c {
		return t, ""
	}
	msg := "Invalid params: unknown task " + strconv.Quote(id)
	if key, evicted := rt.clientTasks.evicted.server(id); evicted && key == c.key {
		msg += fmt.Sprintf(": mcp-simple-aggregator keeps at most %d of this server's client tasks and forgot its oldest to make room", maxTasksPerServer)
	}
	return nil, msg
}

// registerClientTask records that the client's task clientID runs for
// child c. A task id the client gave another child already stays that
// child's.
func (rt *relayTables) registerClientTask(c *child, clientID, taskObj []byte) *clientTask {
	key, ok := jsonrpc.String(clientID)
	if !ok {
		return nil
	}
	ttl, _ := jsonrpc.Member(taskObj, "ttl")
	t := &clientTask{taskEntry{id: key, child: c, seq: rt.tasks.seq.Add(1), expires: ttlExpiry(ttl)}}
	if !rt.clientTasks.byID.Add(key, t) {
		t, _ = rt.clientTasks.byID.Get(key)
		return t
	}
	if c.clientTasks.Add(1) > int64(maxTasksPerServer) {
		rt.makeClientRoom(c)
	}
	rt.maybeSweepTasks()
	return t
}

// makeClientRoom forgets the oldest eighth of the tasks the client runs
// for child c, and remembers their ids for the error a later use gets.
func (rt *relayTables) makeClientRoom(c *child) {
	var ts []*clientTask
	for _, t := range rt.clientTasks.byID.All() {
		if t.child == c {
			ts = append(ts, t)
		}
	}
	slices.SortFunc(ts, func(x, y *clientTask) int { return cmp.Compare(x.seq, y.seq) })
	for _, t := range ts[:max(len(ts)/8, 1)] {
		rt.forgetClientTask(t)
		rt.clientTasks.evicted.add(t.id, c.key)
	}
}

// forgetClientTask removes the task from the table.
func (rt *relayTables) forgetClientTask(t *clientTask) {
	if rt.clientTasks.byID.Remove(t.id, t) {
		t.child.clientTasks.Add(-1)
	}
}

// sweepClientTasks forgets the client's tasks whose ttl has run out, and
// those of children that are gone.
func (rt *relayTables) sweepClientTasks(now time.Time) {
	for _, t := range rt.clientTasks.byID.All() {
		if t.expired(now) || t.child.dropped() {
			rt.forgetClientTask(t)
		}
	}
}

// relatedToChild returns msg with the aggregator's id of one of child c's
// tasks in _meta's related-task replaced by c's own (the client's answer
// to a request the child tied to its task).
func (rt *relayTables) relatedToChild(c *child, msg []byte) []byte {
	return rewriteRelatedRaw(msg, func(id []byte) ([]byte, bool) {
		key, isString := jsonrpc.String(id)
		if t, ok := rt.tasks.byID.Get(key); ok && isString && t.child == c {
			return t.childID, true
		}
		return nil, false
	}, false)
}

// childsClientTasks keeps, of the client's tasks/list result, the tasks it
// runs for child c, as the client wrote them; the client's cursor passes
// as it is.
func (rt *relayTables) childsClientTasks(c *child, result []byte) []byte {
	list, _ := jsonrpc.Member(result, "tasks")
	items, _ := jsonrpc.Elements(list)
	var kept [][]byte
	for _, it := range items {
		clientID, _ := jsonrpc.Member(it, "taskId")
		key, isString := jsonrpc.String(clientID)
		if t, ok := rt.clientTasks.byID.Get(key); ok && isString && t.child == c {
			kept = append(kept, it)
		}
	}
	return setMember(result, "tasks", jsonArray(kept))
}

// clientTaskStatus is the client's notifications/tasks/status of a task it
// runs for a child: to that child only, as it is.
func (rt *relayTables) clientTaskStatus(params []byte) {
	clientID, _ := jsonrpc.Member(params, "taskId")
	key, isString := jsonrpc.String(clientID)
	t, ok := rt.clientTasks.byID.Get(key)
	if !ok || !isString {
		rt.log.Debugf("client status of unknown task %s dropped", clientID)
		return
	}
	t.child.Conn().Notify("notifications/tasks/status", params)
}
