//go:build unix

package jsonrpc

import (
	"os"
	"testing"
)

// TestDirectWriteAllocatesNothing: the non-blocking write to a child's
// pipe, made for every request, reuses its one callback.
func TestDirectWriteAllocatesNothing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	write := directWriter(w)
	if write == nil {
		t.Fatal("no direct writer for a pipe from os.Pipe")
	}
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if n := testing.AllocsPerRun(100, func() {
		if n, err := write(line); err != nil || n != len(line) {
			t.Fatalf("write = %d, %v", n, err)
		}
	}); n != 0 {
		t.Errorf("a direct write made %v allocations, want 0", n)
	}
}
