package jsonrpc

// A validating JSON scanner. Every line a Conn reads goes through it once:
// Parse checks the line and finds its members in one pass over it. It
// accepts exactly what encoding/json.Valid accepts (FuzzValid checks
// that), at several times its speed.
//
// Like encoding/json.Valid it does not check UTF-8; instead it reports
// whether a string held any byte >= 0x80, so that only lines with such
// bytes are checked for UTF-8 (by a Conn, which replaces what is invalid).
// Outside strings, valid JSON is ASCII: a line the scanner accepts without
// seeing such a byte is ASCII throughout.

import (
	"bytes"
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
	end, nonASCII, ok := checkValue(b, skipSpace(b, 0), 0, nil)
	return nonASCII, ok && skipSpace(b, end) == len(b)
}

// What checkString reports about a string besides its end.
const (
	escapedFlag  uint8 = 1 << iota // it holds an escape
	nonASCIIFlag                   // it holds a byte >= 0x80: UTF-8, or not
)

// checkString validates the JSON string starting at b[i] (a quote) and
// returns the offset just past it, and whether it holds an escape or a
// byte >= 0x80 (flags). It steps over the pieces that p (maybe nil) says
// are plain; escapedFlag then misses their escapes (a value's flags are
// only asked for nonASCIIFlag).
func checkString(b []byte, i int, p *plainPieces) (end int, flags uint8, ok bool) {
	i++ // the opening quote
	for {
		if p == nil {
			i = skipPlain(b, i, flags&nonASCIIFlag != 0)
		} else {
			i = p.skipPlain(b, i, &flags)
		}
		if i >= len(b) {
			return 0, 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, flags, true
		case c >= utf8.RuneSelf:
			// Flagged once; then such bytes are plain like the others.
			flags |= nonASCIIFlag
			i++
		case c == '\\':
			flags |= escapedFlag
			if i+1 >= len(b) {
				return 0, 0, false
			}
			switch b[i+1] { // as escape says, without a call
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

// escape returns the length of the escape at b[i] (a backslash), or 0
// when it is not a whole, valid one.
func escape(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if i+6 <= len(b) && isHex(b[i+2]) && isHex(b[i+3]) && isHex(b[i+4]) && isHex(b[i+5]) {
			return 6
		}
	}
	return 0
}

// skipPlain returns the offset of the first byte from b[i] on that does
// not stand for itself in a JSON string, or len(b): a quote, a backslash,
// a control character, or, unless high, a byte >= 0x80. It looks at 8
// bytes at a time (a uint64: SWAR, see special), and a run longer than
// 256 bytes a window at a time (skipRun).
func skipPlain(b []byte, i int, high bool) int {
	for end := i + 256; i+8 <= len(b) && special(binary.LittleEndian.Uint64(b[i:]), high, false) == 0; i += 8 {
		if i >= end {
			i = skipRun(b, i, high)
			break
		}
	}
	for i < len(b) && (b[i]-0x20 < 0x60 || high && b[i] >= utf8.RuneSelf) && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}

// skipRun is skipPlain for a long run, such as a file's content in a tool
// result, up to the 8 bytes that hold the end of the run. It looks at a
// window at a time, twice as long at each step up to 64 KiB: the
// runtime's IndexByte finds a quote or a backslash in it, many bytes an
// instruction, and then its words need only be checked for the other
// bytes, 32 at a time. A run of 100 MiB is checked several times faster
// than word by word, and a reader that must pass such a line on is back
// to reading sooner.
func skipRun(b []byte, i int, high bool) int {
	for n := 512; i < len(b); n = min(2*n, 64<<10) {
		w := b[i:min(i+n, len(b))]
		if q := bytes.IndexByte(w, '"'); q >= 0 {
			w = w[:q]
		}
		if q := bytes.IndexByte(w, '\\'); q >= 0 {
			w = w[:q]
		}
		j := 0
		for ; j+32 <= len(w); j += 32 {
			x := w[j : j+32 : j+32]
			if special(binary.LittleEndian.Uint64(x), high, true)|special(binary.LittleEndian.Uint64(x[8:]), high, true)|
				special(binary.LittleEndian.Uint64(x[16:]), high, true)|special(binary.LittleEndian.Uint64(x[24:]), high, true) != 0 {
				break
			}
		}
		for j+8 <= len(w) && special(binary.LittleEndian.Uint64(w[j:]), high, true) == 0 {
			j += 8
		}
		if i += j; j < n {
			return i
		}
	}
	return i
}

// special returns x with the high bit of each byte set that does not
// stand for itself in a string, as skipPlain says, and no other bit; cut:
// x holds no quote or backslash. It may also flag a byte after such a
// byte (a subtraction may borrow from it), never one before, so that x
// is found to hold one exactly when it does (hasless and haszero of Bit
// Twiddling Hacks; when high, a byte >= 0x80, whose high bit a
// subtraction may leave set, is masked out with ^x).
func special(x uint64, high, cut bool) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	m := x - 0x20*ones // control bytes
	if !cut {
		m |= (x ^ '"'*ones - ones) | (x ^ '\\'*ones - ones)
	}
	if high {
		m &^= x
	} else {
		m |= x
	}
	return m & highs
}

// plainPieces says what each piece of a line (maxHead bytes from its
// start) holds, as pieceKind finds it while the line reader has it in the
// cache: inside a string a plain piece holds neither the string's end nor
// anything wrong, so the scanner steps over it. cap, the line's capacity,
// tells where a part of the line starts.
type plainPieces struct {
	pieces []uint8
	cap    int
}

// What a piece of a line holds (pieceKind).
const (
	mixedPiece = iota // anything
	plainPiece        // bytes that stand for themselves in a string (skipPlain's, not high), and whole escapes
	highPiece         // the same and bytes >= 0x80
)

// pieceKind returns what b, a piece of a line, holds. An escaped quote is
// plain, and an escape that the piece cuts, or a backslash first (which
// the piece before may escape), makes it mixed: whatever precedes it in a
// string, its escapes are then read as the scanner reads them.
func pieceKind(b []byte) uint8 {
	if len(b)%32 != 0 || len(b) == 0 || b[0] == '\\' {
		return mixedPiece
	}
	quotes, escapes := bytes.Count(b, []byte{'"'}), bytes.Count(b, []byte{'\\'})
	if quotes > escapes || escapes > len(b)/32 {
		return mixedPiece // a quote not escaped, or escapes too many to walk here faster than the scanner
	}
	for i := bytes.IndexByte(b, '\\'); i >= 0; {
		n := escape(b, i)
		if n == 0 {
			return mixedPiece
		}
		if b[i+1] == '"' {
			quotes--
		}
		j := bytes.IndexByte(b[i+n:], '\\')
		if j < 0 {
			break
		}
		i += n + j
	}
	var control, high uint64 // 4 words at a time
	for i := 0; i < len(b); i += 32 {
		x := b[i : i+32 : i+32]
		w0, w1 := binary.LittleEndian.Uint64(x), binary.LittleEndian.Uint64(x[8:])
		w2, w3 := binary.LittleEndian.Uint64(x[16:]), binary.LittleEndian.Uint64(x[24:])
		control |= special(w0, true, true) | special(w1, true, true) | special(w2, true, true) | special(w3, true, true)
		high |= w0 | w1 | w2 | w3
	}
	switch {
	case quotes != 0 || control != 0:
		return mixedPiece
	case high&0x8080808080808080 != 0:
		return highPiece
	}
	return plainPiece
}

// skipPlain is skipPlain over b, the line p describes or a part of it
// running to its end (trimmed), stepping over the plain pieces; it sets
// nonASCIIFlag in flags when one of those holds a byte >= 0x80.
func (p *plainPieces) skipPlain(b []byte, i int, flags *uint8) int {
	off := p.cap - cap(b) // where b starts in the line
	for i < len(b) {
		k := (off + i) / maxHead
		end := min((k+1)*maxHead-off, len(b)) // of piece k in b
		kind := uint8(mixedPiece)
		if k < len(p.pieces) {
			kind = p.pieces[k]
		}
		if kind == mixedPiece {
			if i = skipPlain(b[:end], i, *flags&nonASCIIFlag != 0); i < end {
				return i
			}
		} else if kind == highPiece {
			*flags |= nonASCIIFlag
		}
		i = end
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
// nesting limit counts from the top of the line; p is as for checkString.
// It does not recurse: the open containers are kept on a stack of their
// opening bytes.
func checkValue(b []byte, i, depth int, p *plainPieces) (end int, nonASCII, ok bool) {
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
			i, f, ok = checkString(b, i, p)
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
	i, flags, ok := checkString(b, i, nil)
	if !ok {
		return 0, 0, false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, 0, false
	}
	return skipSpace(b, i+1), flags, true
}
