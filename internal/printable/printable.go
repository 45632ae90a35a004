// Package printable keeps what a server wrote from acting on the terminal
// or log viewer that shows the aggregator's stderr: a control character
// there can rewrite what is shown (an escape sequence moves the cursor,
// clears a line or sets the window's title; a carriage return lets a
// server's text pass for the aggregator's own line; a bidirectional
// control reorders what follows it).
package printable

import (
	"strconv"
	"unicode/utf8"
)

// IsControl reports whether r is a character a terminal or a log viewer
// may act on rather than show: the C0 and C1 controls, DEL, the line and
// paragraph separators and the bidirectional controls.
func IsControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// HasControl reports whether s holds a character IsControl reports.
func HasControl(s string) bool {
	for _, r := range s {
		if IsControl(r) {
			return true
		}
	}
	return false
}

// Append appends text to dst with every control character (IsControl) but
// keep escaped as Go writes it in a quoted string (\r, \x1b, \u202e), and
// every byte that is not UTF-8 as \xNN; the rest is copied as it is.
func Append(dst, text []byte, keep rune) []byte {
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\x`...)
			dst = append(dst, hex[text[0]>>4], hex[text[0]&0xf])
		case IsControl(r) && r != keep:
			q := strconv.QuoteRune(r) // '\x1b'
			dst = append(dst, q[1:len(q)-1]...)
		default:
			dst = append(dst, text[:size]...)
		}
		text = text[size:]
	}
	return dst
}

const hex = "0123456789abcdef"

// Clip is a peer's line as a log quotes it: its first 200 bytes in Go
// syntax (every control character and invalid byte escaped), and its
// length when it was cut.
func Clip(line []byte) string {
	const max = 200
	if len(line) > max {
		return strconv.Quote(string(line[:max])) + "... (" + strconv.Itoa(len(line)) + " bytes)"
	}
	return strconv.Quote(string(line))
}
