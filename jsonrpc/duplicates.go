package jsonrpc

import (
	"bytes"
	"errors"
)

// ErrDuplicateMember is wrapped by the error of a message in which one
// object has a member twice. JSON parsers disagree on which copy counts
// (JavaScript's, Python's and Go's keep the last, some refuse the object),
// so a relay that reads one copy cannot know which one its peer reads.
var ErrDuplicateMember = errors.New("a member appears twice in one object")

// manyKeys is how many keys an object may have before DuplicateMember
// checks its next keys in a map instead of against each earlier one.
const manyKeys = 32

// DuplicateMember reports the key (decoded) of the first member that
// appears twice in one object of b, at any depth; b must be valid JSON.
// It reports "", false when every object's keys are unique.
func DuplicateMember(b []byte) (string, bool) {
	type open struct {
		first int             // index in keys of its first key; -1: an array
		seen  map[string]bool // its keys once it has more than manyKeys
	}
	var keysInline [32][]byte
	var openInline [16]open
	keys, stack := keysInline[:0], openInline[:0]
	for i := 0; i < len(b); {
		switch b[i] {
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return "", false // not valid JSON: nothing to say
			}
			top := len(stack) - 1
			if j := skipSpace(b, end); top >= 0 && stack[top].first >= 0 && j < len(b) && b[j] == ':' {
				key := b[i:end] // a key: the string before a colon, in an object
				o := &stack[top]
				if o.seen != nil {
					k, _ := String(key)
					if o.seen[k] {
						return k, true
					}
					o.seen[k] = true
				} else {
					for _, prev := range keys[o.first:] {
						if sameKey(prev, key) {
							k, _ := String(key)
							return k, true
						}
					}
					keys = append(keys, key)
					if len(keys)-o.first > manyKeys {
						o.seen = make(map[string]bool, 2*manyKeys)
						for _, k := range keys[o.first:] {
							s, _ := String(k)
							o.seen[s] = true
						}
					}
				}
			}
			i = end
		case '{':
			stack = append(stack, open{first: len(keys)})
			i++
		case '[':
			stack = append(stack, open{first: -1})
			i++
		case '}', ']':
			if top := len(stack) - 1; top >= 0 {
				if stack[top].first >= 0 {
					keys = keys[:stack[top].first]
				}
				stack = stack[:top]
			}
			i++
		default:
			i++
		}
	}
	return "", false
}

// stringEnd returns the offset just past the JSON string that starts at
// b[i] (a quote), or -1 when it does not end. It jumps from quote to
// quote, so a long string costs about what finding a byte costs.
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; {
		q := indexByteBulk(b[j:], '"')
		if q < 0 {
			return -1
		}
		j += q
		backslashes := 0
		for k := j - 1; k > i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return j + 1
		}
		j++
	}
}

// sameKey reports whether two raw JSON strings hold the same text: the
// bytes, or, when either has an escape, the decoded strings.
func sameKey(a, b []byte) bool {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Equal(a, b)
	}
	x, _ := String(a)
	y, _ := String(b)
	return x == y
}
