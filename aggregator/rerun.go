package aggregator

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// rerunProcess is a child's process that may be started again, once, while
// a rerun is armed: a legacy server may exit on the server/discover probe
// (an unknown method before initialize), and is then run afresh and
// initialized. The child's connection reads and writes through it across
// both runs, so that nothing else of the child knows.
type rerunProcess struct {
	start func() (Process, error)
	done  chan struct{}       // closed once the last run has ended
	cur   atomic.Pointer[run] // replaced under mu; read without it on every read and write

	mu      sync.Mutex    // protects the fields below; held while a rerun starts
	onRerun func()        // armed: called once the process was started again
	armed   chan struct{} // while armed; closed when disarmed or used
	err     error         // how the last run ended; set before done closes
}

// run is one start of the process.
type run struct {
	p     Process
	ended chan struct{} // closed once it has ended and the next run, if any, is current
}

func newRun(p Process) *run {
	return &run{p: p, ended: make(chan struct{})}
}

// errRerun ends a probe whose child exited and was started again.
var errRerun = errors.New("the server exited on server/discover and was started again")

func newRerunProcess(first Process, start func() (Process, error)) *rerunProcess {
	r := &rerunProcess{start: start, done: make(chan struct{})}
	r.cur.Store(newRun(first))
	go r.watch(r.cur.Load())
	return r
}

// watch waits for a run to end: it starts the next one when armed, else
// the process has ended.
func (r *rerunProcess) watch(cur *run) {
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

// arm lets the process be started again if it ends before disarm, and
// onRerun be called then.
func (r *rerunProcess) arm(onRerun func()) {
	r.mu.Lock()
	r.setArmed(onRerun)
	r.mu.Unlock()
}

// setArmed arms (onRerun) or disarms (nil), with r.mu held.
func (r *rerunProcess) setArmed(onRerun func()) {
	if r.armed != nil {
		close(r.armed)
		r.armed = nil
	}
	r.onRerun = onRerun
	if onRerun != nil {
		r.armed = make(chan struct{})
	}
}

// state returns the current run and, while a rerun is armed, a channel
// closed when it is disarmed (or used).
func (r *rerunProcess) state() (*run, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur.Load(), r.armed
}

func (r *rerunProcess) disarm() { r.arm(nil) }

func (r *rerunProcess) isArmed() bool {
	_, armed := r.state()
	return armed != nil
}

func (r *rerunProcess) current() *run { return r.cur.Load() }

func (r *rerunProcess) Stdin() io.WriteCloser { return rerunStdin{r} }
func (r *rerunProcess) Stdout() io.Reader     { return rerunStdout{r} }
func (r *rerunProcess) Done() <-chan struct{} { return r.done }

func (r *rerunProcess) Err() error {
	<-r.done
	return r.err
}

// Stop and Terminate end the current run, never to be started again, and
// wait for it.
func (r *rerunProcess) Stop() error {
	r.disarm()
	err := r.current().p.Stop()
	<-r.done
	return err
}

func (r *rerunProcess) Terminate() error {
	r.disarm()
	err := r.current().p.Terminate()
	<-r.done
	return err
}

type rerunStdout struct{ r *rerunProcess }

// Read reads the current run's output; at its end, while a rerun is armed,
// the next run's, if the process is started again.
func (o rerunStdout) Read(b []byte) (int, error) {
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

type rerunStdin struct{ r *rerunProcess }

// Write writes to the current run's input. While a rerun is armed, a
// failed write (to a run that has just ended) is dropped, not an error:
// it was for that run only.
func (i rerunStdin) Write(b []byte) (int, error) {
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
func (i rerunStdin) SetWriteDeadline(t time.Time) error {
	in, ok := i.r.current().p.Stdin().(interface{ SetWriteDeadline(time.Time) error })
	if !ok {
		return errors.ErrUnsupported
	}
	return in.SetWriteDeadline(t)
}

// Close closes the current run's input: the process is not started again.
func (i rerunStdin) Close() error {
	i.r.disarm()
	return i.r.current().p.Stdin().Close()
}
