package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestDuplicateMember(t *testing.T) {
	t.Parallel()
	many := func(dup bool) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range 40 {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		if dup {
			b.WriteString(`"k7":0,`)
		}
		b.WriteString(`"end":1}`)
		return b.String()
	}
	for in, want := range map[string]string{
		`{"a":1,"b":2}`:                     "",
		`{"a":1,"a":2}`:                     "a",
		`{"a":{"b":1},"b":2}`:               "",
		`{"x":[{"a":1},{"a":2}]}`:           "",
		`{"x":{"a":1,"a":1}}`:               "a",
		`{"name":"x","na\u006de":"A:t"}`:    "name",
		`{"a":"x\":y","b":"\\","c":1}`:      "",
		`{"a":"\\","a":1}`:                  "a",
		`[{"t":1},{"t":2,"u":{"t":3}}]`:     "",
		`{"task":{"taskId":"a"},"task":{}}`: "task",
		`"just a string"`:                   "",
		`{"a":[1,{"a":2}],"b":{"a":3}}`:     "",
		many(false):                         "",
		many(true):                          "k7",
		`{"é":1,"\u00e9":2}`:                "é",
	} {
		got, ok := DuplicateMember([]byte(in))
		if got != want || ok != (want != "") {
			t.Errorf("DuplicateMember(%.60s) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

// hasDuplicate is the reference: encoding/json's tokens, one key set per
// open object.
func hasDuplicate(b []byte) bool {
	d := json.NewDecoder(strings.NewReader(string(b)))
	type open struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token is a key
	}
	var stack []*open
	for {
		tok, err := d.Token()
		if err == io.EOF || err != nil {
			return false
		}
		var top *open
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.obj && top.key
		if top != nil && top.obj {
			top.key = !top.key
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &open{obj: true, keys: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &open{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].obj {
					stack[len(stack)-1].key = true
				}
			}
		case string:
			if isKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
			}
		}
	}
}

// FuzzDuplicateMember checks DuplicateMember against encoding/json's view
// of the same valid JSON.
func FuzzDuplicateMember(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":1},"b":2}`, `{"x":[{"a":1},{"a":2}]}`, `{"n":"\"","n\u0000":1}`, `[{"k":[{"k":1,"k":2}]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		_, got := DuplicateMember(b)
		if want := hasDuplicate(b); got != want {
			t.Errorf("DuplicateMember(%q) = %v, encoding/json's tokens say %v", b, got, want)
		}
	})
}

// TestCheckDuplicates: with Options.CheckDuplicates, a request or a
// notification with a member twice goes to Invalid, an answer to its call
// with Duplicate set; without it, all pass as they are.
func TestCheckDuplicates(t *testing.T) {
	t.Parallel()
	invalid := make(chan error, 2)
	handled := make(chan *Message, 2)
	p := newFakePeer(t, Options{
		CheckDuplicates: true,
		Handle:          func(m *Message) { handled <- m },
		Invalid:         func(_ []byte, _ *Message, err error) { invalid <- err },
	}, nil)
	res := goCall(context.Background(), p.conn, "m", nil)
	req := mustParse(t, p.mustReadLine())
	p.mustSend(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"task":{"taskId":"a"},"task":{"taskId":"b"}}}` + "\n")
	if r := await(t, res, "the answer"); r.err != nil || r.m.Duplicate != "task" {
		t.Errorf("the answer with two tasks: %+v, Duplicate %q", r, r.m.Duplicate)
	}
	p.mustSend(`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"_meta":{"x":1},"_meta":{"x":2}}}` + "\n")
	p.mustSend(`{"jsonrpc":"2.0","method":"n","params":{"a":{"b":1,"b":2}}}` + "\n")
	p.mustSend(`{"jsonrpc":"2.0","method":"n","params":{"a":{"b":1},"c":{"b":2}}}` + "\n")
	for _, want := range []string{`"_meta"`, `"b"`} {
		if err := await(t, invalid, "Invalid"); !errors.Is(err, ErrDuplicateMember) || !strings.Contains(err.Error(), want) {
			t.Errorf("Invalid got %v, want ErrDuplicateMember naming %s", err, want)
		}
	}
	if m := await(t, handled, "the notification without duplicates"); m.Method != "n" {
		t.Errorf("handled %+v", m)
	}
}

// BenchmarkDuplicateMember is the cost of the duplicate check a server's
// connection makes on every line (Options.CheckDuplicates), against
// BenchmarkParse's on the same lines; result-100MiB is one text of 100 MiB,
// as BenchmarkLargeResult relays.
func BenchmarkDuplicateMember(b *testing.B) {
	text := strings.Repeat("lorem ipsum \\\"dolor\\\" sit amet ", (100<<20)/32)
	lines := append(benchLines(), struct {
		name string
		line []byte
	}{"result-100MiB", []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)})
	for _, bm := range lines {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(bm.line)))
			for range b.N {
				if _, dup := DuplicateMember(bm.line); dup {
					b.Fatal("a duplicate")
				}
			}
		})
	}
}
