//go:build !linux

package stdio

import (
	"errors"
	"io"
	"os"
	"time"
)

// Loop reads pipes on one goroutine where the system has epoll (Linux);
// elsewhere NewLoop fails and a nil *Loop runs each function given to Go
// as a goroutine of its own.
type Loop struct{}

// NewLoop fails here: there is no epoll.
func NewLoop() (*Loop, error) { return nil, errors.New("stdio: no read loop on this system") }

// Go runs f as a goroutine.
func (l *Loop) Go(f func()) { go f() }

// Close does nothing.
func (l *Loop) Close() error { return nil }

// Reader fails: there is no loop.
func (l *Loop) Reader(f *os.File) (io.ReadCloser, error) {
	return nil, errors.New("stdio: no read loop")
}

func (l *Loop) poke()    {}
func (l *Loop) unwatch() {}

func (l *Loop) loopPipe(grace time.Duration) (*pipeReader, *os.File, error) {
	return nil, nil, errors.New("stdio: no read loop")
}

func (r *pipeReader) loopRead(b []byte) (int, error) { return 0, errors.New("stdio: no read loop") }

// rawRead is the loop's read, on Linux only.
type rawRead struct{}
