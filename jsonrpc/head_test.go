package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

var headIDCases = []struct {
	head string
	id   string // "" when HeadID finds none
}{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaaa`, `7`},
	{`{"jsonrpc":"2.0","id":"abc","method":"m","params":{"x":"aaaa`, `"abc"`},
	{`{"id":-1.5e3}`, `-1.5e3`},
	{`{"id":12 `, `12`},
	{` { "\u0069d" : "x\"y" , `, `"x\"y"`},
	{`{"method":"m","params":{"id":1,"a":[1,2,{"b":"}"}]},"id":42,"x":`, `42`}, // not the nested one
	{"{\"id\":\"\xff\",", "\"\uFFFD\""},
	{`{"jsonrpc":"2.0","id":12`, ``}, // maybe 123
	{`{"jsonrpc":"2.0","id":"ab`, ``},
	{`{"jsonrpc":"2.0","method":"m","params":{"a":"xx`, ``}, // the id comes after the cut
	{`{"jsonrpc":"2.0","id":null,"method":"m"}`, ``},
	{`{"jsonrpc":"2.0","id":true,`, ``},
	{`{"jsonrpc":"2.0","method":"m"}`, ``},
	{`{"id":01,`, ``},
	{`{"id":1:`, ``},
	{`{"a" 1, "id":1}`, ``},
	{`[{"id":1}]`, ``},
	{`{`, ``},
	{``, ``},
}

func TestHeadID(t *testing.T) {
	t.Parallel()
	for _, tc := range headIDCases {
		id, ok := HeadID([]byte(tc.head))
		if ok != (tc.id != "") || string(id) != tc.id {
			t.Errorf("HeadID(%s) = %s, %v; want %s, %v", tc.head, id, ok, tc.id, tc.id != "")
		}
	}
}

// FuzzHeadID: HeadID never panics, finds only complete string and number
// ids, and, on every cut of a line Parse accepts, finds nothing or the id
// Parse finds.
func FuzzHeadID(f *testing.F) {
	for _, tc := range headIDCases {
		f.Add([]byte(tc.head))
	}
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		check := func(head []byte) []byte {
			id, ok := HeadID(head)
			if !ok {
				return nil
			}
			if !json.Valid(id) || id[0] != '"' && id[0] != '-' && !isDigit(id[0]) || !utf8.Valid(id) {
				t.Fatalf("HeadID(%q) = %q, not a JSON string or number in UTF-8", head, id)
			}
			return id
		}
		check(line)
		m, err := Parse(line)
		if err != nil || m.ID == nil || string(m.ID) == "null" || len(line) > 1000 {
			return
		}
		want := ToValidUTF8(m.ID)
		if got := check(line); !bytes.Equal(got, want) {
			t.Fatalf("HeadID(%q) = %q, Parse finds %q", line, got, want)
		}
		for cut := range line {
			if got := check(line[:cut]); got != nil && !bytes.Equal(got, want) {
				t.Fatalf("HeadID(%q) = %q, but the whole line has the id %q", line[:cut], got, want)
			}
		}
	})
}
