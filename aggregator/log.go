package aggregator

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
)

// This file is the aggregator's log (Logger): on stderr, never on stdout,
// through a bounded queue, with the config's secrets hidden.

// defaultLogQueue bounds the bytes of log lines waiting to be written.
const defaultLogQueue = 1 << 20

// Logger writes the aggregator's diagnostics and the children's relayed
// stderr lines to one writer (stderr in production), one Write per line so
// that lines from many goroutines never interleave.
//
// Logging never blocks: a line is queued in memory and a goroutine of the
// Logger, which runs only while there is something to write, writes the
// queue in order. A host that does not read our stderr therefore cannot
// stall the protocol. When the queue is full (1 MiB) a line is dropped and
// counted, and how many were dropped is written in their place: before the
// next line that fits, or once the writer has caught up. After a write fails (a closed stderr), every line is dropped
// silently.
type Logger struct {
	prefix string
	debug  bool
	w      io.Writer // written by the writer goroutine only
	limit  int       // bound on queued bytes; tests lower it before first use

	mu      sync.Mutex    // protects the fields below
	queue   [][]byte      // lines waiting to be written, oldest first
	queued  int           // bytes in queue and in the line being written
	dropped int           // lines dropped because the queue was full, not yet reported
	writing chan struct{} // while the writer goroutine runs: closed when it ends
	written int           // lines written so far
	broken  bool          // a write failed: nothing more is written

	hidden atomic.Pointer[strings.Replacer] // puts names in place of the values Hide was given; nil: none
	hideMu sync.Mutex                       // protects names; taken alone
	names  map[string]string                // value -> the name shown in its place
}

// NewLogger returns a logger writing to w. Lines start with prefix; debug
// enables Debugf.
func NewLogger(w io.Writer, prefix string, debug bool) *Logger {
	return &Logger{w: w, prefix: prefix, debug: debug, limit: defaultLogQueue}
}

// Write queues p, one whole line, to be written as it is in one call;
// children's stderr lines come here. It never blocks and never fails: p is
// copied, and dropped if the queue is full or the writer has failed.
func (l *Logger) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.enqueue(append([]byte(nil), p...))
	return len(p), nil
}

// Debugf logs when debugging is on.
func (l *Logger) Debugf(format string, args ...any) {
	if l.debug {
		l.printf("debug: ", format, args...)
	}
}

// Warnf logs a problem the aggregator works around, pointing to the
// README section that explains it (explained).
func (l *Logger) Warnf(format string, args ...any) { l.printf("warning: ", explained(format), args...) }

// Errorf logs a failure, such as a server that is dropped, pointing to
// the README section that explains it (explained).
func (l *Logger) Errorf(format string, args ...any) { l.printf("error: ", explained(format), args...) }

// seeErrors points a warning or an error to README's table of errors.
const seeErrors = " (see README.md#errors-you-may-meet)"

// explained is a warning's or an error's format with a pointer to the
// README section that explains it: the one it names, else the table of
// errors.
func explained(format string) string {
	if strings.Contains(format, "README.md#") {
		return format
	}
	return format + seeErrors
}

// Flush waits for the lines logged so far to be written and reports
// whether they were (or, after a write error, dropped). It gives up, and
// returns false, once the writer has written nothing for idle, as when
// nobody reads stderr; a host that reads gets every line, however many.
func (l *Logger) Flush(idle time.Duration) bool {
	for {
		l.mu.Lock()
		done, written := l.writing, l.written
		l.mu.Unlock()
		if done == nil {
			return true
		}
		t := time.NewTimer(idle)
		select {
		case <-done:
			t.Stop()
			continue // more may have been queued since
		case <-t.C:
		}
		l.mu.Lock()
		stuck := l.written == written
		l.mu.Unlock()
		if stuck {
			return false
		}
	}
}

// minHidden is the shortest value Hide hides: shorter ones (1, true,
// debug) are no secrets, and replacing them would garble every line.
const minHidden = 6

// Hide has the logger's own lines, and what Conceal is given, show the
// name in place of the value of each server's env entries (<env NAME>)
// and of each variable expanded in its entry (${NAME}): a token or a
// database URL never reaches a log through an error that quotes it. The
// servers' own stderr lines, relayed by Write, are left as they are (a
// client shows them in its log the same when it runs a server directly).
// Values of fewer than minHidden bytes are not hidden; a value once
// hidden stays hidden (a reload adds those of the servers it brings).
func (l *Logger) Hide(servers []config.Server) {
	l.hideMu.Lock()
	defer l.hideMu.Unlock()
	if l.names == nil {
		l.names = make(map[string]string)
	}
	add := func(value, name string) {
		if _, ok := l.names[value]; !ok && len(value) >= minHidden {
			l.names[value] = name
		}
	}
	for _, s := range servers {
		for _, v := range s.Vars {
			add(v.Value, "${"+v.Name+"}")
		}
		for _, v := range s.Env {
			add(v.Value, "<env "+v.Name+">")
		}
	}
	values := make([]string, 0, len(l.names))
	for v := range l.names {
		values = append(values, v)
	}
	// At one place in a line, the longest value wins: the Replacer tries
	// its pairs in order.
	slices.SortFunc(values, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, l.names[v])
	}
	l.hidden.Store(strings.NewReplacer(pairs...))
}

// Conceal returns s with the values Hide was given replaced by their
// names.
func (l *Logger) Conceal(s string) string {
	if r := l.hidden.Load(); r != nil {
		return r.Replace(s)
	}
	return s
}

// printf queues one line of the aggregator's own, the values Hide was
// given concealed. Every control character in it but a newline is escaped
// (printable.Append): what a server wrote is quoted where it is logged,
// and this makes sure that nothing slips through raw.
func (l *Logger) printf(level, format string, args ...any) {
	msg := l.Conceal(fmt.Sprintf(format, args...))
	line := make([]byte, 0, len(l.prefix)+len(level)+len(msg)+1)
	line = append(append(line, l.prefix...), level...)
	line = printable.Append(line, []byte(msg), '\n')
	l.enqueue(append(line, '\n'))
}

// enqueue queues line, which the Logger now owns, and starts the writer
// goroutine unless it runs.
func (l *Logger) enqueue(line []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.broken:
		return
	case l.queued+len(line) > l.limit:
		l.dropped++
		return
	}
	if l.dropped > 0 {
		// Where the lines went missing, though a noisy child may never
		// let the queue empty.
		count := l.droppedLine(l.dropped)
		l.dropped = 0
		l.queue = append(l.queue, count)
		l.queued += len(count)
	}
	l.queue = append(l.queue, line)
	l.queued += len(line)
	if l.writing == nil {
		l.writing = make(chan struct{})
		go l.writeQueue()
	}
}

// writeQueue writes queued lines in order, then the count of dropped lines
// if any, and ends when nothing is left or a write fails.
func (l *Logger) writeQueue() {
	inFlight := 0 // bytes of the queued line being written, still counted in queued
	l.mu.Lock()
	for {
		l.queued -= inFlight
		inFlight = 0
		var line []byte
		switch {
		case l.broken:
		case len(l.queue) > 0:
			line = l.queue[0]
			l.queue[0] = nil // not held once written
			l.queue = l.queue[1:]
			inFlight = len(line)
		case l.dropped > 0:
			line = l.droppedLine(l.dropped)
			l.dropped = 0
		}
		if line == nil {
			close(l.writing)
			l.writing = nil
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()

		_, err := l.w.Write(line)
		l.mu.Lock()
		l.written++
		if err != nil {
			l.broken = true
			l.queue, l.queued, l.dropped = nil, 0, 0
			inFlight = 0
		}
	}
}

// droppedLine is the warning that n lines were dropped.
func (l *Logger) droppedLine(n int) []byte {
	lines := " log lines"
	if n == 1 {
		lines = " log line"
	}
	return []byte(l.prefix + "warning: " + strconv.Itoa(n) + lines + " dropped: stderr was not read fast enough\n")
}
