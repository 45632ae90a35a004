package aggregator

import (
	"fmt"
	"io"
	"sync"
)

// Logger writes the aggregator's diagnostics and the children's relayed
// stderr lines to one writer (stderr in production), one Write per line so
// that lines from many goroutines never interleave.
type Logger struct {
	prefix string
	debug  bool

	mu sync.Mutex // protects w
	w  io.Writer
}

// NewLogger returns a logger writing to w. Lines start with prefix; debug
// enables Debugf.
func NewLogger(w io.Writer, prefix string, debug bool) *Logger {
	return &Logger{w: w, prefix: prefix, debug: debug}
}

// Write writes p as it is, in one call; children's stderr lines come here.
func (l *Logger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Debugf logs when debugging is on.
func (l *Logger) Debugf(format string, args ...any) {
	if l.debug {
		l.printf("debug: ", format, args...)
	}
}

// Warnf logs a problem the aggregator works around.
func (l *Logger) Warnf(format string, args ...any) { l.printf("warning: ", format, args...) }

// Errorf logs a failure, such as a server that is dropped.
func (l *Logger) Errorf(format string, args ...any) { l.printf("error: ", format, args...) }

func (l *Logger) printf(level, format string, args ...any) {
	line := l.prefix + level + fmt.Sprintf(format, args...) + "\n"
	l.Write([]byte(line))
}
