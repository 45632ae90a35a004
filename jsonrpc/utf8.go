package jsonrpc

import "unicode/utf8"

// replacement is U+FFFD as UTF-8.
const replacement = "\uFFFD"

// ToValidUTF8 returns b with every byte that is not part of valid UTF-8
// replaced by U+FFFD, byte by byte, as encoding/json decodes such bytes
// (unlike bytes.ToValidUTF8, which replaces a run of them once). It
// returns b itself when b is valid UTF-8, and a new slice otherwise.
//
// A Conn applies it to every line it reads that holds a byte >= 0x80, so
// that the hooks only ever see valid UTF-8. Invalid bytes of valid JSON
// can only be inside strings, so the result is still the same JSON.
func ToValidUTF8(b []byte) []byte {
	out, _ := toValidUTF8(b)
	return out
}

// toValidUTF8 is ToValidUTF8 that also reports whether it replaced
// anything.
func toValidUTF8(b []byte) ([]byte, bool) {
	if utf8.Valid(b) {
		return b, false
	}
	out := make([]byte, 0, len(b)+len(b)/8+len(replacement))
	start := 0 // of the bytes not yet copied to out
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, b[start:i]...)
			out = append(out, replacement...)
			start = i + 1
		}
		i += size
	}
	return append(out, b[start:]...), true
}
