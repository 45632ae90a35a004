package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

type member struct{ key, value string }

func TestMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		obj  string
		want []member
	}{
		{"empty", `{}`, nil},
		{"empty with spaces", " \t{ \r\n } \n", nil},
		{"one", `{"a":1}`, []member{{"a", "1"}}},
		{"document order", `{"b":1,"a":2,"c":3}`, []member{{"b", "1"}, {"a", "2"}, {"c", "3"}}},
		{"escaped keys", `{"\u0069d":1,"a\"b":2,"\\":3,"\/":4,"é":5,"\u00e9":6,"\ud83d\ude00":7}`,
			[]member{{"id", "1"}, {`a"b`, "2"}, {`\`, "3"}, {"/", "4"}, {"é", "5"}, {"é", "6"}, {"😀", "7"}}},
		{"nested", `{"a":{"b":[1,{"c":"}"}],"d":{}},"e":[[],[{}]],"f":"x"}`,
			[]member{{"a", `{"b":[1,{"c":"}"}],"d":{}}`}, {"e", `[[],[{}]]`}, {"f", `"x"`}}},
		{"whitespace kept inside values", `{"p" : { "x" :  [ 1 , 2 ] } , "q":"a b" ,"r":[ ]}`,
			[]member{{"p", `{ "x" :  [ 1 , 2 ] }`}, {"q", `"a b"`}, {"r", `[ ]`}}},
		{"whitespace of every kind", "{\n\t\"a\"\r\n:\t1\n,\"b\" :\r\"x\"\n}",
			[]member{{"a", "1"}, {"b", `"x"`}}},
		{"literals and numbers", `{"t":true,"f":false,"n":null,"i":-0,"x":-1.5e+3,"y":1E-2}`,
			[]member{{"t", "true"}, {"f", "false"}, {"n", "null"}, {"i", "-0"}, {"x", "-1.5e+3"}, {"y", "1E-2"}}},
		{"strings holding delimiters", `{"s":"a}b{c]d[,:","t":"\\\"}","u":"\\","v":""}`,
			[]member{{"s", `"a}b{c]d[,:"`}, {"t", `"\\\"}"`}, {"u", `"\\"`}, {"v", `""`}}},
		{"keys holding delimiters", `{"}":1,"{\"":2,",":3,":":4}`,
			[]member{{"}", "1"}, {`{"`, "2"}, {",", "3"}, {":", "4"}}},
		{"duplicate keys", `{"a":1,"a":2}`, []member{{"a", "1"}, {"a", "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := []byte(tt.obj)
			ms, err := Members(obj)
			if err != nil {
				t.Fatalf("Members(%s): %v", tt.obj, err)
			}
			if len(ms) != len(tt.want) {
				t.Fatalf("Members(%s) has %d members, want %d: %q", tt.obj, len(ms), len(tt.want), ms)
			}
			for i, m := range ms {
				if m.Key != tt.want[i].key || !bytes.Equal(m.Value, []byte(tt.want[i].value)) {
					t.Errorf("member %d = %q: %s, want %q: %s", i, m.Key, m.Value, tt.want[i].key, tt.want[i].value)
				}
				if !aliases(obj, m.Value) || &obj[m.start] != &m.Value[0] {
					t.Errorf("member %d: value %s is not obj[%d:]", i, m.Value, m.start)
				}
				if cap(m.Value) != len(m.Value) {
					t.Errorf("member %d: cap %d > len %d: appending to it would overwrite obj", i, cap(m.Value), len(m.Value))
				}
			}
		})
	}
}

// malformedObjects are not JSON objects; the raw helpers must reject them.
var malformedObjects = []string{
	``,
	` `,
	`[]`,
	`"{}"`,
	`1`,
	`null`,
	`{`,
	`{ `,
	`}`,
	`{"a"}`,
	`{"a":}`,
	`{"a" 1}`,
	`{"a":1,}`,
	`{"a":1 "b":2}`,
	`{a:1}`,
	`{'a':1}`,
	`{"a":"x}`,
	`{"a":1`,
	`{"a":1,`,
	`{"a":[1,2`,
	`{"a":{"b":1}`,
	`{"a\":1}`,
	`{"\x":1}`,
	`{,"a":1}`,
}

func TestMembersMalformed(t *testing.T) {
	t.Parallel()
	for _, obj := range malformedObjects {
		t.Run(obj, func(t *testing.T) {
			ms, err := Members([]byte(obj))
			if !errors.Is(err, errMalformed) {
				t.Errorf("Members(%s) = %q, %v; want an error wrapping errMalformed", obj, ms, err)
			}
		})
	}
}

func TestMember(t *testing.T) {
	t.Parallel()
	const obj = `{ "a" : { "x" : 1 } , "b":"two","a":2, "e\u0073c":"\u00e9\n", "n":null, "num": 7 }`
	tests := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{"a", `{ "x" : 1 }`, true}, // the first of two
		{"b", `"two"`, true},
		{"esc", `"\u00e9\n"`, true},
		{"n", `null`, true},
		{"num", `7`, true},
		{"x", "", false}, // nested members are not members
		{"missing", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := Member([]byte(obj), tt.key)
			if ok != tt.wantOK || !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("Member(%q) = %s, %v; want %s, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
	// Member stops at the first match, so only a search for an absent key
	// walks (and must reject) the whole of a malformed object.
	for _, bad := range malformedObjects {
		if got, ok := Member([]byte(bad), "zz"); ok {
			t.Errorf("Member(%s, zz) = %s, true; want false", bad, got)
		}
	}
}

func TestStringMember(t *testing.T) {
	t.Parallel()
	const obj = `{"s":"plain","esc":"a\"b\\c\u00e9\ud83d\ude00\n","sp": "x" ,"utf8":"é<>&","empty":"","num":1,"null":null,"obj":{"s":"x"}}`
	tests := []struct {
		key    string
		want   string
		wantOK bool
	}{
		{"s", "plain", true},
		{"esc", "a\"b\\cé😀\n", true},
		{"sp", "x", true},
		{"utf8", "é<>&", true},
		{"empty", "", true},
		{"num", "", false},
		{"null", "", false},
		{"obj", "", false},
		{"missing", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := StringMember([]byte(obj), tt.key)
			if ok != tt.wantOK || got != tt.want {
				t.Errorf("StringMember(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestReplaceMember(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		obj        string
		key, value string
		want       string
	}{
		{"first", `{"a":1,"b":2}`, "a", `"x"`, `{"a":"x","b":2}`},
		{"last", `{"a":1,"b":2}`, "b", `"x"`, `{"a":1,"b":"x"}`},
		{"keeps whitespace and order", `{ "b" :  2 , "a" : [ 1 ] }`, "b", `{"z":0}`, `{ "b" :  {"z":0} , "a" : [ 1 ] }`},
		{"keeps whitespace of other values", "{\"id\" : 7,\n \"params\" : {\"b\" : 1,  \"a\":[ ]}\n}", "id", `"s:1"`,
			"{\"id\" : \"s:1\",\n \"params\" : {\"b\" : 1,  \"a\":[ ]}\n}"},
		{"value with delimiters replaced", `{"s":"a}\"b\\","t":1}`, "s", `"new"`, `{"s":"new","t":1}`},
		{"after a value with delimiters", `{"s":"a}\"b\\","t":1}`, "t", `2`, `{"s":"a}\"b\\","t":2}`},
		{"nested value replaced", `{"a":{"b":{"c":"}"}},"d":[1,[2]]}`, "a", `0`, `{"a":0,"d":[1,[2]]}`},
		{"array replaced", `{"a":{"b":{"c":"}"}},"d":[1,[2]]}`, "d", `[]`, `{"a":{"b":{"c":"}"}},"d":[]}`},
		{"only the first duplicate", `{"a":1,"a":2}`, "a", `3`, `{"a":3,"a":2}`},
		{"nested key not touched", `{"x":{"id":1}}`, "id", `2`, `{"x":{"id":1},"id":2}`},
		{"escaped key matched", `{"\u0069d":1}`, "id", `2`, `{"\u0069d":2}`},
		{"value kept raw", `{"a":1}`, "a", ` { "k" : "<&>" } `, `{"a": { "k" : "<&>" } }`},
		{"longer and shorter", `{"a":"xxxxxxxxxx","b":true}`, "a", `1`, `{"a":1,"b":true}`},

		{"added to {}", `{}`, "id", `7`, `{"id":7}`},
		{"added to { }", `{ }`, "id", `7`, `{ "id":7}`},
		{"added to {\\n}", "{\n}", "id", `7`, "{\n\"id\":7}"},
		{"added to one member", `{"a":1}`, "id", `7`, `{"a":1,"id":7}`},
		{"added after spaces", `{"a":1 }`, "id", `7`, `{"a":1 ,"id":7}`},
		{"added after empty object value", `{"a":{}}`, "b", `1`, `{"a":{},"b":1}`},
		{"added after empty array value", `{"a":[ ]}`, "b", `1`, `{"a":[ ],"b":1}`},
		{"added after string with brace", `{"a":"{"}`, "b", `1`, `{"a":"{","b":1}`},
		{"added after string with braces and spaces", `{"a":"{ "}`, "b", `1`, `{"a":"{ ","b":1}`},
		{"added before trailing bytes", " {\"a\":1} \n", "b", `2`, " {\"a\":1,\"b\":2} \n"},
		{"added key escaped", `{}`, "a\"b\\c\n", `1`, `{"a\"b\\c\n":1}`},
		{"added key not HTML-escaped", `{}`, "<&>", `1`, `{"<&>":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := []byte(tt.obj)
			got, err := ReplaceMember(obj, tt.key, []byte(tt.value))
			if err != nil {
				t.Fatalf("ReplaceMember(%s, %q, %s): %v", tt.obj, tt.key, tt.value, err)
			}
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("ReplaceMember(%s, %q, %s)\n got %s\nwant %s", tt.obj, tt.key, tt.value, got, tt.want)
			}
			if !bytes.Equal(obj, []byte(tt.obj)) {
				t.Errorf("ReplaceMember changed its input to %s", obj)
			}
			if len(got) > 0 && aliases(obj, got) {
				t.Errorf("ReplaceMember returned a slice of its input, not a copy")
			}
			if v, ok := Member(got, tt.key); !ok || !bytes.Equal(v, bytes.TrimSpace([]byte(tt.value))) {
				t.Errorf("Member(result, %q) = %s, %v; want %s", tt.key, v, ok, tt.value)
			}
			if !json.Valid(got) {
				t.Errorf("result %s is not valid JSON", got)
			}
		})
	}
}

func TestReplaceMemberMalformed(t *testing.T) {
	t.Parallel()
	for _, obj := range malformedObjects {
		t.Run(obj, func(t *testing.T) {
			got, err := ReplaceMember([]byte(obj), "zz", []byte("1"))
			if !errors.Is(err, errMalformed) {
				t.Errorf("ReplaceMember(%s) = %s, %v; want an error wrapping errMalformed", obj, got, err)
			}
		})
	}
}

func TestElements(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		arr  string
		want []string
	}{
		{"empty", `[]`, nil},
		{"empty with spaces", " [ \n\t] \r\n", nil},
		{"one", `[1]`, []string{"1"}},
		{"spaces around", ` [ 1 ] `, []string{"1"}},
		{"mixed", `[1,"a",null,true,false,-2.5e-3,{"a":[1,2]},[[]]]`,
			[]string{"1", `"a"`, "null", "true", "false", "-2.5e-3", `{"a":[1,2]}`, "[[]]"}},
		{"whitespace kept inside elements", "[ { \"a\" : 1 } ,\n[ 2 , 3 ] ,\t\"x y\" ]",
			[]string{`{ "a" : 1 }`, `[ 2 , 3 ]`, `"x y"`}},
		{"strings holding delimiters", `["]","\\",",\"","[{"]`, []string{`"]"`, `"\\"`, `",\""`, `"[{"`}},
		{"nested empties", `[{},[],""]`, []string{"{}", "[]", `""`}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"a"}, {"jsonrpc":"2.0","method":"b"}]`,
			[]string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arr := []byte(tt.arr)
			elems, err := Elements(arr)
			if err != nil {
				t.Fatalf("Elements(%s): %v", tt.arr, err)
			}
			if len(elems) != len(tt.want) {
				t.Fatalf("Elements(%s) = %q, want %q", tt.arr, elems, tt.want)
			}
			for i, e := range elems {
				if !bytes.Equal(e, []byte(tt.want[i])) {
					t.Errorf("element %d = %s, want %s", i, e, tt.want[i])
				}
				if !aliases(arr, e) || cap(e) != len(e) {
					t.Errorf("element %d = %s is not a capped sub-slice of the input", i, e)
				}
			}
		})
	}
}

func TestElementsMalformed(t *testing.T) {
	t.Parallel()
	for _, arr := range []string{``, ` `, `{}`, `"[]"`, `1`, `[`, `[ `, `]`, `[1,]`, `[,1]`, `[1 2]`, `[1`, `[1,`, `["]`, `[[1]`, `[{]`} {
		t.Run(arr, func(t *testing.T) {
			elems, err := Elements([]byte(arr))
			if !errors.Is(err, errMalformed) {
				t.Errorf("Elements(%s) = %q, %v; want an error wrapping errMalformed", arr, elems, err)
			}
		})
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw    string
		want   string
		wantOK bool
	}{
		{`"abc"`, "abc", true},
		{` "abc" `, "abc", true},
		{"\n\t\"abc\"\r\n", "abc", true},
		{`""`, "", true},
		{`"a\nb"`, "a\nb", true},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t", true},
		{`"\u00e9"`, "é", true},
		{`"é"`, "é", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"😀"`, "😀", true},
		{`"\u0000"`, "\x00", true},
		{`"<>&"`, "<>&", true},
		{`"\u003c"`, "<", true},
		{"\"\xff\"", "\ufffd", true}, // as encoding/json decodes it
		{`"\ud800"`, "\ufffd", true}, // a lone surrogate, likewise

		{``, "", false},
		{`"`, "", false},
		{` " `, "", false},
		{`"abc`, "", false},
		{`abc"`, "", false},
		{`"a"b"`, "", false},
		{`"a" "b"`, "", false},
		{`"\"`, "", false},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{"\"a\x01b\"", "", false}, // a raw control character
		{"\"a\nb\"", "", false},
		{`1`, "", false},
		{`null`, "", false},
		{`true`, "", false},
		{`{}`, "", false},
		{`[]`, "", false},
		{`["a"]`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, ok := String([]byte(tt.raw))
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("String(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    string
		want string
	}{
		{"empty", "", `""`},
		{"plain", "tools/call", `"tools/call"`},
		{"HTML characters kept", "<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"quote and backslash", `say "\"`, `"say \"\\\""`},
		{"slash kept", "a/b", `"a/b"`},
		{"newline, return, tab", "a\nb\rc\td", `"a\nb\rc\td"`},
		{"other control characters", "\x00\x01\x08\x0c\x1b\x1f", `"\u0000\u0001\u0008\u000c\u001b\u001f"`},
		{"DEL kept", "\x7f", "\"\x7f\""},
		{"two-byte UTF-8", "é", `"é"`},
		{"four-byte UTF-8", "😀", `"😀"`},
		{"line separators kept", "\u2028\u2029", "\"\u2028\u2029\""},
		{"U+FFFD kept", "\ufffd", "\"\ufffd\""},
		{"invalid byte", "a\xffb", `"a\ufffdb"`},
		{"truncated sequence at end", "a\xc3", `"a\ufffd"`},
		{"truncated sequence inside", "\xe2\x82z", `"\ufffd\ufffdz"`},
		{"surrogate half in UTF-8", "\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		{"overlong encoding", "\xc0\xaf", `"\ufffd\ufffd"`},
		{"mixed", "é\x00<\xff\"", `"é\u0000<\ufffd\""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendString(nil, tt.s)
			if !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("AppendString(%q) = %s, want %s", tt.s, got, tt.want)
			}
			prefixed := AppendString([]byte("x:"), tt.s)
			if !bytes.Equal(prefixed, []byte("x:"+tt.want)) {
				t.Errorf("AppendString(x:, %q) = %s, want x:%s", tt.s, prefixed, tt.want)
			}
			checkAppendString(t, tt.s, got)
		})
	}
}

// checkAppendString checks AppendString's promises about got, its encoding
// of s: valid JSON; decoded, the same string as encoding/json's encoding of
// s decodes to, which is s itself when s is valid UTF-8; no HTML escapes.
func checkAppendString(t *testing.T, s string, got []byte) {
	t.Helper()
	if !json.Valid(got) {
		t.Fatalf("AppendString(%q) = %s, not valid JSON", s, got)
	}
	var back string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", got, err)
	}
	if utf8.ValidString(s) && back != s {
		t.Errorf("AppendString(%q) = %s decodes to %q", s, got, back)
	}
	std, _ := json.Marshal(s)
	var stdBack string
	if err := json.Unmarshal(std, &stdBack); err != nil {
		t.Fatalf("json.Unmarshal(%s): %v", std, err)
	}
	if back != stdBack {
		t.Errorf("AppendString(%q) = %s decodes to %q; encoding/json's %s decodes to %q", s, got, back, std, stdBack)
	}
	if back != strings.ToValidUTF8(back, "\ufffd") {
		t.Errorf("AppendString(%q) = %s decodes to invalid UTF-8", s, got)
	}
	for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if bytes.Contains(got, []byte(esc)) {
			t.Errorf("AppendString(%q) = %s has the HTML escape %s", s, got, esc)
		}
	}
	if str, ok := String(got); !ok || str != back {
		t.Errorf("String(AppendString(%q)) = %q, %v; want %q", s, str, ok, back)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "abc", "<>&", "\"\\", "\x00\n\r\t\x1f\x7f", "é😀\u2028", "\xff", "a\xc3", "\xed\xa0\x80", "\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString([]byte("p"), s)
		if len(got) == 0 || got[0] != 'p' {
			t.Fatalf("AppendString lost its prefix: %q", got)
		}
		checkAppendString(t, s, got[1:])
	})
}

// FuzzRaw checks Members, Elements and ReplaceMember against encoding/json on
// valid JSON, and that they never panic on anything else.
func FuzzRaw(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1,"b":[1,{"c":"}"}]}`, `{ "a" : { "x" :  [ 1 , 2 ] } }`, `["]",{"a":"\\"},[ ]]`,
		`{"\u0069d":1,"a\"b":2}`, `{"a":1,"a":2}`, `{"a":"x}`, `[1,]`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, merr := Members(data)
		elems, eerr := Elements(data)
		_, _ = Member(data, "a")
		_, _ = String(data)
		replaced, rerr := ReplaceMember(data, "zz", []byte(`{"k":"}"}`))
		if !json.Valid(data) {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("Token: %v", err)
		}
		switch tok {
		case json.Delim('{'):
			if merr != nil || rerr != nil {
				t.Fatalf("valid object %s: Members error %v, ReplaceMember error %v", data, merr, rerr)
			}
			i := 0
			for ; dec.More(); i++ {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				if i >= len(ms) {
					t.Fatalf("Members(%s) returned only %d members", data, len(ms))
				}
				if ms[i].Key != k.(string) || !bytes.Equal(ms[i].Value, v) {
					t.Fatalf("Members(%s)[%d] = %q: %s, encoding/json says %q: %s", data, i, ms[i].Key, ms[i].Value, k, v)
				}
				if _, err := ReplaceMember(data, ms[i].Key, []byte("0")); err != nil {
					t.Fatalf("ReplaceMember(%s, %q): %v", data, ms[i].Key, err)
				}
			}
			if i != len(ms) {
				t.Fatalf("Members(%s) returned %d members, encoding/json %d", data, len(ms), i)
			}
			if !json.Valid(replaced) {
				t.Fatalf("ReplaceMember(%s) = %s, not valid JSON", data, replaced)
			}
		case json.Delim('['):
			if eerr != nil {
				t.Fatalf("valid array %s: Elements error %v", data, eerr)
			}
			i := 0
			for ; dec.More(); i++ {
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				if i >= len(elems) || !bytes.Equal(elems[i], v) {
					t.Fatalf("Elements(%s) = %q; element %d is %s", data, elems, i, v)
				}
			}
			if i != len(elems) {
				t.Fatalf("Elements(%s) returned %d elements, encoding/json %d", data, len(elems), i)
			}
		default:
			if merr == nil || eerr == nil || rerr == nil {
				t.Fatalf("%s is neither object nor array, but Members: %v, Elements: %v, ReplaceMember: %v", data, merr, eerr, rerr)
			}
		}
	})
}

func TestStringBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, want string
		ok, alias bool // alias: the result is a sub-slice of raw
	}{
		{`"a:echo"`, "a:echo", true, true},
		{` "" `, "", true, true},
		{`"a\u003aecho"`, "a:echo", true, false},
		{`"caf\u00e9"`, "café", true, false},
		{`"café"`, "café", true, false},
		{"\"bad \xff\"", "bad \ufffd", true, false},
		{`1`, "", false, false},
		{`"open`, "", false, false},
	} {
		raw := []byte(tc.raw)
		got, ok := StringBytes(raw)
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("StringBytes(%s) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
		if tc.alias && len(got) > 0 && !aliases(raw, got) {
			t.Errorf("StringBytes(%s) copied a plain string", tc.raw)
		}
		if s, sok := String(raw); sok != ok || s != string(got) {
			t.Errorf("StringBytes(%s) = %q, %v but String = %q, %v", tc.raw, got, ok, s, sok)
		}
	}
}
