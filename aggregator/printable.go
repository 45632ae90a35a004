package aggregator

import "strconv"

// A server's bytes reach the aggregator's own lines (its log, --check)
// only quoted or escaped: a control character would reach the terminal
// that shows them, where an escape sequence can rewrite what is shown
// (move the cursor, clear a line, set the window's title) and a carriage
// return can make a server's text pass for the aggregator's.

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
