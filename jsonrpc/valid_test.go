package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// validCases are lines on which Valid must agree with encoding/json.Valid;
// they are also the seeds of FuzzValid.
var validCases = []string{
	`{}`, `[]`, ` { } `, `"x"`, `0`, `-0`, `1.5e+10`, `-12.34E-5`, `true`, `false`, `null`,
	`{"a":1,"b":[true,false,null,{"c":"d"}],"e":{}}`,
	`[1,[2,[3,[]]],{}]`,
	`"esc \" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00"`,
	"\"raw bytes \xff\xfe are accepted\"",
	`{"a" : 1 , "b" : 2}`,
	"\t\r\n[1]\n",
	// Invalid ones.
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`,
	`{"a":1 "b":2}`, `{1:2}`, `{'a':1}`, `[1 2]`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`,
	`tru`, `truex`, `nul`, `nulll`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"ctl \x01\"",
	`{"a":1}}`, `[1]]`, `1 2`, `"a" "b"`, `{"a":[1}`, `{"a":{]}`, `NaN`, `Infinity`,
	`{"a":1}x`, "{\"a\":\x00}",
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range validCases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%q) = %v, encoding/json says %v", c, got, want)
		}
	}
}

func TestValidNestingLimit(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closer := map[string]string{"[": "]", `{"a":`: "}"}[open]
			for _, inner := range []string{"1", "[]", "{}"} {
				line := []byte(strings.Repeat(open, depth-1) + inner + strings.Repeat(closer, depth-1))
				if got, want := Valid(line), json.Valid(line); got != want {
					t.Errorf("depth %d of %s around %s: Valid %v, encoding/json %v", depth, open, inner, got, want)
				}
			}
		}
	}
}

func TestValidDeepInputDoesNotRecurse(t *testing.T) {
	t.Parallel()
	// A megabyte of brackets: refused (too deep) without a deep stack.
	line := bytes.Repeat([]byte("["), 1<<20)
	if Valid(line) {
		t.Fatal("a megabyte of [ is valid")
	}
}

func FuzzValid(f *testing.F) {
	for _, c := range validCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", b, got, want)
		}
		if nonASCII, ok := validate(b); ok && nonASCII != hasNonASCII(b) {
			t.Fatalf("validate(%q) says non-ASCII %v", b, nonASCII)
		}
	})
}

// hasNonASCII reports whether b holds a byte >= 0x80.
func hasNonASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return true
		}
	}
	return false
}

// TestScanFlagsNonASCII: the scanner notices a byte >= 0x80 wherever it is
// in a string (key or value, before or after an escape), and only then, so
// that only such lines are checked for UTF-8.
func TestScanFlagsNonASCII(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line     string
		nonASCII bool
	}{
		{`{"jsonrpc":"2.0","method":"m","params":{"a":["x\n",1,{"b":"c"}]}}`, false},
		{`{"jsonrpc":"2.0","method":"m","params":{"a":["x\né",1]}}`, true},
		{`{"jsonrpc":"2.0","method":"m","params":{"é":1}}`, true},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[\"\xff\"]}", true},
		{`{"jsonrpc":"2.0","id":"é","result":{}}`, true},
		{`{"jsonrpc":"1.0","id":1,"method":"m","x":"é"}`, true}, // ErrInvalid: still scanned whole
		{`["é"]`, true},
	} {
		_, nonASCII, err := parse([]byte(tc.line), nil)
		if errors.Is(err, ErrParse) || nonASCII != tc.nonASCII {
			t.Errorf("parse(%s) says non-ASCII %v (error %v), want %v", tc.line, nonASCII, err, tc.nonASCII)
		}
		if nonASCII, ok := validate([]byte(tc.line)); !ok || nonASCII != tc.nonASCII {
			t.Errorf("validate(%s) = %v, %v; want %v, true", tc.line, nonASCII, ok, tc.nonASCII)
		}
	}
}

func BenchmarkValid(b *testing.B) {
	for _, bm := range benchLines() {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(bm.line)))
			for range b.N {
				if !Valid(bm.line) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// TestParseAllocatesOnlyTheMessageAndItsMethod: the raw fields are sub-slices of the
// line, so a message costs its own allocation and its method name's,
// however long its arguments.
func TestParseAllocatesOnlyTheMessageAndItsMethod(t *testing.T) {
	// Not parallel: testing.AllocsPerRun counts the whole process's allocations.
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a:echo","arguments":{"text":"` + strings.Repeat("x", 4096) + `"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`{"jsonrpc":"2.0","id":"s-1","result":{"content":[]}}`,
	} {
		b := []byte(line)
		want := 2.0 // the message and its method
		if strings.Contains(line, `"result"`) {
			want = 1
		}
		if n := testing.AllocsPerRun(100, func() {
			if _, err := Parse(b); err != nil {
				t.Fatal(err)
			}
		}); n != want {
			t.Errorf("Parse(%.60s...) made %v allocations, want %v", line, n, want)
		}
	}
}

// TestValidStringBytesAtEveryOffset puts each byte value at each offset of
// a string of several words, so that a quote, a backslash or a control
// character anywhere is caught.
func TestValidStringBytesAtEveryOffset(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		for at := 0; at < 20; at++ {
			s := []byte(`"` + strings.Repeat("a", 20) + `"`)
			s[1+at] = byte(c)
			if got, want := Valid(s), json.Valid(s); got != want {
				t.Fatalf("Valid(%q) = %v, encoding/json says %v", s, got, want)
			}
		}
	}
}

// TestParseNestingLimitCountsTheLine: Parse scans the line's own object
// itself, and the limit still counts it, as encoding/json does. A line
// nested deeper is refused as invalid, not as "not JSON", with its id, so
// that it can be answered under it.
func TestParseNestingLimitCountsTheLine(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1, 2 * maxDepth} {
		// The line's object, params, then depth-2 arrays around a 1.
		line := []byte(`{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":` +
			strings.Repeat("[", depth-2) + "1" + strings.Repeat("]", depth-2) + `}}`)
		m, err := Parse(line)
		valid := json.Valid(line)
		if valid != (err == nil) || !valid && !errors.Is(err, ErrInvalid) {
			t.Errorf("depth %d: Parse error %v, but encoding/json.Valid = %v", depth, err, valid)
		}
		if !valid && (m == nil || string(m.ID) != "3" || m.Method != "m") {
			t.Errorf("depth %d: Parse message %+v, want id 3 and method m", depth, m)
		}
	}
}

// TestSkipPlainAgreesByteByByte: skipPlain stops where a byte-by-byte
// loop stops, for each byte value at offsets all along a run of plain
// bytes, ASCII or not, with one more such byte at a later offset: short
// runs, looked at word by word, and long ones, looked at in windows.
func TestSkipPlainAgreesByteByByte(t *testing.T) {
	t.Parallel()
	slow := func(b []byte, i int, high bool) int {
		for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' && (high || b[i] < 0x80) {
			i++
		}
		return i
	}
	var offsets []int
	for at := 0; at < 2100; at++ {
		if at < 40 || at%37 == 0 || at > 250 && at < 300 || at > 760 && at < 800 || at > 2060 {
			offsets = append(offsets, at)
		}
	}
	var every, some []byte
	for c := range 256 {
		every = append(every, byte(c))
	}
	some = []byte{0, 0x1F, 0x20, '"', '\\', 0x7F, 0x80, 0xC3, 0xFF}
	for _, n := range []int{20, 100, 2100} {
		values := every
		if n > 100 {
			values = some
		}
		for _, fill := range []byte{'a', 0xC3, 0x7F, 0x20, 0xFF} {
			for _, c := range values {
				for _, at := range offsets {
					if at >= n {
						break
					}
					for _, second := range []int{-1, at + 1, at + 8, at + 33, n - 1} {
						b := bytes.Repeat([]byte{fill}, n)
						b[at] = c
						if second >= 0 && second < len(b) {
							b[second] = c
						}
						for from := 0; from < 3; from++ {
							for _, high := range []bool{false, true} {
								if got, want := skipPlain(b, from, high), slow(b, from, high); got != want {
									t.Fatalf("skipPlain(%d bytes of %q with %q at %d and %d, %d, %v) = %d, want %d", n, fill, c, at, second, from, high, got, want)
								}
							}
						}
					}
				}
			}
		}
	}
}
