package aggregator

import (
	"context"
	"sync"
)

// lifetime is the life of one session: the context that ends when its
// shutdown begins, the goroutines serving it, and whether the shutdown
// may still be polite. The Aggregator and each child share it.
type lifetime struct {
	ctx    context.Context // ends when shutdown begins
	cancel context.CancelFunc

	mu       sync.Mutex     // protects stopping and the Add of handlers
	stopping bool           // shutdown has begun: no new handler starts
	handlers sync.WaitGroup // goroutines serving a request

	hurry     chan struct{} // closed when the shutdown may not wait politely
	hurryOnce sync.Once
}

func newLifetime() *lifetime {
	ctx, cancel := context.WithCancel(context.Background())
	return &lifetime{ctx: ctx, cancel: cancel, hurry: make(chan struct{})}
}

// goServe runs f as a tracked goroutine and reports true, unless shutdown
// has begun.
func (l *lifetime) goServe(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopping {
		return false
	}
	l.handlers.Add(1)
	go func() {
		defer l.handlers.Done()
		f()
	}()
	return true
}

func (l *lifetime) isStopping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopping
}

// hurryShutdown makes the shutdown, begun or to come, terminate the
// children instead of stopping them politely.
func (l *lifetime) hurryShutdown() {
	l.hurryOnce.Do(func() { close(l.hurry) })
}

// end begins the shutdown: no handler starts after it, and ctx ends.
func (l *lifetime) end() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.cancel()
}

// What a server needs of the session's life (server.Life).

func (l *lifetime) Context() context.Context { return l.ctx }
func (l *lifetime) Go(f func()) bool         { return l.goServe(f) }
func (l *lifetime) Stopping() bool           { return l.isStopping() }
func (l *lifetime) Hurried() <-chan struct{} { return l.hurry }
