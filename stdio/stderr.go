package stdio

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
)

const (
	tailLines   = 10   // stderr lines kept for ExitError
	tailLineMax = 1024 // bytes kept of each of them
)

// stderrLog copies a child's stderr to a writer line by line, labelled with the
// server key, and keeps the last lines for ExitError.
type stderrLog struct {
	prefix string    // "[KEY] "
	w      io.Writer // nil: discard

	mu    sync.Mutex // protects lines
	lines []string   // the last non-blank lines, oldest first
}

func newStderrLog(key string, w io.Writer) *stderrLog {
	return &stderrLog{prefix: "[" + key + "] ", w: w}
}

// run copies r until it returns an error (io.EOF at the end).
func (rl *stderrLog) run(r io.Reader) {
	br := bufio.NewReaderSize(r, 32<<10)
	buf := []byte(rl.prefix)
	for {
		line := buf[:len(rl.prefix)]
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			line = append(line, frag...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		text := bytes.TrimSuffix(line[len(rl.prefix):], []byte("\n"))
		text = bytes.TrimSuffix(text, []byte("\r"))
		if len(line) > len(rl.prefix) { // a line, or a last one without a newline
			rl.keep(text)
			if rl.w != nil {
				line = append(line[:len(rl.prefix)+len(text)], '\n')
				rl.w.Write(line) // one Write per line; errors are the writer's business
			}
		}
		if cap(line) <= 64<<10 {
			buf = line // reuse it; the prefix is still in place
		} else {
			buf = []byte(rl.prefix) // do not hold on to a huge line
		}
		if err != nil {
			return
		}
	}
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
