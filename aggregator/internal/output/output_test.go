package output

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// The client's output passes write deadlines on to a pipe that has them,
// so that lines go out at once; a write cut by its deadline is no failure
// (the client is slow, not gone), while a failed write is.
func TestClientOutputDeadlines(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	o := New(w)
	if err := o.SetWriteDeadline(time.Now().Add(time.Millisecond)); err != nil {
		t.Skipf("pipes have no write deadlines here: %v", err) // Windows
	}
	if _, err := o.Write([]byte(strings.Repeat("x", 1<<20))); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a write to a pipe nobody reads ended with %v, want its deadline", err)
	}
	select {
	case <-o.Broken():
		t.Fatal("a write cut by its deadline broke the output")
	default:
	}
	o.SetWriteDeadline(time.Time{})
	r.Close()
	if _, err := o.Write([]byte("x")); err == nil {
		t.Fatal("a write to a closed pipe succeeded")
	}
	select {
	case <-o.Broken():
	default:
		t.Error("a failed write did not break the output")
	}
	if New(&strings.Builder{}).SetWriteDeadline(time.Now()) == nil {
		t.Error("a writer without deadlines took one")
	}
}
