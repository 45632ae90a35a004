package stdio

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader gives n bytes of pattern, repeated, without holding them.
type repeatReader struct {
	pattern string
	off     int // bytes given so far
	n       int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.off == r.n {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.n-r.off)]
	for i := range p {
		p[i] = r.pattern[(r.off+i)%len(r.pattern)]
	}
	r.off += len(p)
	return len(p), nil
}

// relay runs a stderrLog labelled "k" over the concatenation of parts, each
// either a string or a *repeatReader, and returns the writes and the tail.
func relay(parts ...any) (writes, tail []string) {
	var readers []io.Reader
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			readers = append(readers, strings.NewReader(p))
		case *repeatReader:
			readers = append(readers, p)
		}
	}
	var rec recorder
	rl := newStderrLog("k", &rec)
	rl.run(io.MultiReader(readers...))
	return rec.get(), rl.tail()
}

func TestStderrLongLinesCut(t *testing.T) {
	t.Parallel()
	x := func(n int) string { return strings.Repeat("x", n) }
	cut := func(n int) string { return fmt.Sprintf(" [cut: %d bytes in all]", n) }
	e := "é" // two bytes
	for _, tc := range []struct {
		name  string
		parts []any
		want  []string
	}{
		{"at the limit", []any{x(lineMax) + "\nnext\n"},
			[]string{"[k] " + x(lineMax) + "\n", "[k] next\n"}},
		{"at the limit with CRLF", []any{x(lineMax) + "\r\nnext\r\n"},
			[]string{"[k] " + x(lineMax) + "\n", "[k] next\n"}},
		{"one byte over", []any{x(lineMax+1) + "\nnext\n"},
			[]string{"[k] " + x(lineMax) + cut(lineMax+1) + "\n", "[k] next\n"}},
		{"one byte over with CRLF", []any{x(lineMax+1) + "\r\nnext"},
			[]string{"[k] " + x(lineMax) + cut(lineMax+1) + "\n", "[k] next\n"}},
		{"CR and LF read apart", []any{&repeatReader{pattern: "x", n: 100 << 10}, "\r", "\n"},
			[]string{"[k] " + x(lineMax) + cut(100<<10) + "\n"}},
		{"back to a character start", []any{"a" + strings.Repeat(e, lineMax) + "\n"},
			[]string{"[k] a" + strings.Repeat(e, lineMax/2-1) + cut(1+2*lineMax) + "\n"}},
		{"not UTF-8", []any{strings.Repeat("\x80", lineMax+10) + "\n"},
			[]string{"[k] " + strings.Repeat(`\x80`, lineMax) + cut(lineMax+10) + "\n"}},
		{"control characters escaped", []any{"a\x1b[2K\rmcp-simple-aggregator: error: forged\x07\tb\n"},
			[]string{"[k] a\\x1b[2K\\rmcp-simple-aggregator: error: forged\\a\tb\n"}},
		{"last line without a newline", []any{x(lineMax + 5)},
			[]string{"[k] " + x(lineMax) + cut(lineMax+5) + "\n"}},
		{"many lines", []any{x(lineMax+1) + "\n" + x(3) + "\n" + x(lineMax+2) + "\n"},
			[]string{"[k] " + x(lineMax) + cut(lineMax+1) + "\n", "[k] xxx\n", "[k] " + x(lineMax) + cut(lineMax+2) + "\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := relay(tc.parts...)
			if len(got) != len(tc.want) {
				t.Fatalf("%d writes, want %d", len(got), len(tc.want))
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("write %d: ...%q (%d bytes), want ...%q (%d bytes)",
						i, got[i][max(0, len(got[i])-40):], len(got[i]), tc.want[i][max(0, len(tc.want[i])-40):], len(tc.want[i]))
				}
			}
		})
	}
}

// A line of many MiB without a newline costs a few KiB: the relay never
// holds it. Not parallel: it measures the allocations of the whole program.
func TestStderrHugeLineNotHeld(t *testing.T) {
	// Not parallel: it reads the whole process's memory statistics.
	const size = 64 << 20
	huge := &repeatReader{pattern: "0123456789", n: size}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, tail := relay(huge, "\nnext\n")
	runtime.ReadMemStats(&after)

	text := strings.Repeat("0123456789", lineMax/10+1)[:lineMax]
	want := []string{"[k] " + text + " [cut: 67108864 bytes in all]\n", "[k] next\n"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("writes (%d) do not hold the cut line and the next one: %.60q", len(got), got)
	}
	wantTail := []string{text[:tailLineMax] + "...", "next"}
	if fmt.Sprint(tail) != fmt.Sprint(wantTail) {
		t.Errorf("tail = %.60q", tail)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("relaying a %d-byte line allocated %d bytes", size, grew)
	}
}
