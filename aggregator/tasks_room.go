package aggregator

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
)

// This file bounds the tasks the aggregator maps for one server
// (maxTasksPerServer) and says what became of an id it forgot.

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

// unknownTask is the message of -32602 for a task id the aggregator does
// not map (any more).
func (rt *relayTables) unknownTask(id string) string {
	if key, ok := rt.tasks.evicted.server(id); ok {
		return fmt.Sprintf("Invalid params: unknown task %q: server %q had more than %d tasks, and mcp-simple-aggregator forgot its oldest to make room", id, key, maxTasksPerServer)
	}
	return "Invalid params: unknown task " + strconv.Quote(id) + " (a task is forgotten once its ttl has run out, its server no longer knows it or its server is gone)"
}
