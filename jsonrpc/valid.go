package jsonrpc

// A validating JSON scanner. Every line a Conn reads goes through it once:
// Parse checks the line and finds its members in the same pass, so that no
// byte is looked at twice on the way from one peer to the other. It accepts
// exactly what encoding/json.Valid accepts (FuzzValid checks that), at
// several times its speed.
//
// Like encoding/json.Valid it does not check UTF-8; instead it reports
// whether a string held any byte >= 0x80, so that only lines with such
// bytes are checked for UTF-8 (by a Conn, which replaces what is invalid).
// Outside strings, valid JSON is ASCII: a line the scanner accepts without
// seeing such a byte is ASCII throughout.

import (
	"encoding/binary"
	"unicode/utf8"
)

// maxDepth is the deepest nesting accepted, as in encoding/json.
const maxDepth = 10000

// Valid reports whether b is one JSON value, surrounded by optional
// whitespace.
func Valid(b []byte) bool {
	_, ok := validate(b)
	return ok
}

// validate is Valid that also reports whether b holds a byte >= 0x80
// (meaningful only when b is valid).
func validate(b []byte) (nonASCII, ok bool) {
	end, nonASCII, ok := checkValue(b, skipSpace(b, 0), 0)
	return nonASCII, ok && skipSpace(b, end) == len(b)
}

// isPlain reports whether c stands for itself inside a JSON string:
// neither a quote, nor a backslash, nor a control character.
func isPlain(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }

// isPlainASCII is isPlain for bytes below 0x80, and false for the others.
// (c-0x20 wraps around below 0x20: one comparison for both bounds.)
func isPlainASCII(c byte) bool { return c-0x20 < 0x60 && c != '"' && c != '\\' }

// What checkString reports about a string besides its end.
const (
	escapedFlag  uint8 = 1 << iota // it holds an escape
	nonASCIIFlag                   // it holds a byte >= 0x80: UTF-8, or not
)

// checkString validates the JSON string starting at b[i] (a quote) and
// returns the offset just past it, and whether it holds an escape or a
// byte >= 0x80 (flags).
func checkString(b []byte, i int) (end int, flags uint8, ok bool) {
	i++ // the opening quote
	for {
		i = skipPlainASCII(b, i)
		if i >= len(b) {
			return 0, 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, flags, true
		case c >= utf8.RuneSelf:
			// Flagged once; then such bytes are plain like the others.
			flags |= nonASCIIFlag
			i = skipPlain(b, i+1)
		case c == '\\':
			flags |= escapedFlag
			if i+1 >= len(b) {
				return 0, 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, 0, false
				}
				i += 6
			default:
				return 0, 0, false
			}
		default: // a control character
			return 0, 0, false
		}
	}
}

// The bytes of a string are looked at 8 at a time (a uint64: SWAR) while
// they stand for themselves: a long string, such as a file's content in a
// tool result, is checked several times faster than byte by byte, which
// matters to a reader that must pass a line of 100 MiB on and then read on.
const (
	ones  = 0x0101010101010101 // 0x01 in every byte
	highs = 0x8080808080808080 // the high bit of every byte
)

// plainASCIIWord reports whether every byte of w is plain ASCII
// (isPlainASCII). Without a byte that is not, no subtraction borrows, so
// the answer is exact.
func plainASCIIWord(w uint64) bool {
	return (w|(w-0x20*ones)|((w^'"'*ones)-ones)|((w^'\\'*ones)-ones))&highs == 0
}

// plainWord reports whether every byte of w is plain (isPlain): bytes >=
// 0x80 are, so each test is masked with ^w (hasless and haszero of Bit
// Twiddling Hacks); exact as plainASCIIWord is.
func plainWord(w uint64) bool {
	q, bs := w^'"'*ones, w^'\\'*ones
	return ((w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs)&highs == 0
}

// skipPlainASCII returns the offset of the first byte from b[i] on that is
// not plain ASCII, or len(b).
func skipPlainASCII(b []byte, i int) int {
	for i+8 <= len(b) && plainASCIIWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && isPlainASCII(b[i]) {
		i++
	}
	return i
}

// skipPlain returns the offset of the first byte from b[i] on that is not
// plain, or len(b).
func skipPlain(b []byte, i int) int {
	for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && isPlain(b[i]) {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkNumber validates the JSON number starting at b[i] and returns the
// offset just past it.
func checkNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, false
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}

// checkLiteral validates the literal word at b[i].
func checkLiteral(b []byte, i int, word string) (int, bool) {
	if len(b)-i < len(word) || string(b[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// checkValue validates the JSON value starting at b[i] (no leading
// whitespace) and returns the offset just past it, and whether one of its
// strings (keys included) holds a byte >= 0x80. depth is how many
// containers are already open around it (0 for a whole line), so that the
// nesting limit counts from the top of the line. It does not recurse: the
// open containers are kept on a stack of their opening bytes.
func checkValue(b []byte, i, depth int) (end int, nonASCII, ok bool) {
	var inline [32]byte
	open := inline[:0]
	var flags, f uint8 // of all strings so far, of the last one
	for {
		// A value starts at i.
		if i >= len(b) {
			return 0, false, false
		}
		switch c := b[i]; c {
		case '"':
			i, f, ok = checkString(b, i)
			flags |= f
		case '{', '[':
			if depth+len(open) >= maxDepth {
				return 0, false, false
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				i, ok = i+1, true
				break
			}
			open = append(open, c)
			if c == '{' {
				if i, f, ok = checkKey(b, i); !ok {
					return 0, false, false
				}
				flags |= f
			}
			continue
		case 't':
			i, ok = checkLiteral(b, i, "true")
		case 'f':
			i, ok = checkLiteral(b, i, "false")
		case 'n':
			i, ok = checkLiteral(b, i, "null")
		default:
			if c != '-' && !isDigit(c) {
				return 0, false, false
			}
			i, ok = checkNumber(b, i)
		}
		if !ok {
			return 0, false, false
		}
		// A value ended at i: close the containers it completes.
		for {
			if len(open) == 0 {
				return i, flags&nonASCIIFlag != 0, true
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, false, false
			}
			top := open[len(open)-1]
			if b[i] == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return 0, false, false
			}
			i = skipSpace(b, i+1)
			if top == '{' {
				if i, f, ok = checkKey(b, i); !ok {
					return 0, false, false
				}
				flags |= f
			}
			break
		}
	}
}

// checkKey validates a member's key and its colon at b[i] and returns the
// offset of its value and the key's checkString flags.
func checkKey(b []byte, i int) (int, uint8, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false
	}
	i, flags, ok := checkString(b, i)
	if !ok {
		return 0, 0, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, 0, false
	}
	return skipSpace(b, i+1), flags, true
}
