package aggregator

import "time"

// This file is every real-time grace of the session: how long it waits
// for something that usually comes sooner before it goes on without it.

// answerGrace is how long the requests read before the client closed its
// input may take to be answered before the children are stopped, unless
// the end is hurried (Serve's ctx ends). It counts against the 3 s in which
// a polite shutdown ends (with 1 s + 1 s for a child that ignores both its
// stdin closing and SIGTERM: see stdio.DefaultStopGrace).
const answerGrace = 500 * time.Millisecond

// flushGrace bounds how long Serve waits at its end for the client to read
// what is still queued for it.
const flushGrace = time.Second

// deadTaskGrace is how long the tasks of a child that died stay known, so
// that a tasks/* on them is answered with the child's failure, when their
// ttl does not end them sooner.
const deadTaskGrace = 5 * time.Minute
