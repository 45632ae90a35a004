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

	mu  sync.Mutex // protects err
	err error      // sticky error once the pipe is closed

	closeOnce sync.Once
}

func newPipeReader(f *os.File, grace time.Duration) *pipeReader {
	return &pipeReader{f: f, grace: grace}
}

// Read reads from the pipe. It is meant for one reader at a time.
func (r *pipeReader) Read(b []byte) (int, error) {
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
	r.f.SetReadDeadline(time.Now().Add(r.grace)) // fails harmlessly where unsupported
}

// Close closes the pipe; a read in progress returns an error.
func (r *pipeReader) Close() error {
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
// (it writes the first, reads the others) and the child's. The parent's
// ends are read and written through Go's poller, where the system has one
// for pipes.
func openPipes() (parent, child [3]*os.File, err error) {
	for i := range 3 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(parent[:i])
			closeAll(child[:i])
			return parent, child, err
		}
		if i == 0 { // the child reads its stdin
			r, w = w, r
		}
		parent[i], child[i] = r, w
	}
	return parent, child, nil
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
}
