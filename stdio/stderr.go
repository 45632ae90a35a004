package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
)

const (
	tailLines   = 10   // stderr lines kept for ExitError
	tailLineMax = 1024 // bytes kept of each of them

	// lineMax is how much of a stderr line is relayed. A longer line is cut
	// to its first lineMax bytes, back to the start of a UTF-8 character,
	// and ends in " [cut: N bytes in all]", N being the length of the whole
	// line without its line end; the rest of it is read and dropped, never
	// held.
	lineMax = 16 << 10
)

// stderrLog copies a child's stderr to a writer line by line, labelled with the
// server key, cut to lineMax bytes and with its control characters but tabs
// escaped (printable.Append), and keeps the last lines for ExitError
// (quoted there).
type stderrLog struct {
	prefix string    // "[KEY] "
	w      io.Writer // nil: discard

	mu    sync.Mutex // protects lines
	lines []string   // the last non-blank lines, oldest first
}

func newStderrLog(key string, w io.Writer) *stderrLog {
	return &stderrLog{prefix: "[" + key + "] ", w: w}
}

// run copies r until it returns an error (io.EOF at the end). It holds at
// most lineMax+1 bytes of a line besides the reader's buffer, however long
// the line is.
func (rl *stderrLog) run(r io.Reader) {
	br := bufio.NewReaderSize(r, 32<<10)
	line := []byte(rl.prefix) // the prefix, then the line's first bytes; reused
	var out []byte            // the line as it is written; reused
	keepMax := len(rl.prefix) + lineMax + 1
	for {
		line = line[:len(rl.prefix)]
		var end lineEnd
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			end.add(frag)
			if room := keepMax - len(line); room > 0 {
				line = append(line, frag[:min(room, len(frag))]...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if end.total > 0 { // a line, or a last one without a newline
			n := end.textLen()
			if n > lineMax {
				line = line[:len(rl.prefix)+runeCut(line[len(rl.prefix):], lineMax)]
				line = appendCutMarker(line, n)
			} else {
				line = line[:len(rl.prefix)+n]
			}
			rl.keep(line[len(rl.prefix):])
			if rl.w != nil {
				// Escaped: a carriage return or an escape sequence would
				// let the server's text pass for another line.
				out = printable.Append(append(out[:0], rl.prefix...), line[len(rl.prefix):], '\t')
				rl.w.Write(append(out, '\n')) // one Write per line; errors are the writer's business
			}
		}
		if err != nil {
			return
		}
	}
}

// lineEnd follows a line as it is read, fragment by fragment, to tell its
// length without its end ("\n" or "\r\n") once the fragments are dropped.
type lineEnd struct {
	total      int  // bytes read, the newline included
	last, prev byte // the last two bytes read
}

func (e *lineEnd) add(frag []byte) {
	e.total += len(frag)
	for _, c := range frag[max(0, len(frag)-2):] {
		e.prev, e.last = e.last, c
	}
}

// textLen is the length of the line without its end. A last line without
// a newline loses a final "\r" too.
func (e *lineEnd) textLen() int {
	n, last := e.total, e.last
	if n > 0 && last == '\n' {
		n--
		last = e.prev
	}
	if n > 0 && last == '\r' {
		n--
	}
	return n
}

// runeCut returns where to cut text, which is longer than n bytes, so as to
// keep at most n bytes and no partial UTF-8 character: n, or a little less.
// Text that is not UTF-8 is cut at n.
func runeCut(text []byte, n int) int {
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	return n
}

// appendCutMarker appends the end of a cut line: " [cut: N bytes in all]".
func appendCutMarker(line []byte, n int) []byte {
	line = append(line, " [cut: "...)
	line = strconv.AppendInt(line, int64(n), 10)
	return append(line, " bytes in all]"...)
}

// keep remembers a line for the tail, cut to tailLineMax bytes; blank lines
// are not worth a place in an error message.
func (rl *stderrLog) keep(text []byte) {
	if len(bytes.TrimSpace(text)) == 0 {
		return
	}
	if len(text) > tailLineMax {
		n := tailLineMax
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = append(text[:n:n], "..."...)
	}
	s := string(text)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.lines) == tailLines {
		copy(rl.lines, rl.lines[1:])
		rl.lines = rl.lines[:tailLines-1]
	}
	rl.lines = append(rl.lines, s)
}

// tail returns a copy of the last lines.
func (rl *stderrLog) tail() []string {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.lines) == 0 {
		return nil
	}
	return append([]string(nil), rl.lines...)
}
