package jsonrpc

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
)

// stopsForCollection reports whether a collection started on another
// goroutine once work has begun ends before work does: whether work lets
// itself be stopped. A collection stops every goroutine twice; one in an
// uninterruptible 64 MiB copy or search holds it (and the whole process)
// until that ends. It tries up to 20 times, since the collection may lose
// the race to the copy when its goroutine is not scheduled at once (a
// loaded machine, -race); it never wins against work that cannot be
// stopped.
func stopsForCollection(t *testing.T, work func()) bool {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two Ps: the collection runs beside the work")
	}
	if raceEnabled {
		// The race detector makes a collection slower than the work, so the
		// collection loses the race whatever the work does: .ci/run runs
		// these tests without -race as well.
		t.Skip("under -race a collection outlasts the work; run without -race")
	}
	for try := 0; try < 20; try++ {
		var finished atomic.Bool
		start, collected := make(chan struct{}), make(chan bool)
		go func() {
			<-start
			runtime.GC()
			collected <- !finished.Load()
		}()
		close(start)
		work()
		finished.Store(true)
		if <-collected {
			return true
		}
	}
	return false
}

func TestAppendBulkStopsForACollection(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 64 MiB")
	}
	src := bytes.Repeat([]byte("x"), 64<<20)
	dst := make([]byte, 0, len(src)+1)
	dst = append(dst, src...) // its pages are the process's already
	if !stopsForCollection(t, func() { dst = appendBulk(dst[:0], src) }) {
		t.Fatal("a collection waited for the whole copy of 64 MiB")
	}
	if !bytes.Equal(dst, src) {
		t.Fatal("appendBulk copied something else")
	}
	if got := appendBulk([]byte("ab"), []byte("cd")); string(got) != "abcd" {
		t.Fatalf("appendBulk of a short one: %q", got)
	}
	if got := appendBulk(nil, src[:bulkPiece+3]); !bytes.Equal(got, src[:bulkPiece+3]) || cap(got) != bulkPiece+3 {
		t.Fatalf("appendBulk into nil: %d bytes, capacity %d", len(got), cap(got))
	}
}

func TestIndexByteBulkStopsForACollection(t *testing.T) {
	if testing.Short() {
		t.Skip("searches 64 MiB")
	}
	b := bytes.Repeat([]byte("x"), 64<<20)
	var at int
	if !stopsForCollection(t, func() { at = indexByteBulk(b, '"') }) {
		t.Fatal("a collection waited for the whole search of 64 MiB")
	}
	if at != -1 {
		t.Fatalf("found a quote at %d in none", at)
	}
	for _, i := range []int{0, 1, bulkPiece - 1, bulkPiece, bulkPiece + 1, 3*bulkPiece + 5, len(b) - 1} {
		b[i] = '"'
		if got := indexByteBulk(b, '"'); got != i {
			t.Errorf("quote at %d: found at %d", i, got)
		}
		b[i] = 'x'
	}
	if got := indexByteBulk(nil, '"'); got != -1 {
		t.Errorf("in nothing: %d", got)
	}
}

func TestJoinPiecesStopsForACollection(t *testing.T) {
	if testing.Short() {
		t.Skip("joins 64 MiB")
	}
	var pieces [][]byte
	for i := range 1024 {
		pieces = append(pieces, bytes.Repeat([]byte{'a' + byte(i%26)}, 64<<10))
	}
	var line []byte
	if !stopsForCollection(t, func() { line = joinPieces(pieces) }) {
		t.Fatal("a collection waited for the whole join of 64 MiB")
	}
	if !bytes.Equal(line, bytes.Join(pieces, nil)) || cap(line) != len(line) {
		t.Fatalf("joinPieces joined %d bytes (capacity %d), not the pieces", len(line), cap(line))
	}
	if got := joinPieces([][]byte{[]byte("ab"), nil, []byte("c")}); string(got) != "abc" {
		t.Fatalf("joinPieces of short ones: %q", got)
	}
}
