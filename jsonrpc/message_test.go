package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	type kind int
	const (
		request kind = iota
		notification
		response
	)
	tests := []struct {
		name   string
		line   string
		kind   kind
		id     rawField
		method string
		params rawField
		result rawField
		errObj rawField
	}{
		{name: "request", kind: request,
			line: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
			id:   raw(`1`), method: "tools/call", params: raw(`{"name":"x","arguments":{}}`)},
		{name: "request without params", kind: request,
			line: `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			id:   raw(`2`), method: "ping"},
		{name: "request with array params", kind: request,
			line: `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,"2"]}`,
			id:   raw(`2`), method: "m", params: raw(`[1,"2"]`)},
		{name: "notification", kind: notification,
			line:   `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			method: "notifications/initialized"},
		{name: "notification with params", kind: notification,
			line:   `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":0.5}}`,
			method: "notifications/progress", params: raw(`{"progressToken":"t","progress":0.5}`)},
		{name: "result", kind: response,
			line: `{"jsonrpc":"2.0","id":1,"result":{}}`,
			id:   raw(`1`), result: raw(`{}`)},
		{name: "null result", kind: response,
			line: `{"jsonrpc":"2.0","id":1,"result":null}`,
			id:   raw(`1`), result: raw(`null`)},
		{name: "scalar result", kind: response,
			line: `{"jsonrpc":"2.0","id":1,"result":"ok"}`,
			id:   raw(`1`), result: raw(`"ok"`)},
		{name: "error", kind: response,
			line: `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}`,
			id:   raw(`"a"`), errObj: raw(`{"code":-32601,"message":"Method not found"}`)},
		{name: "error with null id", kind: response,
			line: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
			id:   raw(`null`), errObj: raw(`{"code":-32700,"message":"Parse error"}`)},

		{name: "id 0", kind: request, line: `{"jsonrpc":"2.0","id":0,"method":"m"}`, id: raw(`0`), method: "m"},
		{name: "id -1", kind: request, line: `{"jsonrpc":"2.0","id":-1,"method":"m"}`, id: raw(`-1`), method: "m"},
		{name: "id 1.5e3", kind: request, line: `{"jsonrpc":"2.0","id":1.5e3,"method":"m"}`, id: raw(`1.5e3`), method: "m"},
		{name: "id 1E+2", kind: response, line: `{"jsonrpc":"2.0","id":1E+2,"result":1}`, id: raw(`1E+2`), result: raw(`1`)},
		{name: "id beyond int64", kind: request, line: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"m"}`,
			id: raw(`123456789012345678901234567890`), method: "m"},
		{name: "id string", kind: request, line: `{"jsonrpc":"2.0","id":"a","method":"m"}`, id: raw(`"a"`), method: "m"},
		{name: "id empty string", kind: request, line: `{"jsonrpc":"2.0","id":"","method":"m"}`, id: raw(`""`), method: "m"},
		{name: "id string kept escaped", kind: request, line: `{"jsonrpc":"2.0","id":"\u0041\"<&>","method":"m"}`,
			id: raw(`"\u0041\"<&>"`), method: "m"},

		{name: "spacing kept in raw fields", kind: request,
			line: " \t{ \"jsonrpc\" : \"2.0\" , \"id\" :  7 , \"method\" : \"m\" , \"params\": {\"b\" : 1,  \"a\":[ ]} }  \r\n",
			id:   raw(`7`), method: "m", params: raw(`{"b" : 1,  "a":[ ]}`)},
		{name: "spacing kept in result", kind: response,
			line: "{\"result\" :\n[ 1 ,\t{ \"x\" : \"y\" } ] ,\"id\":\"k\",\"jsonrpc\":\"2.0\"}",
			id:   raw(`"k"`), result: raw("[ 1 ,\t{ \"x\" : \"y\" } ]")},
		{name: "any member order", kind: request,
			line: `{"params":{},"method":"m","id":3,"jsonrpc":"2.0"}`,
			id:   raw(`3`), method: "m", params: raw(`{}`)},
		{name: "unknown members ignored", kind: request,
			line: `{"jsonrpc":"2.0","x":{"id":9,"method":"no"},"id":3,"method":"m","_meta":[1]}`,
			id:   raw(`3`), method: "m"},
		{name: "nested id and method not taken", kind: response,
			line: `{"jsonrpc":"2.0","id":4,"result":{"id":5,"method":"x","error":{}}}`,
			id:   raw(`4`), result: raw(`{"id":5,"method":"x","error":{}}`)},
		{name: "escaped method", kind: request,
			line: `{"jsonrpc":"2.0","id":1,"method":"tools\/call\u00e9"}`,
			id:   raw(`1`), method: "tools/callé"},
		{name: "escaped keys", kind: request,
			line: `{"\u006asonrpc":"2.0","\u0069d":1,"m\u0065thod":"m","p\u0061rams":[]}`,
			id:   raw(`1`), method: "m", params: raw(`[]`)},
		{name: "escaped version", kind: notification,
			line:   `{"jsonrpc":"2\u002e0","method":"m"}`,
			method: "m"},
		{name: "strings with delimiters", kind: request,
			line: `{"jsonrpc":"2.0","id":"}\"","method":"a,b}","params":{"s":"\\\"}]"}}`,
			id:   raw(`"}\""`), method: "a,b}", params: raw(`{"s":"\\\"}]"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(tt.line)
			m, err := Parse(line)
			if err != nil {
				t.Fatalf("Parse(%s): %v", tt.line, err)
			}
			if !bytes.Equal(line, []byte(tt.line)) {
				t.Errorf("Parse changed its input")
			}
			checkRaw(t, "ID", line, m.ID, tt.id)
			checkRaw(t, "Params", line, m.Params, tt.params)
			checkRaw(t, "Result", line, m.Result, tt.result)
			checkRaw(t, "Error", line, m.Error, tt.errObj)
			if m.Method != tt.method {
				t.Errorf("Method = %q, want %q", m.Method, tt.method)
			}
			if got := [3]bool{m.IsRequest(), m.IsNotification(), m.IsResponse()}; got != [3]bool{tt.kind == request, tt.kind == notification, tt.kind == response} {
				t.Errorf("IsRequest, IsNotification, IsResponse = %v, want kind %d", got, tt.kind)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		line    string
		want    error // ErrParse or ErrInvalid
		noMsg   bool  // the message is nil
		id      rawField
		method  string
		errText string // in the error's text
	}{
		{name: "empty", line: ``, want: ErrParse, noMsg: true},
		{name: "spaces", line: " \t\r\n", want: ErrParse, noMsg: true},
		{name: "text", line: `hello`, want: ErrParse, noMsg: true, errText: "at byte"},
		{name: "truncated", line: `{"jsonrpc":"2.0","id":1,"method":"m"`, want: ErrParse, noMsg: true},
		{name: "trailing garbage", line: `{"jsonrpc":"2.0","method":"m"} x`, want: ErrParse, noMsg: true},
		{name: "two objects", line: `{"jsonrpc":"2.0","method":"m"}{"jsonrpc":"2.0","method":"m"}`, want: ErrParse, noMsg: true},
		{name: "trailing comma", line: `{"jsonrpc":"2.0","method":"m",}`, want: ErrParse, noMsg: true},
		{name: "single quotes", line: `{'jsonrpc':'2.0'}`, want: ErrParse, noMsg: true},
		{name: "raw newline in string", line: "{\"jsonrpc\":\"2.0\",\"method\":\"a\nb\"}", want: ErrParse, noMsg: true},
		{name: "repeated member, then not JSON", line: `{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{]}`, want: ErrParse, noMsg: true},
		{name: "escaped key, then not JSON", line: `{"jsonrpc":"2.0","\u0069d":1,"method":"m",x}`, want: ErrParse, noMsg: true},

		{name: "array", line: `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, want: ErrInvalid, noMsg: true},
		{name: "empty array", line: `[]`, want: ErrInvalid, noMsg: true},
		{name: "string", line: `"x"`, want: ErrInvalid, noMsg: true},
		{name: "number", line: `1`, want: ErrInvalid, noMsg: true},
		{name: "null", line: `null`, want: ErrInvalid, noMsg: true},

		{name: "wrong version", line: `{"jsonrpc":"1.0","id":3,"method":"m"}`, want: ErrInvalid, id: raw(`3`)},
		{name: "numeric version", line: `{"jsonrpc":2.0,"id":"v","method":"m"}`, want: ErrInvalid, id: raw(`"v"`)},
		{name: "missing version", line: `{"id":4,"method":"m"}`, want: ErrInvalid, id: raw(`4`)},
		{name: "missing version in response", line: `{"id":4,"result":{}}`, want: ErrInvalid, id: raw(`4`)},
		{name: "missing method and id", line: `{"jsonrpc":"2.0"}`, want: ErrInvalid},
		{name: "result without id", line: `{"jsonrpc":"2.0","result":{}}`, want: ErrInvalid},
		{name: "both result and error", line: `{"jsonrpc":"2.0","id":6,"result":1,"error":{"code":1,"message":"m"}}`, want: ErrInvalid, id: raw(`6`)},
		{name: "neither result nor error", line: `{"jsonrpc":"2.0","id":7}`, want: ErrInvalid, id: raw(`7`)},
		{name: "error not an object", line: `{"jsonrpc":"2.0","id":8,"error":"boom"}`, want: ErrInvalid, id: raw(`8`)},
		{name: "null error", line: `{"jsonrpc":"2.0","id":8,"error":null}`, want: ErrInvalid, id: raw(`8`)},
		{name: "bool id", line: `{"jsonrpc":"2.0","id":true,"method":"m"}`, want: ErrInvalid, errText: "true"},
		{name: "false id in response", line: `{"jsonrpc":"2.0","id":false,"result":1}`, want: ErrInvalid},
		{name: "object id", line: `{"jsonrpc":"2.0","id":{"n":1},"method":"m"}`, want: ErrInvalid},
		{name: "array id", line: `{"jsonrpc":"2.0","id":[1],"method":"m"}`, want: ErrInvalid},
		{name: "long bad id is clipped", line: `{"jsonrpc":"2.0","id":[` + strings.Repeat("1,", 100) + `1],"method":"m"}`, want: ErrInvalid, errText: "..."},
		{name: "null id in request", line: `{"jsonrpc":"2.0","id":null,"method":"m"}`, want: ErrInvalid, id: raw(`null`), method: "m"},
		{name: "numeric params", line: `{"jsonrpc":"2.0","id":9,"method":"m","params":1}`, want: ErrInvalid, id: raw(`9`), method: "m"},
		{name: "string params", line: `{"jsonrpc":"2.0","id":9,"method":"m","params":"x"}`, want: ErrInvalid, id: raw(`9`), method: "m"},
		{name: "null params", line: `{"jsonrpc":"2.0","id":9,"method":"m","params":null}`, want: ErrInvalid, id: raw(`9`), method: "m"},
		{name: "numeric params in notification", line: `{"jsonrpc":"2.0","method":"m","params":true}`, want: ErrInvalid, method: "m"},
		{name: "numeric method", line: `{"jsonrpc":"2.0","id":10,"method":1}`, want: ErrInvalid, id: raw(`10`)},
		{name: "empty method", line: `{"jsonrpc":"2.0","id":10,"method":""}`, want: ErrInvalid, id: raw(`10`)},
		{name: "answer nested too deep", line: `{"jsonrpc":"2.0","id":"d","result":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, want: ErrInvalid, id: raw(`"d"`), errText: "nested more than 10000 levels deep"},
		{name: "id after a value nested too deep", line: `{"jsonrpc":"2.0","params":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `,"method":"m","id":11}`, want: ErrInvalid, id: raw(`11`), method: "m"},
		{name: "too deep and not JSON", line: strings.Repeat("{", 20000), want: ErrInvalid},
		{name: "null method", line: `{"jsonrpc":"2.0","id":10,"method":null}`, want: ErrInvalid, id: raw(`10`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line := []byte(tt.line)
			m, err := Parse(line)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse(%s) error = %v, want one wrapping %q", tt.line, err, tt.want)
			}
			other := ErrInvalid
			if tt.want == ErrInvalid {
				other = ErrParse
			}
			if errors.Is(err, other) {
				t.Errorf("Parse(%s) error = %v also wraps %q", tt.line, err, other)
			}
			if tt.errText != "" && !strings.Contains(err.Error(), tt.errText) {
				t.Errorf("Parse(%s) error = %q, want it to mention %q", tt.line, err, tt.errText)
			}
			if tt.noMsg {
				if m != nil {
					t.Errorf("Parse(%s) message = %+v, want nil", tt.line, m)
				}
				return
			}
			if m == nil {
				t.Fatalf("Parse(%s) message = nil, want one with the readable id", tt.line)
			}
			checkRaw(t, "ID", line, m.ID, tt.id)
			if m.Method != tt.method {
				t.Errorf("Method = %q, want %q", m.Method, tt.method)
			}
		})
	}
}

// requestLine is the request line a Conn writes (Lane.GoParts) for id,
// method and params.
func requestLine(id []byte, method string, params []byte) []byte {
	return appendMethodParams(append([]byte(requestPrefix), id...), method, params)
}

func TestAppend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"notification",
			AppendNotification(nil, "notifications/initialized", nil),
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"},
		{"notification with params",
			AppendNotification(nil, "notifications/progress", []byte(`{"progress" :1}`)),
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress" :1}}` + "\n"},
		{"notification escapes method, not HTML",
			AppendNotification(nil, "a\"<&>\n", []byte(`[]`)),
			`{"jsonrpc":"2.0","method":"a\"<&>\n","params":[]}` + "\n"},
		{"notification appends",
			AppendNotification([]byte("x"), "m", []byte(`[]`)),
			`x{"jsonrpc":"2.0","method":"m","params":[]}` + "\n"},
		{"result",
			AppendResult(nil, []byte(`7`), []byte(`{"a": 1}`)),
			`{"jsonrpc":"2.0","id":7,"result":{"a": 1}}` + "\n"},
		{"result with string id",
			AppendResult(nil, []byte(`"s"`), []byte(`null`)),
			`{"jsonrpc":"2.0","id":"s","result":null}` + "\n"},
		{"result with nil id",
			AppendResult(nil, nil, []byte(`{}`)),
			`{"jsonrpc":"2.0","id":null,"result":{}}` + "\n"},
		{"result appends",
			AppendResult([]byte("x"), []byte(`1`), []byte(`2`)),
			`x{"jsonrpc":"2.0","id":1,"result":2}` + "\n"},
		{"answer relays a result under another id",
			AppendAnswer(nil, []byte(`"c-9"`), &Message{ID: []byte(`3`), Result: []byte(`{"x" : [1]}`)}),
			`{"jsonrpc":"2.0","id":"c-9","result":{"x" : [1]}}` + "\n"},
		{"answer relays an error under another id",
			AppendAnswer(nil, []byte(`4`), &Message{ID: []byte(`"s"`), Error: []byte(`{"code":1,"message":"m","data":{ }}`)}),
			`{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"m","data":{ }}}` + "\n"},
		{"error",
			AppendError(nil, []byte(`8`), []byte(`{"code":-32601,"message":"Method not found"}`)),
			`{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found"}}` + "\n"},
		{"error with nil id",
			AppendError(nil, nil, []byte(`{"code":-32700,"message":"Parse error"}`)),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n"},
		{"error from Error.Append",
			AppendError(nil, []byte(`"q"`), (&Error{Code: CodeInvalidParams, Message: "bad <x>"}).Append(nil)),
			`{"jsonrpc":"2.0","id":"q","error":{"code":-32602,"message":"bad <x>"}}` + "\n"},
		// An empty but non-nil params or id must not produce `"params":}`
		// or `"id":,` (fixed in message.go: len checks instead of nil checks).
		{"notification with empty params",
			AppendNotification(nil, "m", json.RawMessage{}),
			`{"jsonrpc":"2.0","method":"m"}` + "\n"},
		{"result with empty id",
			AppendResult(nil, []byte{}, []byte(`1`)),
			`{"jsonrpc":"2.0","id":null,"result":1}` + "\n"},
		{"error with empty id",
			AppendError(nil, json.RawMessage{}, []byte(`{"code":1,"message":"m"}`)),
			`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Equal(tt.got, []byte(tt.want)) {
				t.Errorf("got  %q\nwant %q", tt.got, tt.want)
			}
		})
	}
}

// TestAppendEmptyPayload checks that a nil or empty result or error still
// makes a valid line.
func TestAppendEmptyPayload(t *testing.T) {
	t.Parallel()
	for _, line := range [][]byte{
		AppendResult(nil, []byte(`1`), nil),
		AppendResult(nil, []byte(`1`), []byte{}),
		AppendError(nil, []byte(`1`), nil),
	} {
		if !json.Valid(line) {
			t.Errorf("%q is not valid JSON", line)
		}
	}
}

// TestDuplicateMembers checks that Parse refuses a repeated protocol
// member: peers disagree on which one counts (encoding/json takes the last,
// Member the first), so an id rewrite could be silently defeated.
func TestDuplicateMembers(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`,
	} {
		if _, err := Parse([]byte(line)); !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%s) = %v, want ErrInvalid", line, err)
		}
	}
	// Repeated members inside params are the peer's business.
	if _, err := Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}`)); err != nil {
		t.Errorf("duplicate inside params refused: %v", err)
	}
}

// TestAppendParses checks that what the Append functions write parses back
// into the same raw fields.
func TestAppendParses(t *testing.T) {
	t.Parallel()
	id, params, result, errObj := []byte(`"x y"`), []byte(`{ "k" : [1, 2] }`), []byte(` [ ] `), []byte(`{"code":1, "message":"m"}`)
	for _, line := range [][]byte{
		requestLine(id, "a/b", params),
		AppendNotification(nil, "a/b", params),
		AppendResult(nil, id, result),
		AppendError(nil, id, errObj),
	} {
		m, err := Parse(line)
		if err != nil {
			t.Errorf("Parse(%s): %v", line, err)
			continue
		}
		if m.IsRequest() && !bytes.Equal(m.ID, id) || m.Method != "" && (m.Method != "a/b" || !bytes.Equal(m.Params, params)) ||
			m.Result != nil && !bytes.Equal(m.Result, bytes.TrimSpace(result)) || m.Error != nil && !bytes.Equal(m.Error, errObj) {
			t.Errorf("Parse(%s) = %+v, not what was appended", line, m)
		}
	}
}

// parseSeeds are lines for FuzzParse and BenchmarkParse.
var parseSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
	` { "jsonrpc" : "2.0" , "id" :  1.5e3 , "method" : "m" , "params": {"b" : 1,  "a":[ ]} } `,
	`{"\u006asonrpc":"2\u002e0","id":"}\"","method":"a\u0000"}`,
	`{"jsonrpc":"2.0","id":true,"method":"m"}`,
	`{"jsonrpc":"2.0","id":1,"result":1,"error":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"m","params":1}`,
	`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
	`{"jsonrpc":"2.0"`,
	"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}",
	``,
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		orig := bytes.Clone(line)
		m, err := Parse(line)
		if !bytes.Equal(line, orig) {
			t.Fatalf("Parse changed its input")
		}
		if _, nonASCII, err := parse(line, nil); !errors.Is(err, ErrParse) && !errors.Is(err, ErrTooDeep) && nonASCII != hasNonASCII(line) {
			t.Fatalf("parse(%q) says non-ASCII %v", line, nonASCII)
		}
		valid := json.Valid(line)
		if err != nil {
			if errors.Is(err, ErrParse) == errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v wraps neither or both of ErrParse and ErrInvalid", line, err)
			}
			if errors.Is(err, ErrParse) != !valid && !errors.Is(err, ErrTooDeep) {
				t.Fatalf("Parse(%q) error %v, but json.Valid = %v", line, err, valid)
			}
			if m != nil && m.ID != nil && (!json.Valid(m.ID) || !aliases(line, m.ID) && !errors.Is(err, ErrTooDeep)) {
				t.Fatalf("Parse(%q) kept the id %q of an invalid message", line, m.ID)
			}
			return
		}
		if !valid {
			t.Fatalf("Parse(%q) accepted invalid JSON", line)
		}
		for _, f := range []json.RawMessage{m.ID, m.Params, m.Result, m.Error} {
			if f != nil && (!json.Valid(f) || !aliases(line, f)) {
				t.Fatalf("Parse(%q): raw field %q is not a JSON sub-slice of the line", line, f)
			}
		}
		var again []byte
		switch {
		case m.IsRequest():
			again = requestLine(m.ID, m.Method, m.Params)
		case m.IsNotification():
			again = AppendNotification(nil, m.Method, m.Params)
		case m.Result != nil:
			again = AppendResult(nil, m.ID, m.Result)
		default:
			again = AppendError(nil, m.ID, m.Error)
		}
		if again[len(again)-1] != '\n' || !json.Valid(again[:len(again)-1]) {
			t.Fatalf("Parse(%q) then Append: %q is not a valid JSON line", line, again)
		}
		m2, err := Parse(again)
		if err != nil {
			t.Fatalf("Parse(%q) then Append then Parse(%q): %v", line, again, err)
		}
		if m2.Method != m.Method || !bytes.Equal(m2.ID, m.ID) || !bytes.Equal(m2.Params, m.Params) ||
			!bytes.Equal(m2.Result, m.Result) || !bytes.Equal(m2.Error, m.Error) {
			t.Fatalf("Parse(%q) = %+v, but its re-appended %q parses to %+v", line, m, again, m2)
		}
	})
}

// benchLines are a tools/call request and a 1 MiB result.
func benchLines() []struct {
	name string
	line []byte
} {
	toolsCall := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"github__search_repositories",` +
		`"arguments":{"query":"language:go stars:>1000 topic:json-rpc","page":1,"perPage":30,"sort":"stars","order":"desc"},` +
		`"_meta":{"progressToken":"b1c5e2d4-7f3a-4e8b-9c1d-2a6f0e3b5c7d","traceparent":"00-4bf92f35"}}}`)
	var big bytes.Buffer
	big.WriteString(`{"jsonrpc":"2.0","id":"srv:7","result":{"content":[`)
	for i := 0; big.Len() < 1<<20-200; i++ {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteString(`{"type":"text","text":"line with \"quotes\", \\ and unicode é 😀 <&>"}`)
	}
	big.WriteString(`],"isError":false}}`)
	// A file's content: one long string, lines of prose ending in \n.
	var text bytes.Buffer
	text.WriteString(`{"jsonrpc":"2.0","id":"srv:8","result":{"content":[{"type":"text","text":"`)
	for text.Len() < 1<<20-200 {
		text.WriteString(`The quick brown fox jumps over the lazy dog, and then it runs on and on.\n`)
	}
	text.WriteString(`"}],"isError":false}}`)
	return []struct {
		name string
		line []byte
	}{
		{"tools-call", toolsCall},
		{"result-1MiB", big.Bytes()},
		{"text-1MiB", text.Bytes()},
	}
}

func BenchmarkParse(b *testing.B) {
	for _, bm := range benchLines() {
		b.Run(bm.name, func(b *testing.B) {
			if _, err := Parse(bm.line); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(bm.line)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := Parse(bm.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
