package jsonrpc

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

const fffd = "\uFFFD" // EF BF BD

var toValidUTF8Cases = []struct{ in, want string }{
	{"", ""},
	{"plain ascii", "plain ascii"},
	{"é 😀 ok", "é 😀 ok"},
	{"a\xffb", "a" + fffd + "b"},
	{"\xff\xfe", fffd + fffd},                     // one U+FFFD per byte, not per run
	{"\xe2\x82 x", fffd + fffd + " x"},            // a cut sequence
	{"\xed\xa0\x80", fffd + fffd + fffd},          // a surrogate half
	{"\xc0\xaf", fffd + fffd},                     // overlong
	{"\xf4\x90\x80\x80", strings.Repeat(fffd, 4)}, // beyond U+10FFFF
	{"é\x80é", "é" + fffd + "é"},
}

func TestToValidUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range toValidUTF8Cases {
		in := []byte(tc.in)
		got := ToValidUTF8(in)
		if string(got) != tc.want {
			t.Errorf("ToValidUTF8(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in == tc.want && len(in) > 0 && &got[0] != &in[0] {
			t.Errorf("ToValidUTF8(%q) copied valid UTF-8", tc.in)
		}
	}
}

// jsonDecodes returns what encoding/json decodes b to when b is the
// content of a JSON string (its quotes, backslashes and control characters
// escaped).
func jsonDecodes(t testing.TB, b []byte) string {
	t.Helper()
	lit := []byte{'"'}
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' {
			lit = append(lit, `\u00`...)
			lit = append(lit, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			continue
		}
		lit = append(lit, c)
	}
	lit = append(lit, '"')
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		t.Fatalf("encoding/json refused %q: %v", lit, err)
	}
	return s
}

// FuzzToValidUTF8 checks that ToValidUTF8 replaces exactly what
// encoding/json replaces.
func FuzzToValidUTF8(f *testing.F) {
	for _, tc := range toValidUTF8Cases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ToValidUTF8(b)
		if !utf8.Valid(got) {
			t.Fatalf("ToValidUTF8(%q) = %q, not valid UTF-8", b, got)
		}
		if want := jsonDecodes(t, b); string(got) != want {
			t.Fatalf("ToValidUTF8(%q) = %q, encoding/json decodes %q", b, got, want)
		}
	})
}

// TestInvalidUTF8IsReplacedBeforeTheHooks: an invalid byte in an answer,
// in a request's params or key, and in a batch element reaches Deliver (the
// waiting call), Handle and Batch as U+FFFD.
func TestInvalidUTF8IsReplacedBeforeTheHooks(t *testing.T) {
	t.Parallel()
	handled := make(chan *Message, 1)
	batches := make(chan [][]byte, 1)
	p := newFakePeer(t, Options{
		Handle: func(m *Message) { handled <- m },
		Batch:  func(elems [][]byte) { batches <- elems },
	}, nil)

	res := goCall(context.Background(), p.conn, "m", nil)
	req := mustParse(t, p.mustReadLine())
	p.mustSend(string(AppendResult(nil, req.ID, []byte("{\"text\":\"a\xffb\"}"))))
	r := await(t, res, "the call")
	if want := "{\"text\":\"a" + fffd + "b\"}"; r.err != nil || string(r.m.Result) != want {
		t.Errorf("Call = %q, %v; want the result %q", r.m.Result, r.err, want)
	}

	p.mustSend("{\"jsonrpc\":\"2.0\",\"id\":\"\xfe\",\"method\":\"m\",\"params\":{\"k\xc3\":\"\xe2\x82\"}}\n")
	m := await(t, handled, "Handle")
	if want := "\"" + fffd + "\""; string(m.ID) != want {
		t.Errorf("ID = %q, want %q", m.ID, want)
	}
	if want := "{\"k" + fffd + "\":\"" + fffd + fffd + "\"}"; string(m.Params) != want {
		t.Errorf("Params = %q, want %q", m.Params, want)
	}

	p.mustSend("[{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}, {\"jsonrpc\":\"2.0\",\"method\":\"é\"}]\n")
	elems := await(t, batches, "Batch")
	want := []string{"{\"jsonrpc\":\"2.0\",\"method\":\"" + fffd + "\"}", "{\"jsonrpc\":\"2.0\",\"method\":\"é\"}"}
	if len(elems) != len(want) {
		t.Fatalf("Batch got %q, want %q", elems, want)
	}
	for i := range want {
		if string(elems[i]) != want[i] {
			t.Errorf("element %d = %q, want %q", i, elems[i], want[i])
		}
	}
}

// TestValidLinesAreNotCopied: a line of valid UTF-8, ASCII or not, is
// dispatched as read: the message's fields and a batch's elements are
// sub-slices of it. A line with invalid UTF-8 is rewritten into a copy.
func TestValidLinesAreNotCopied(t *testing.T) {
	t.Parallel()
	var got *Message
	var elems [][]byte
	c := NewConn(nil, io.Discard, Options{
		Handle: func(m *Message) { got = m },
		Batch:  func(e [][]byte) { elems = e },
	})
	for _, tc := range []struct {
		line   string
		copied bool
	}{
		{`{"jsonrpc":"2.0","method":"m","params":{"text":"ascii"}}`, false},
		{`{"jsonrpc":"2.0","method":"m","params":{"text":"é 😀"}}`, false},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{\"text\":\"\xff\"}}", true},
	} {
		got = nil
		line := []byte(tc.line)
		c.dispatch(line, nil)
		if got == nil {
			t.Fatalf("%q was not handled", tc.line)
		}
		if aliases(line, got.Params) == tc.copied {
			t.Errorf("%q: Params %q aliases the line read: %v, want %v", tc.line, got.Params, !tc.copied, !tc.copied)
		}
		if !utf8.Valid(got.Params) {
			t.Errorf("%q: Params %q is not valid UTF-8", tc.line, got.Params)
		}

		elems = nil
		batch := []byte("[" + tc.line + "]")
		c.dispatch(batch, nil)
		if len(elems) != 1 {
			t.Fatalf("[%s] gave %d elements", tc.line, len(elems))
		}
		if aliases(batch, elems[0]) == tc.copied {
			t.Errorf("[%q]: the element aliases the line read: %v, want %v", tc.line, !tc.copied, !tc.copied)
		}
		if !utf8.Valid(elems[0]) {
			t.Errorf("[%q]: element %q is not valid UTF-8", tc.line, elems[0])
		}
	}
}
