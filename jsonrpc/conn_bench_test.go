package jsonrpc

import (
	"io"
	"testing"
)

// repeatReader yields line n times, then io.EOF, without holding more than
// the one line: a stream of any length at no cost in memory.
type repeatReader struct {
	line []byte
	n    int64 // lines left, the current one included
	off  int   // bytes of the current line already read
}

func (r *repeatReader) Read(p []byte) (int, error) {
	read := 0
	for read < len(p) && r.n > 0 {
		k := copy(p[read:], r.line[r.off:])
		read += k
		r.off += k
		if r.off == len(r.line) {
			r.off = 0
			r.n--
		}
	}
	if read == 0 {
		return 0, io.EOF
	}
	return read, nil
}

// BenchmarkRun reads lines through Run and dispatches them: the cost per
// line of reading, framing and parsing.
func BenchmarkRun(b *testing.B) {
	for _, bm := range benchLines() {
		b.Run(bm.name, func(b *testing.B) {
			line := append(append([]byte(nil), bm.line...), '\n')
			handled, delivered := 0, 0
			c := NewConn(&repeatReader{line: line, n: int64(b.N)}, io.Discard, Options{
				Handle:    func(*Message) { handled++ },
				Unmatched: func(*Message) { delivered++ },
			})
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			b.ResetTimer()
			if err := c.Run(); err != io.EOF {
				b.Fatal(err)
			}
			if handled+delivered != b.N {
				b.Fatalf("%d lines dispatched, want %d", handled+delivered, b.N)
			}
		})
	}
}

// discard is a writer that is not a file, so that Options.Queue sends
// every line through the flusher goroutine.
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// BenchmarkQueuedWrite writes lines through the queue and its flusher.
func BenchmarkQueuedWrite(b *testing.B) {
	line := AppendNotification(nil, "notifications/progress", []byte(`{"progressToken":1,"progress":2}`))
	c := NewConn(nil, discard{}, Options{Queue: true})
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := c.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	c.WaitWrites(0)
}
