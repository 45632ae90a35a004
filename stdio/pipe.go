package stdio

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// pipeReader is the parent's read end of one of the child's output pipes.
// It closes the pipe at the first error it returns, and once the child has
// exited it gives up on a read that finds no data for grace (ErrLeftOpen):
// by then the child's whole process group is dead, so only a process that
// escaped the group can still hold the write end.
//
// The limit is measured from the start of each read, never from the exit,
// so a caller that is slow to read loses nothing of what is in the pipe.
// Where the platform has no read deadlines on pipes (Windows) reads wait
// for the end of file as usual.
type pipeReader struct {
	f     *os.File
	grace time.Duration
	dead  atomic.Bool // the child has exited: reads are limited to grace

	// With a loop, reads are made by its coroutines (loopRead); see
	// [Loop].
	loop    *Loop
	raw     *rawRead    // the loop's non-blocking reads of f
	closed  atomic.Bool // Close was called: the next read fails
	restore func()      // undoes what Loop.Reader changed in f, if anything

	mu  sync.Mutex // protects err
	err error      // sticky error once the pipe is closed

	closeOnce sync.Once
}

func newPipeReader(f *os.File, grace time.Duration) *pipeReader {
	return &pipeReader{f: f, grace: grace}
}

// Read reads from the pipe. It is meant for one reader at a time.
func (r *pipeReader) Read(b []byte) (int, error) {
	if r.loop != nil {
		return r.loopRead(b)
	}
	// (An atomic flag in front of this lock made no difference end to end:
	// BenchmarkOverhead, head to head, 1.0x over 6 runs.)
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if r.dead.Load() {
		r.f.SetReadDeadline(time.Now().Add(r.grace))
	}
	n, err := r.f.Read(b)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = ErrLeftOpen
		}
		err = r.stop(err)
	}
	return n, err
}

// exited limits reads, the one in progress included, to grace from now on.
func (r *pipeReader) exited() {
	r.dead.Store(true)
	if r.loop != nil {
		r.loop.poke() // the read waiting, if any, then waits with a deadline
		return
	}
	r.f.SetReadDeadline(time.Now().Add(r.grace)) // fails harmlessly where unsupported
}

// Close closes the pipe; a read in progress returns an error. (With a
// loop, the read closes it, on the loop.)
func (r *pipeReader) Close() error {
	if r.loop != nil {
		r.closed.Store(true)
		r.loop.poke()
		return nil
	}
	r.closeFile()
	return nil
}

func (r *pipeReader) closeFile() {
	r.closeOnce.Do(func() { r.f.Close() })
}

// stop records err as the pipe's end, unless it has one already, closes
// the pipe and returns the end.
func (r *pipeReader) stop(err error) error {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	err = r.err
	r.mu.Unlock()
	r.closeFile()
	return err
}

// openPipes opens the child's stdin, stdout and stderr: the parent's ends
// (it writes the first, reads the others) and the child's, and the reader
// of the parent's end of stdout, which the loop reads if there is one.
func openPipes(loop *Loop, grace time.Duration) (parent, child [3]*os.File, stdout *pipeReader, err error) {
	for i := range 3 {
		var r, w *os.File
		if i == 1 && loop != nil {
			stdout, w, err = loop.loopPipe(grace)
			if err == nil {
				r = stdout.f
			}
		} else {
			r, w, err = os.Pipe()
		}
		if err != nil {
			closeAll(parent[:i])
			closeAll(child[:i])
			return parent, child, nil, err
		}
		if i == 0 { // the child reads its stdin
			r, w = w, r
		}
		parent[i], child[i] = r, w
	}
	if stdout == nil {
		stdout = newPipeReader(parent[1], grace)
	}
	return parent, child, stdout, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
