package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// The helpers in this file assume raw JSON that has already been validated
// (every line a Conn reads is checked by Parse or Valid): they find structure,
// they do not check it. On malformed input they never panic, but they may
// return an error or a wrong answer.

var errMalformed = errors.New("jsonrpc: malformed JSON")

// RawMember is one member of a JSON object, as raw bytes of that object.
type RawMember struct {
	Key   string // decoded key
	Value []byte // the raw value, a sub-slice of the object
	start int    // offset of Value in the object
}

// Members returns the members of a JSON object in document order.
func Members(obj []byte) ([]RawMember, error) {
	var ms []RawMember
	err := EachMember(obj, func(key []byte, start, end int) bool {
		ms = append(ms, RawMember{Key: string(key), Value: obj[start:end:end], start: start})
		return true
	})
	return ms, err
}

// Member returns the raw value of the first member named key, if obj is an
// object that has one.
func Member(obj []byte, key string) ([]byte, bool) {
	var val []byte
	found := false
	EachMember(obj, func(k []byte, start, end int) bool {
		if string(k) == key {
			val, found = obj[start:end:end], true
			return false
		}
		return true
	})
	return val, found
}

// StringBytes decodes a raw JSON string like String. For plain ASCII
// without escapes, the result is a sub-slice of raw and nothing is
// allocated. ok is false when raw is
// not a string.
func StringBytes(raw []byte) (s []byte, ok bool) {
	raw = trimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	if skipPlain(raw, 1, false) < len(raw)-1 {
		// Escapes, or bytes that String checks and may replace.
		d, ok := String(raw)
		return []byte(d), ok
	}
	return raw[1 : len(raw)-1], true
}

// StringMember returns the value of the member named key when it is a JSON
// string.
func StringMember(obj []byte, key string) (string, bool) {
	raw, ok := Member(obj, key)
	if !ok {
		return "", false
	}
	return String(raw)
}

// ReplaceMember returns a copy of obj in which the value of the first member
// named key is value; a missing member is added at the end. Every other byte
// of obj is kept as it was.
func ReplaceMember(obj []byte, key string, value []byte) ([]byte, error) {
	vStart, vEnd := -1, -1
	err := EachMember(obj, func(k []byte, start, end int) bool {
		if string(k) == key {
			vStart, vEnd = start, end
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if vStart >= 0 {
		out := make([]byte, 0, len(obj)-(vEnd-vStart)+len(value))
		out = append(out, obj[:vStart]...)
		out = append(out, value...)
		return append(out, obj[vEnd:]...), nil
	}
	// Add the member before the closing brace.
	closing := len(obj) - 1
	for closing >= 0 && obj[closing] != '}' {
		closing--
	}
	empty := true
	for i := closing - 1; i >= 0 && obj[i] != '{'; i-- {
		if !isSpace(obj[i]) {
			empty = false
			break
		}
	}
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	out = append(out, obj[:closing]...)
	if !empty {
		out = append(out, ',')
	}
	out = AppendString(out, key)
	out = append(out, ':')
	out = append(out, value...)
	return append(out, obj[closing:]...), nil
}

// Elements returns the raw elements of a JSON array.
func Elements(arr []byte) ([][]byte, error) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil, fmt.Errorf("%w: not an array", errMalformed)
	}
	var elems [][]byte
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return elems, nil
	}
	for {
		end, err := valueEnd(arr, i)
		if err != nil {
			return nil, err
		}
		elems = append(elems, arr[i:end:end])
		i = skipSpace(arr, end)
		if i >= len(arr) {
			return nil, errMalformed
		}
		switch arr[i] {
		case ',':
			i = skipSpace(arr, i+1)
		case ']':
			return elems, nil
		default:
			return nil, errMalformed
		}
	}
}

// String decodes a raw JSON string. ok is false when raw is not a string.
func String(raw []byte) (s string, ok bool) {
	raw = trimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if skipPlain(raw, 1, false) == len(raw)-1 { // plain ASCII
		return string(raw[1 : len(raw)-1]), true
	}
	var decoded string // its own variable: &s would put s on the heap for plain strings too
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return "", false
	}
	return decoded, true
}

// keyBytes decodes a raw JSON string key without allocating when it has no
// escapes.
func keyBytes(raw []byte) ([]byte, bool) {
	if bytes.IndexByte(raw, '\\') >= 0 {
		s, ok := String(raw)
		return []byte(s), ok
	}
	return raw[1 : len(raw)-1], true
}

// AppendString appends s as a JSON string. Unlike encoding/json it leaves
// <, > and & alone; invalid UTF-8 becomes U+FFFD as it does there.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// EachMember calls f with each decoded key of the object obj and the
// offsets in obj of its value, in document order, until f returns false.
// The key is only valid during the call.
func EachMember(obj []byte, f func(key []byte, start, end int) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return fmt.Errorf("%w: not an object", errMalformed)
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return errMalformed
		}
		keyEnd, err := valueEnd(obj, i)
		if err != nil {
			return err
		}
		key, ok := keyBytes(obj[i:keyEnd])
		if !ok {
			return errMalformed
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return errMalformed
		}
		i = skipSpace(obj, i+1)
		end, err := valueEnd(obj, i)
		if err != nil {
			return err
		}
		if !f(key, i, end) {
			return nil
		}
		i = skipSpace(obj, end)
		if i >= len(obj) {
			return errMalformed
		}
		switch obj[i] {
		case ',':
			i = skipSpace(obj, i+1)
		case '}':
			return nil
		default:
			return errMalformed
		}
	}
}

// valueEnd returns the offset just past the JSON value that starts at i.
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errMalformed
	}
	switch b[i] {
	case '"':
		if end := stringEnd(b, i); end >= 0 {
			return end, nil
		}
		return 0, errMalformed
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := valueEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errMalformed
	default:
		j := i
		for j < len(b) && !isDelimiter(b[j]) {
			j++
		}
		if j == i {
			return 0, errMalformed
		}
		return j, nil
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelimiter(c byte) bool { return isSpace(c) || c == ',' || c == '}' || c == ']' || c == ':' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}
