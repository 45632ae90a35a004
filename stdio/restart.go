package stdio

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Started is a started process as Restartable sees it: its pipes and its
// life. *Process is one; tests may provide others.
type Started interface {
	Stdin() io.WriteCloser
	Stdout() io.Reader
	// Done is closed once the process has ended.
	Done() <-chan struct{}
	// Err says how the process ended; valid after Done.
	Err() error
	// Stop ends the process politely and waits for it.
	Stop() error
	// Terminate ends it at once and waits for it.
	Terminate() error
}

// Restartable is a process that may be started again, once, while a
// restart is armed: an MCP server of the 2025-11-25 era may exit on the
// 2026-07-28 era's server/discover probe (an unknown method before
// initialize), and is then run afresh. Whoever reads and writes through it
// does so across both runs, without knowing. It is itself a Started.
type Restartable struct {
	start func() (Started, error)
	done  chan struct{}       // closed once the last run has ended
	cur   atomic.Pointer[run] // replaced under mu; read without it on every read and write

	mu      sync.Mutex    // protects the fields below; held while a restart starts
	onRerun func()        // armed: called once the process was started again
	armed   chan struct{} // while armed; closed when disarmed or used
	err     error         // how the last run ended; set before done closes
}

// run is one start of the process.
type run struct {
	p     Started
	ended chan struct{} // closed once it has ended and the next run, if any, is current
}

func newRun(p Started) *run {
	return &run{p: p, ended: make(chan struct{})}
}

// NewRestartable watches first, which start can start again.
func NewRestartable(first Started, start func() (Started, error)) *Restartable {
	r := &Restartable{start: start, done: make(chan struct{})}
	r.cur.Store(newRun(first))
	go r.watch(r.cur.Load())
	return r
}

// watch waits for a run to end: it starts the next one when armed, else
// the process has ended.
func (r *Restartable) watch(cur *run) {
	<-cur.p.Done()
	cur.p.Stop() // reaps what is left of it
	r.mu.Lock()
	defer close(cur.ended)
	if r.onRerun != nil {
		onRerun := r.onRerun
		r.setArmed(nil)
		if p, err := r.start(); err == nil {
			next := newRun(p)
			r.cur.Store(next)
			go r.watch(next)
			r.mu.Unlock()
			onRerun()
			return
		}
	}
	r.err = cur.p.Err()
	r.mu.Unlock()
	close(r.done)
}

// Arm lets the process be started again if it ends before Disarm, and
// onRerun be called then.
func (r *Restartable) Arm(onRerun func()) {
	r.mu.Lock()
	r.setArmed(onRerun)
	r.mu.Unlock()
}

// setArmed arms (onRerun) or disarms (nil), with r.mu held.
func (r *Restartable) setArmed(onRerun func()) {
	if r.armed != nil {
		close(r.armed)
		r.armed = nil
	}
	r.onRerun = onRerun
	if onRerun != nil {
		r.armed = make(chan struct{})
	}
}

// state returns the current run and, while a restart is armed, a channel
// closed when it is disarmed (or used).
func (r *Restartable) state() (*run, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur.Load(), r.armed
}

// Disarm ends what Arm allowed.
func (r *Restartable) Disarm() { r.Arm(nil) }

func (r *Restartable) isArmed() bool {
	_, armed := r.state()
	return armed != nil
}

func (r *Restartable) current() *run { return r.cur.Load() }

func (r *Restartable) Stdin() io.WriteCloser { return restartStdin{r} }
func (r *Restartable) Stdout() io.Reader     { return restartStdout{r} }
func (r *Restartable) Done() <-chan struct{} { return r.done }

func (r *Restartable) Err() error {
	<-r.done
	return r.err
}

// Stop and Terminate end the current run, never to be started again, and
// wait for it.
func (r *Restartable) Stop() error {
	r.Disarm()
	err := r.current().p.Stop()
	<-r.done
	return err
}

func (r *Restartable) Terminate() error {
	r.Disarm()
	err := r.current().p.Terminate()
	<-r.done
	return err
}

type restartStdout struct{ r *Restartable }

// Read reads the current run's output; at its end, while a restart is armed,
// the next run's, if the process is started again.
func (o restartStdout) Read(b []byte) (int, error) {
	for {
		cur := o.r.current()
		n, err := cur.p.Stdout().Read(b)
		if n > 0 || err == nil {
			return n, nil
		}
		now, armed := o.r.state()
		switch {
		case now != cur: // started again already
		case armed == nil:
			return 0, err
		default:
			select {
			case <-cur.ended: // then read the next run, or this one's end again
			case <-armed: // disarmed: read this run's end again
			}
		}
	}
}

type restartStdin struct{ r *Restartable }

// Write writes to the current run's input. While a rerun is armed, a
// failed write (to a run that has just ended) is dropped, not an error:
// it was for that run only.
func (i restartStdin) Write(b []byte) (int, error) {
	n, err := i.r.current().p.Stdin().Write(b)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && i.r.isArmed() {
		return len(b), nil
	}
	return n, err
}

// SetWriteDeadline sets the write deadline of the current run's input,
// when it has deadlines (a pipe Go's poller watches), so that the child's
// connection can bound its writes in time. A later run starts without
// one.
func (i restartStdin) SetWriteDeadline(t time.Time) error {
	in, ok := i.r.current().p.Stdin().(interface{ SetWriteDeadline(time.Time) error })
	if !ok {
		return errors.ErrUnsupported
	}
	return in.SetWriteDeadline(t)
}

// Close closes the current run's input: the process is not started again.
func (i restartStdin) Close() error {
	i.r.Disarm()
	return i.r.current().p.Stdin().Close()
}
