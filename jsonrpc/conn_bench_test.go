package jsonrpc

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"slices"
	"testing"
	"time"
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

// BenchmarkHugeLine: a request of 50 MiB (one string, as a file sent as a
// tool's argument) read by Run from a pipe, with a ping written right
// behind it, beside two plain copies of the same bytes through a pipe of
// the same kind, in turn in each op, so that all see the same machine.
// Reported, medians over the ops: copy-ms (io.Copy to io.Discard, to the
// last byte: the bytes pass through one small buffer), keep-ms
// (bufio.Reader.ReadBytes: the line copied into memory of its own, as any
// reader that hands a line on must), read-ms (from the first byte written
// to the huge request's Handle: the line found, kept and checked),
// behind-ms (from when the writer could write the ping, its huge write
// done, to the ping's Handle) and behind-max-ms.
//
//	go test -run '^$' -bench HugeLine -benchtime 10x ./jsonrpc/
func BenchmarkHugeLine(b *testing.B) {
	var huge []byte
	huge = append(huge, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"files__write","arguments":{"pad":"`...)
	huge = append(huge, bytes.Repeat([]byte("x"), 50<<20)...)
	huge = append(huge, "\"}}}\n"...)
	ping := []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n")
	var copies, keeps, reads, behinds []float64
	for range b.N {
		copies = append(copies, ms(pipeCopy(b, huge, func(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) })))
		keeps = append(keeps, ms(pipeCopy(b, huge, func(r io.Reader) (int64, error) {
			line, err := bufio.NewReaderSize(r, maxHead).ReadBytes('\n')
			return int64(len(line)), err
		})))
		read, behind := pipeRun(b, huge, ping)
		reads, behinds = append(reads, ms(read)), append(behinds, ms(behind))
	}
	b.ReportMetric(medianOf(copies), "copy-ms")
	b.ReportMetric(medianOf(keeps), "keep-ms")
	b.ReportMetric(medianOf(reads), "read-ms")
	b.ReportMetric(medianOf(behinds), "behind-ms")
	b.ReportMetric(slices.Max(behinds), "behind-max-ms")
	b.ReportMetric(0, "ns/op")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// pipeCopy writes line through a pipe whose other end read reads, and
// returns how long until its last byte was read.
func pipeCopy(b *testing.B, line []byte, read func(io.Reader) (int64, error)) time.Duration {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	go func() {
		w.Write(line)
		w.Close()
	}()
	n, err := read(r)
	if err != nil || n != int64(len(line)) {
		b.Fatalf("copied %d bytes of %d: %v", n, len(line), err)
	}
	return time.Since(start)
}

// pipeRun writes huge then ping through a pipe that a Conn reads, and
// returns how long until huge was handed to Handle from its first byte
// written, and until ping was from when its write could begin.
func pipeRun(b *testing.B, huge, ping []byte) (read, behind time.Duration) {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	handled := make(chan time.Time, 2)
	c := NewConn(r, io.Discard, Options{
		Queue:       true,
		MaxLineSize: 256 << 20,
		Handle:      func(*Message) { handled <- time.Now() },
	})
	ran := make(chan error, 1)
	go func() { ran <- c.Run() }()
	start := time.Now()
	w.Write(huge)
	pingAt := time.Now()
	w.Write(ping)
	w.Close()
	read, behind = (<-handled).Sub(start), (<-handled).Sub(pingAt)
	if err := <-ran; err != io.EOF {
		b.Fatal(err)
	}
	return read, behind
}
