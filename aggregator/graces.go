package aggregator

import "time"

// graces are how long the aggregator waits, in real time, for something
// that usually comes sooner before it goes on without it: a zero field
// is its default. Tests set them (Options.graces), so that a test of what
// happens when a wait runs out does not take a second; a test in which
// the awaited thing does come keeps the default.
type graces struct {
	exit      time.Duration // a server's exit after its stdout ended, or the reverse: server.DefaultExitGrace
	answer    time.Duration // the client's requests at the end of its input: answerGrace
	flush     time.Duration // the client's output at the end of the session: flushGrace
	deadTasks time.Duration // the tasks of a child that died: deadTaskGrace
}

// forAnswers is g.answer, or answerGrace.
func (g graces) forAnswers() time.Duration { return orDefault(g.answer, answerGrace) }

// forFlush is g.flush, or flushGrace.
func (g graces) forFlush() time.Duration { return orDefault(g.flush, flushGrace) }

// forDeadTasks is g.deadTasks, or deadTaskGrace.
func (g graces) forDeadTasks() time.Duration { return orDefault(g.deadTasks, deadTaskGrace) }

// orDefault is d, or def when d is not positive.
func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
