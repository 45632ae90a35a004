package aggregator

import "strconv"

// A server's bytes reach the aggregator's own lines (its log, --check)
// only quoted or escaped: a control character would reach the terminal
// that shows them, where an escape sequence can rewrite what is shown
// (move the cursor, clear a line, set the window's title) and a carriage
// return can make a server's text pass for the aggregator's.

// isControl reports whether r is a character a terminal or a log viewer
// may act on rather than show: C0 and C1 controls, DEL, the line and
// paragraph separators and the bidirectional controls (which reorder
// what follows).
func isControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// hasControl reports whether s holds a character isControl reports.
func hasControl(s string) bool {
	for _, r := range s {
		if isControl(r) {
			return true
		}
	}
	return false
}

// clipLine is a peer's line as a log quotes it: its first 200 bytes in Go
// syntax (every control character and invalid byte escaped), and its
// length when it was cut.
func clipLine(line []byte) string {
	const max = 200
	if len(line) > max {
		return strconv.Quote(string(line[:max])) + "... (" + strconv.Itoa(len(line)) + " bytes)"
	}
	return strconv.Quote(string(line))
}
