//go:build unix

package stdio

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Pollable makes a blocking pipe one Go's poller watches (deadlines work,
// a Close ends a read in progress) as a file of its own (closing it leaves
// the pipe's file open), leaves a file the poller watches already as it is,
// and a regular file too.
func TestPollable(t *testing.T) {
	t.Parallel()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w") // blocking: no poller
	defer r.Close()
	defer w.Close()
	if r.SetReadDeadline(time.Time{}) == nil {
		t.Fatal("a blocking pipe took a deadline")
	}
	pr, restore := Pollable(r)
	if pr == r {
		t.Fatal("a blocking pipe came back as it was")
	}
	if err := pr.SetReadDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Fatalf("no deadline on the pollable pipe: %v", err)
	}
	if _, err := pr.Read(make([]byte, 1)); !os.IsTimeout(err) {
		t.Errorf("a read with nothing to read ended with %v, want its deadline", err)
	}
	pr.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, err := pr.Read(make([]byte, 1)); done <- err }()
	pr.Close() // ends the read
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the read")
	}
	if _, err := r.Stat(); err != nil {
		t.Errorf("closing the pollable file closed the one it was made from: %v", err)
	}
	restore()

	pipeR, pipeW, err := os.Pipe() // the poller watches these already
	if err != nil {
		t.Fatal(err)
	}
	defer pipeR.Close()
	defer pipeW.Close()
	if same, _ := Pollable(pipeR); same != pipeR {
		t.Error("a pipe the poller watches already was made again")
	}

	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if same, _ := Pollable(file); same != file {
		t.Error("a regular file was made pollable")
	}
}
