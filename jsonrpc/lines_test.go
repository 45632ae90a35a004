package jsonrpc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// requestOfSize returns a request line of exactly n bytes, newline not
// included, under the id id.
func requestOfSize(id, n int) []byte {
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m","params":{"pad":"`, id)
	line = append(line, bytes.Repeat([]byte("x"), n-len(line)-3)...)
	return append(line, `"}}`...)
}

type oversizedCall struct {
	head []byte
	size int64
}

// TestOversizedLinesAreSkipped: a line over MaxLineSize goes to Oversized
// with its first bytes (up to 64 KiB) and its size, the id in them can be
// found with HeadID, and the lines after it are dispatched; a line at the
// limit is dispatched as usual.
func TestOversizedLinesAreSkipped(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1000, 100 << 10} { // in the buffer, and gathered across buffers
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole reads":     func(r io.Reader) io.Reader { return r },
			"one-byte reads":  iotest.OneByteReader,
			"half-full reads": iotest.HalfReader,
		} {
			t.Run(fmt.Sprintf("limit %d, %s", limit, name), func(t *testing.T) {
				watchdog(t, deadlockTimeout)
				atLimit := requestOfSize(1, limit)
				overBy1 := requestOfSize(2, limit+1)
				big := requestOfSize(3, 200<<10)
				good := requestOfSize(4, 100)
				last := requestOfSize(5, limit+10) // at the end, with no newline
				input := bytes.Join([][]byte{atLimit, overBy1, big, good, last}, []byte("\n"))

				var handled []string
				var oversized []oversizedCall
				c := NewConn(wrap(bytes.NewReader(input)), io.Discard, Options{
					MaxLineSize: limit,
					Handle:      func(m *Message) { handled = append(handled, string(m.ID)) },
					Oversized: func(head []byte, size int64) error {
						oversized = append(oversized, oversizedCall{bytes.Clone(head), size})
						return nil
					},
				})
				if err := c.Run(); err != io.EOF {
					t.Errorf("Run = %v, want io.EOF", err)
				}
				if want := []string{"1", "4"}; fmt.Sprint(handled) != fmt.Sprint(want) {
					t.Errorf("Handle got ids %v, want %v", handled, want)
				}
				want := []struct {
					line []byte
					id   string
				}{{overBy1, "2"}, {big, "3"}, {last, "5"}}
				if len(oversized) != len(want) {
					t.Fatalf("Oversized called %d times, want %d", len(oversized), len(want))
				}
				for i, w := range want {
					got := oversized[i]
					if got.size != int64(len(w.line)) {
						t.Errorf("line %s: Oversized got size %d, want %d", w.id, got.size, len(w.line))
					}
					if !bytes.Equal(got.head, w.line[:min(len(w.line), 64<<10)]) {
						t.Errorf("line %s: Oversized got a head of %d bytes, not the line's first %d", w.id, len(got.head), min(len(w.line), 64<<10))
					}
					if id, ok := HeadID(got.head); !ok || string(id) != w.id {
						t.Errorf("line %s: HeadID(head) = %s, %v", w.id, id, ok)
					}
				}
			})
		}
	}
}

// TestOversizedLineEndsRun: when Oversized refuses a line, or there is no
// Oversized, Run ends with ErrLineTooLong and pending calls fail with it.
func TestOversizedLineEndsRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		oversized func([]byte, int64) error
		want      []error
	}{
		{"refused", func([]byte, int64) error { return errBoom }, []error{ErrLineTooLong, errBoom}},
		{"no hook", nil, []error{ErrLineTooLong}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handled := make(chan *Message, 1)
			p := newFakePeer(t, Options{
				MaxLineSize: 200,
				Oversized:   tc.oversized,
				Handle:      func(m *Message) { handled <- m },
			}, nil)
			res := goCall(context.Background(), p.conn, "m", nil)
			p.mustReadLine()
			go p.send(string(requestOfSize(9, 201)) + "\n" + string(requestOfSize(10, 80)) + "\n")
			r := await(t, res, "the pending call")
			for _, want := range append(tc.want, ErrClosed) {
				if !errors.Is(r.err, want) {
					t.Errorf("the pending call failed with %v, want %v in it", r.err, want)
				}
			}
			err := p.waitRun()
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("Run = %v, want %v in it", err, want)
				}
			}
			select {
			case m := <-handled:
				t.Errorf("the line after the oversized one was handled: %s", m.ID)
			default:
			}
		})
	}
}

// allocated returns how many bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestOversizedLineIsNotKept: a 64 MiB line through a 1 MiB limit is read
// by, not stored.
func TestOversizedLineIsNotKept(t *testing.T) {
	// Not parallel: it counts the bytes the whole process allocates.
	watchdog(t, deadlockTimeout)
	const pad = 64 << 20
	prefix := `{"jsonrpc":"2.0","id":8,"method":"m","params":{"pad":"`
	suffix := `"}}` + "\n" + string(requestOfSize(9, 100)) + "\n"
	input := io.MultiReader(strings.NewReader(prefix),
		&repeatReader{line: bytes.Repeat([]byte("x"), 64<<10), n: pad / (64 << 10)},
		strings.NewReader(suffix))
	var handled []string
	var size int64
	c := NewConn(input, io.Discard, Options{
		MaxLineSize: 1 << 20,
		Handle:      func(m *Message) { handled = append(handled, string(m.ID)) },
		Oversized: func(head []byte, n int64) error {
			size = n
			return nil
		},
	})
	var err error
	n := allocated(func() { err = c.Run() })
	if err != io.EOF {
		t.Errorf("Run = %v, want io.EOF", err)
	}
	if want := int64(len(prefix) + pad + 3); size != want {
		t.Errorf("Oversized got size %d, want %d", size, want)
	}
	if len(handled) != 1 || handled[0] != "9" {
		t.Errorf("Handle got ids %v, want [9]", handled)
	}
	if n > 8<<20 {
		t.Errorf("reading a 64 MiB line through a 1 MiB limit allocated %d MiB", n>>20)
	}
}

// TestLongLineCostsTwiceItsSize: a line under the limit but longer than
// the buffer is read at the cost of about twice its size, as
// bufio.Reader.ReadBytes reads it.
func TestLongLineCostsTwiceItsSize(t *testing.T) {
	// Not parallel: it counts the bytes the whole process allocates.
	watchdog(t, deadlockTimeout)
	const size = 16 << 20
	line := append(requestOfSize(1, size), '\n')
	var handled int
	c := NewConn(bytes.NewReader(line), io.Discard, Options{
		MaxLineSize: 2 * size,
		Handle:      func(*Message) { handled++ },
	})
	n := allocated(func() { c.Run() })
	if handled != 1 {
		t.Fatalf("Handle called %d times, want 1", handled)
	}
	if n > 2*size+1<<20 {
		t.Errorf("reading a %d MiB line allocated %.1f MiB", size>>20, float64(n)/(1<<20))
	}
	t.Logf("reading a %d MiB line allocated %.2f MiB", size>>20, float64(n)/(1<<20))
}

// chunkReader returns at most a random number of bytes a read, from 1 to
// max.
type chunkReader struct {
	r   io.Reader
	rng *rand.Rand
	max int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), 1+c.rng.IntN(c.max))])
}

// TestLineReaderSplitsAsReadBytes: lines of any length, around the sizes
// of the buffer and of the pieces, read in reads of any size, come out
// as bufio.Reader.ReadBytes splits them (the error that ended the stream
// with the last one), and a line over the limit as its first bytes and
// its size, with the lines after it unchanged.
func TestLineReaderSplitsAsReadBytes(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 0))
	sizes := []int{0, 1, 100, maxHead - 1, maxHead, maxHead + 1, bulkPiece - 1, bulkPiece, bulkPiece + maxHead + 5, 3*bulkPiece + 7}
	for round := range 300 {
		var lines [][]byte
		for range 1 + rng.IntN(6) {
			line := make([]byte, sizes[rng.IntN(len(sizes))]+rng.IntN(3))
			for i := range line {
				line[i] = 'a' + byte(rng.IntN(26))
			}
			lines = append(lines, append(line, '\n'))
		}
		if rng.IntN(2) == 0 { // no newline at the end
			last := lines[len(lines)-1]
			lines[len(lines)-1] = last[:len(last)-1]
		}
		limit := []int{0, 50, maxHead, bulkPiece + 3, 2 * bulkPiece}[rng.IntN(5)]
		var r io.Reader = bytes.NewReader(bytes.Join(lines, nil))
		switch rng.IntN(4) {
		case 0:
			r = iotest.DataErrReader(r)
		case 1:
			r = iotest.HalfReader(r)
		case 2:
			r = &chunkReader{r: r, rng: rng, max: 1 + rng.IntN(3*maxHead)}
		}
		lr := newLineReader(r, limit)
		for i, want := range lines {
			line, long, err := lr.next()
			if wantErr := error(nil); i == len(lines)-1 && !bytes.HasSuffix(want, []byte("\n")) {
				wantErr = io.EOF
				if err != wantErr {
					t.Fatalf("round %d, line %d: error %v, want %v", round, i, err, wantErr)
				}
			} else if err != nil {
				t.Fatalf("round %d, line %d: error %v", round, i, err)
			}
			content := bytes.TrimSuffix(want, []byte("\n"))
			if limit > 0 && len(content) > limit {
				if line != nil || long == nil || long.size != int64(len(content)) || !bytes.Equal(long.head, content[:min(len(content), maxHead)]) {
					t.Fatalf("round %d, line %d of %d bytes over %d: got a line of %d bytes, %v", round, i, len(content), limit, len(line), long)
				}
				continue
			}
			if long != nil || !bytes.Equal(line, want) {
				t.Fatalf("round %d, line %d: got %d bytes (long %v), want %d", round, i, len(line), long, len(want))
			}
		}
		if bytes.HasSuffix(lines[len(lines)-1], []byte("\n")) {
			if line, long, err := lr.next(); len(line) > 0 || long != nil || err != io.EOF {
				t.Fatalf("round %d: after the last line, %d bytes, %v, %v; want io.EOF", round, len(line), long, err)
			}
		}
	}
}

// TestPlainPiecesChangeNothing: a line of several buffers, read by Run
// (which steps over the pieces it found plain inside a string), is taken
// or refused exactly as when every byte of it is scanned: with one byte of
// every kind (a quote, a backslash and escapes, a control byte, ASCII or
// not, invalid UTF-8, a newline, a space) at offsets all around the
// pieces' edges, inside the long string and outside it, in a line with
// spaces before it (the pieces then start before what is scanned), a line
// whose long string is text (escapes, escaped quotes, UTF-8: at every
// offset of a piece's edge as the offsets move) and a line whose long run
// is not a string (plain pieces outside a string).
func TestPlainPiecesChangeNothing(t *testing.T) {
	t.Parallel()
	type result struct {
		id, params, err string
		nonASCII        bool
	}
	summary := func(m *Message, err error, line []byte) result {
		r := result{nonASCII: hasNonASCII(line)}
		if m != nil {
			r.id, r.params = string(m.ID), fmt.Sprintf("%x", sha256.Sum256(m.Params))
		}
		if err != nil {
			r.err = err.Error()
		}
		return r
	}
	var got []result
	opts := Options{
		Handle:  func(m *Message) { got = append(got, summary(m, nil, m.Params)) },
		Invalid: func(line []byte, m *Message, err error) { got = append(got, summary(m, err, line)) },
	}
	const size = 3*maxHead + 100
	prefix := `{"jsonrpc":"2.0","id":7,"method":"m","params":{"text":"`
	array := `{"jsonrpc":"2.0","id":7,"method":"m","params":[1`
	var offsets []int
	for k := 0; k <= 3; k++ {
		for _, d := range []int{-8, -2, -1, 0, 1, 7} {
			if at := k*maxHead + d; at >= 0 && at < size {
				offsets = append(offsets, at)
			}
		}
	}
	offsets = append(offsets, len(prefix)-1, len(prefix), maxHead+maxHead/2)
	inserts := map[string][]string{
		"text": {`"`, `\`, `\n`, `\u00e9`, `\u00`, `\x`, "\x01", "\n", " ", "\x80", `",`, `"}}` + "\n"},
		"string": {`"`, `\`, `\n`, `\u00e9`, `\x`, "\x01", "\x1f", "\x7f", "\n", " ", "\x80", "é", "\xff", `",`, `"}`, `"}}` + "\n",
			`\\"`, `x\\"`, `xx\\"`, `xxx\\"`, // an escaped backslash first in a piece, then a quote
			`\\\\\"\"\"\"", "y" "`}, // as many escaped quotes as not: the string ends, a member without a colon
		"array": {`"`, ",", ",,", " ", "x", "\n"},
	}
	for n, at := range offsets {
		lead := []string{"", " ", "\t\t\t"}[n%3]
		for _, kind := range []string{"string", "text", "array"} {
			for _, ins := range inserts[kind] {
				body, end := prefix+strings.Repeat("x", size), `"}}`
				switch text := `The \"fox\" is é; \u00e9\t\\ jumps over the lazy dog, and then it runs on and on and on, far away from the words before it, as a line of a file does when it is long enough for a piece to hold few escapes, fewer than one in 32 bytes.\n`; kind {
				case "text":
					body = prefix + strings.Repeat(text, size/len(text))
				case "array":
					body, end = array+strings.Repeat(",1", size/2), `]}`
				}
				line := []byte(lead + body[:at] + ins + body[at:] + end)
				want := func() []result { // each line of it dispatched as is, every byte scanned
					got = nil
					c := NewConn(nil, io.Discard, opts)
					for _, l := range bytes.SplitAfter(line, []byte("\n")) {
						c.dispatch(bytes.Clone(l), nil)
					}
					return got
				}()
				got = nil
				c := NewConn(bytes.NewReader(append(line, '\n')), io.Discard, opts)
				if err := c.Run(); err != io.EOF {
					t.Fatalf("Run = %v", err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%q at %d in the %s of a line (%q before it): Run gave\n%.300v\nwant\n%.300v", ins, at, kind, lead, got, want)
				}
			}
		}
	}
}

// nothingReader returns no bytes and no error, or, with count set, a
// count it cannot have read.
type nothingReader struct{ count int }

func (r nothingReader) Read([]byte) (int, error) { return r.count, nil }

// TestLineReaderGivesUpOnABrokenReader: a reader that returns nothing,
// again and again, ends the stream with io.ErrNoProgress rather than
// spinning; one that claims more bytes than it was given, or fewer than
// none, ends it with an error rather than a panic; the line read before
// comes out first.
func TestLineReaderGivesUpOnABrokenReader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		count int
		want  string
	}{{0, io.ErrNoProgress.Error()}, {-1, "impossible count"}, {maxHead + 1, "impossible count"}} {
		lr := newLineReader(io.MultiReader(strings.NewReader("a line\n"), nothingReader{tc.count}), 0)
		if line, _, err := lr.next(); string(line) != "a line\n" || err != nil {
			t.Fatalf("count %d: the line before: %q, %v", tc.count, line, err)
		}
		line, long, err := lr.next()
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(line) > 0 || long != nil {
			t.Fatalf("count %d: %q, %v, %v; want an error saying %q", tc.count, line, long, err, tc.want)
		}
	}
}
