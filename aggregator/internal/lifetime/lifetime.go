// Package lifetime is the life of one session: the context that ends when
// its shutdown begins, the goroutines serving it, and whether the shutdown
// may still be polite. The session and each of its servers share one.
package lifetime

import (
	"context"
	"sync"
)

// Session is the life of one session.
type Session struct {
	ctx    context.Context // ends when shutdown begins
	cancel context.CancelFunc

	mu       sync.Mutex     // protects stopping and the Add of handlers
	stopping bool           // shutdown has begun: no new handler starts
	handlers sync.WaitGroup // goroutines serving a request

	hurry     chan struct{} // closed when the shutdown may not wait politely
	hurryOnce sync.Once
}

// New returns the life of a session that has begun.
func New() *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{ctx: ctx, cancel: cancel, hurry: make(chan struct{})}
}

// Context ends when the shutdown begins.
func (l *Session) Context() context.Context { return l.ctx }

// Go runs f as a tracked goroutine and reports true, unless shutdown has
// begun.
func (l *Session) Go(f func()) bool {
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

// Stopping reports whether the shutdown has begun.
func (l *Session) Stopping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopping
}

// Hurry makes the shutdown, begun or to come, terminate the servers
// instead of stopping them politely.
func (l *Session) Hurry() {
	l.hurryOnce.Do(func() { close(l.hurry) })
}

// Hurried is closed once the shutdown may not wait politely.
func (l *Session) Hurried() <-chan struct{} { return l.hurry }

// End begins the shutdown: no goroutine starts through Go after it, and
// Context ends.
func (l *Session) End() {
	l.mu.Lock()
	l.stopping = true
	l.mu.Unlock()
	l.cancel()
}

// Wait waits for the goroutines started through Go.
func (l *Session) Wait() { l.handlers.Wait() }
