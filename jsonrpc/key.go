package jsonrpc

import (
	"strconv"
	"strings"
)

// Key returns the key under which a raw JSON value that names something
// (a request id, a requestId of notifications/cancelled, a progress token,
// a task id) is looked up: values equal in JSON have one key however each
// was written, and values that differ have different keys. A Key is only
// ever compared, never sent: what goes back to a peer is the raw value it
// wrote, byte for byte.
//
//   - A string is keyed by its decoded text: "a/b", "a\/b" and "\u0061/b"
//     are one key. (A lone surrogate escape decodes to U+FFFD, as
//     encoding/json has it, and so shares the key of "\ufffd".)
//   - A number is keyed by its exact decimal value, never through float64:
//     1, 1.0, 1e0 and 10E-1 are one key, as are 0 and -0, while
//     9007199254740993 and 9007199254740992 stay two. An integral value of
//     at most maxPlainDigits digits is keyed as that integer is written
//     plainly (so a plain integer id is its own key); any other as its
//     significant digits and exponent, 1.5 as "15e-1". A number whose
//     exponent has more than maxExpDigits digits is keyed as written.
//   - A string and a number never share a key: the string "1" and the
//     number 1 are two ids, as JSON-RPC has them. Anything else (null,
//     true, an object) is keyed as written.
func Key(raw []byte) string {
	raw = trimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if s, ok := String(raw); ok {
			return "s" + s
		}
	} else if k, ok := numberKey(raw); ok {
		return k
	}
	return "x" + string(raw)
}

// maxPlainDigits bounds the digits of an integral number keyed as an
// integer, so that a short number such as 1e999999 cannot make a long key.
const maxPlainDigits = 64

// maxExpDigits bounds the digits of an exponent Key reads (leading zeros
// aside): an exponent of 10^9 and more is no id's.
const maxExpDigits = 9

// numberKey is Key of raw when it is a JSON number; ok is false when it is
// not one.
func numberKey(raw []byte) (string, bool) {
	if plainInteger(raw) { // the common case, as written: nothing to do
		if string(raw) == "-0" {
			return "n0", true
		}
		return "n" + string(raw), true
	}
	neg, digits, exp, ok := splitNumber(raw)
	if !ok {
		return "", false
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "n0", true // 0, -0, 0.0e7
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	digits = trimmed
	var b strings.Builder
	b.WriteByte('n')
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(digits)
	if exp >= 0 && int64(len(digits))+exp <= maxPlainDigits {
		b.WriteString(strings.Repeat("0", int(exp)))
	} else {
		b.WriteByte('e')
		b.WriteString(strconv.FormatInt(exp, 10))
	}
	return b.String(), true
}

// plainInteger reports whether raw is an integer written as JSON writes
// it, with no fraction, exponent or leading zero, of at most maxPlainDigits
// digits: its own key.
func plainInteger(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > maxPlainDigits || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// splitNumber reads a JSON number as its sign and the value digits ×
// 10^exp, where digits are those of its integer part and fraction, as
// written (leading and trailing zeros included). ok is false when raw is
// not a number, or its exponent has more than maxExpDigits digits.
func splitNumber(raw []byte) (neg bool, digits string, exp int64, ok bool) {
	i := 0
	if i < len(raw) && raw[i] == '-' {
		neg = true
		i++
	}
	intEnd := skipDigits(raw, i)
	if intEnd == i {
		return false, "", 0, false
	}
	digits, i = string(raw[i:intEnd]), intEnd
	if i < len(raw) && raw[i] == '.' {
		fracEnd := skipDigits(raw, i+1)
		if fracEnd == i+1 {
			return false, "", 0, false
		}
		digits += string(raw[i+1 : fracEnd])
		exp = -int64(fracEnd - i - 1)
		i = fracEnd
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		expNeg := i < len(raw) && raw[i] == '-'
		if i < len(raw) && (raw[i] == '-' || raw[i] == '+') {
			i++
		}
		end := skipDigits(raw, i)
		e := strings.TrimLeft(string(raw[i:end]), "0")
		if end == i || len(e) > maxExpDigits {
			return false, "", 0, false
		}
		n, _ := strconv.ParseInt("0"+e, 10, 64)
		if expNeg {
			n = -n
		}
		exp, i = exp+n, end
	}
	return neg, digits, exp, i == len(raw)
}

// skipDigits returns the offset of the first byte at or after i in b that
// is not a decimal digit.
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
