package jsonrpc

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// Values equal in JSON share a key however they are written; values that
// differ never do.
func TestKey(t *testing.T) {
	t.Parallel()
	for _, same := range [][]string{
		{`"a/b"`, `"a\/b"`, `"\u0061/b"`, `"\u0061\u002f\u0062"`, ` "a/b" `},
		{`"A"`, `"\u0041"`}, {`"c1"`, `"\u0063\u0031"`}, {`""`},
		{`"é"`, `"\u00e9"`, `"\u00E9"`}, {`"😀"`, `"\ud83d\ude00"`},
		{`7`, `7.0`, `7e0`, `7E+0`, `70e-1`, `0.7E1`, `700e-2`, `7.000`, `0.0007e4`, `7e-0000`},
		{`0`, `-0`, `0.0`, `-0.0`, `0e5`, `-0E-3`},
		{`-2E2`, `-200`, `-2.0e2`, `-0.2e3`},
		{`1.5`, `15e-1`, `0.15E1`, `1.50`},
		{`1e16`, `10000000000000000`, `1.0e16`},
		{`9007199254740993`, `9007199254740993.0`, `9.007199254740993e15`},
		{`1e64`, `1` + strings.Repeat("0", 64)},
		{`1e65`, `10e64`, `1` + strings.Repeat("0", 65)},
		{`1e999999999`, `10e999999998`},
		{`null`}, {`true`},
	} {
		want := Key([]byte(same[0]))
		for _, raw := range same[1:] {
			if got := Key([]byte(raw)); got != want {
				t.Errorf("Key(%s) = %q, Key(%s) = %q: want one key", same[0], want, raw, got)
			}
		}
	}
	for _, differ := range [][2]string{
		{`"1"`, `1`}, {`"7"`, `7.0`}, {`9007199254740993`, `9007199254740992`}, {`1.5`, `1`}, {`1.5`, `15`},
		{`null`, `"null"`}, {`"a/b"`, `"a\\/b"`}, {`-1`, `1`}, {`1e64`, `1e65`}, {`0.1`, `1`},
		{`1e-64`, `1e64`}, {`"n1"`, `1`}, {`"x1"`, `"s1"`}, {`true`, `"true"`},
		{`"\u0061"`, `"\u0062"`}, {`12`, `1.2`}, {`123e-1`, `1.23e2`},
	} {
		if a, b := Key([]byte(differ[0])), Key([]byte(differ[1])); a == b {
			t.Errorf("%s and %s share the key %q", differ[0], differ[1], a)
		}
	}
}

// A plain integer, what ids almost always are, is its own key, and only
// an integer is keyed as one.
func TestKeyForms(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`42`: "n42", `-42`: "n-42", `4.2e1`: "n42", `0`: "n0", `-0`: "n0", `1.5`: "n15e-1", `-1.25e-3`: "n-125e-5",
		`1e65`: "n1e65", `"a\/b"`: "sa/b", `null`: "xnull", `{"a":1}`: `x{"a":1}`, `1e1000000000`: "x1e1000000000",
	} {
		if got := Key([]byte(raw)); got != want {
			t.Errorf("Key(%s) = %q, want %q", raw, got, want)
		}
	}
}

// Two numbers share a key exactly when they are equal as decimal values;
// a string's key is its text as encoding/json decodes it.
func FuzzKey(f *testing.F) {
	for _, s := range []string{`1`, `1.0`, `1e0`, `-0`, `0.5e-3`, `123456789012345678901234567890`, `"a\/b"`, `"\ud800"`} {
		f.Add(s, `10e-1`)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !json.Valid([]byte(a)) || !json.Valid([]byte(b)) {
			return
		}
		ka, kb := Key([]byte(a)), Key([]byte(b))
		var s string
		if json.Unmarshal([]byte(a), &s) == nil && ka != "s"+s {
			t.Errorf("Key(%s) = %q, want %q", a, ka, "s"+s)
		}
		x, xok := exactValue(a)
		y, yok := exactValue(b)
		if xok && yok && (x.Cmp(y) == 0) != (ka == kb) {
			t.Errorf("%s and %s: equal %v, keys %q and %q", a, b, x.Cmp(y) == 0, ka, kb)
		}
	})
}

// exactValue is the value of a JSON number with a small exponent.
func exactValue(raw string) (*big.Rat, bool) {
	raw = strings.TrimSpace(raw)
	if i := strings.IndexAny(raw, "eE"); i >= 0 && len(strings.TrimLeft(strings.TrimLeft(raw[i+1:], "+-"), "0")) > 4 {
		return nil, false
	}
	if raw == "" || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return nil, false
	}
	return new(big.Rat).SetString(raw)
}
