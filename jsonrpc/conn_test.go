package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

type callResult struct {
	m   *Message
	err error
}

// goCall starts c.Call on its own goroutine.
func goCall(ctx context.Context, c *Conn, method string, params []byte) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		m, err := c.Call(ctx, method, params)
		ch <- callResult{m, err}
	}()
	return ch
}

// mustParse parses a line the Conn wrote.
func mustParse(t testing.TB, line []byte) *Message {
	t.Helper()
	m, err := Parse(line)
	if err != nil {
		t.Fatalf("the conn wrote %q: %v", line, err)
	}
	return m
}

func TestCallSequential(t *testing.T) {
	t.Parallel()
	p := newFakePeer(t, Options{}, nil)
	tests := []struct {
		method, params string
		wantLine       string // what the conn writes
		answer         string // what the peer answers
		result, errObj rawField
	}{
		{"initialize", `{"protocolVersion":"2025-06-18"}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}` + "\n",
			`{"jsonrpc":"2.0","id":1,"result":{"serverInfo" : {"name":"x"} , "k":[ ]}}` + "\n",
			raw(`{"serverInfo" : {"name":"x"} , "k":[ ]}`), absent},
		{"tools/list", "",
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n",
			` { "result" :  "\u00e9<&>" , "id" : 2 , "jsonrpc" : "2.0" } ` + "\r\n",
			raw(`"\u00e9<&>"`), absent},
		{"nope", `[]`,
			`{"jsonrpc":"2.0","id":3,"method":"nope","params":[]}` + "\n",
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32601, "message":"Method not found","data":{"m" :"nope"}}}` + "\n",
			absent, raw(`{"code":-32601, "message":"Method not found","data":{"m" :"nope"}}`)},
	}
	for i, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			var params []byte
			if tt.params != "" {
				params = []byte(tt.params)
			}
			res := goCall(context.Background(), p.conn, tt.method, params)
			if line := p.mustReadLine(); string(line) != tt.wantLine {
				t.Errorf("call %d wrote\n%q, want\n%q", i, line, tt.wantLine)
			}
			p.mustSend(tt.answer)
			r := await(t, res, "the call's answer")
			if r.err != nil {
				t.Fatalf("Call: %v", r.err)
			}
			checkRaw(t, "ID", nil, r.m.ID, raw(fmt.Sprint(i+1)))
			checkRaw(t, "Result", nil, r.m.Result, tt.result)
			checkRaw(t, "Error", nil, r.m.Error, tt.errObj)
		})
	}
}

func TestCallOutOfOrder(t *testing.T) {
	t.Parallel()
	const n = 100
	p := newFakePeer(t, Options{}, nil)

	// The peer reads all n requests, then answers them in reverse order,
	// each with its params as the result.
	peerDone := make(chan error, 1)
	reqs := make(chan []*Message, 1)
	go func() {
		var ms []*Message
		for range n {
			line, err := p.readLine()
			if err != nil {
				peerDone <- err
				return
			}
			m, err := Parse(line)
			if err != nil {
				peerDone <- fmt.Errorf("the conn wrote %q: %v", line, err)
				return
			}
			if want := requestLine(m.ID, m.Method, m.Params); !bytes.Equal(line, want) {
				peerDone <- fmt.Errorf("the conn wrote %q, want %q", line, want)
				return
			}
			ms = append(ms, m)
		}
		reqs <- ms
		for i := len(ms) - 1; i >= 0; i-- {
			if err := p.send(string(AppendResult(nil, ms[i].ID, ms[i].Params))); err != nil {
				peerDone <- err
				return
			}
		}
		peerDone <- nil
	}()

	errs := make(chan error, n)
	for i := range n {
		go func() {
			params := fmt.Sprintf(`{"i" : %d, "pad":%q}`, i, strings.Repeat("x", i))
			m, err := p.conn.Call(context.Background(), fmt.Sprintf("m%d", i), []byte(params))
			switch {
			case err != nil:
				errs <- fmt.Errorf("call %d: %v", i, err)
			case !bytes.Equal(m.Result, []byte(params)):
				errs <- fmt.Errorf("call %d got result %s, want %s", i, m.Result, params)
			default:
				errs <- nil
			}
		}()
	}
	for range n {
		if err := await(t, errs, "calls to return"); err != nil {
			t.Error(err)
		}
	}
	if err := await(t, peerDone, "the peer"); err != nil {
		t.Fatal(err)
	}

	ms := await(t, reqs, "the requests")
	seen := make(map[string]bool)
	for _, m := range ms {
		seen[string(m.ID)] = true
		// The method and params of each request belong together.
		var i int
		if _, err := fmt.Sscanf(m.Method, "m%d", &i); err != nil || !bytes.HasPrefix(m.Params, fmt.Appendf(nil, `{"i" : %d,`, i)) {
			t.Errorf("request %s has method %q but params %s", m.ID, m.Method, m.Params)
		}
	}
	for id := 1; id <= n; id++ {
		if !seen[fmt.Sprint(id)] {
			t.Errorf("no request with id %d; ids should be 1 to %d, each once; got %d distinct", id, n, len(seen))
		}
	}
}

func TestUnmatched(t *testing.T) {
	t.Parallel()
	unmatched := make(chan *Message, 10)
	p := newFakePeer(t, Options{Unmatched: func(m *Message) { unmatched <- m }}, nil)
	res := goCall(context.Background(), p.conn, "m", nil)
	p.mustReadLine()

	for _, tt := range []struct {
		name, line     string
		id             string
		result, errObj rawField
	}{
		{"unknown id", `{"jsonrpc":"2.0","id":999,"result":{"x" : 1}}`, `999`, raw(`{"x" : 1}`), absent},
		{"string id of a number", `{"jsonrpc":"2.0","id":"1","result":0}`, `"1"`, raw(`0`), absent},
		{"a fraction", `{"jsonrpc":"2.0","id":1.5,"result":0}`, `1.5`, raw(`0`), absent},
		{"another number's spelling", `{"jsonrpc":"2.0","id":0.1e2,"result":0}`, `0.1e2`, raw(`0`), absent},
		{"negative", `{"jsonrpc":"2.0","id":-1,"result":0}`, `-1`, raw(`0`), absent},
		{"too long to be ours", `{"jsonrpc":"2.0","id":1000000000000000000001,"result":0}`, `1000000000000000000001`, raw(`0`), absent},
		{"null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, `null`,
			absent, raw(`{"code":-32700,"message":"Parse error"}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p.mustSend(tt.line + "\n")
			m := await(t, unmatched, "Unmatched")
			checkRaw(t, "ID", nil, m.ID, raw(tt.id))
			checkRaw(t, "Result", nil, m.Result, tt.result)
			checkRaw(t, "Error", nil, m.Error, tt.errObj)
		})
	}
	select {
	case r := <-res:
		t.Fatalf("the call returned %+v before its answer came", r)
	default:
	}

	p.mustSend(`{"jsonrpc":"2.0","id":1,"result":"ok"}` + "\n")
	if r := await(t, res, "the call"); r.err != nil || string(r.m.Result) != `"ok"` {
		t.Errorf("Call = %+v", r)
	}
	// A second answer to the same id has no call any more.
	p.mustSend(`{"jsonrpc":"2.0","id":1,"result":"again"}` + "\n")
	if m := await(t, unmatched, "Unmatched"); string(m.Result) != `"again"` {
		t.Errorf("Unmatched got %s, want the second answer", m.Result)
	}
}

// An answer's id is compared as a JSON value: a peer that writes the id 1
// as 1.0 or 1e0 answers the call 1, and the answer keeps the peer's
// bytes; the string "3" answers no call 3.
func TestAnswerIDsAreJSONValues(t *testing.T) {
	t.Parallel()
	unmatched := make(chan *Message, 10)
	p := newFakePeer(t, Options{Unmatched: func(m *Message) { unmatched <- m }}, nil)
	for i, id := range []string{`1.0`, `2e0`, `30E-1`, `4.000e0`} {
		res := goCall(context.Background(), p.conn, "m", nil)
		p.mustReadLine()
		p.mustSend(`{"jsonrpc":"2.0","id":` + id + `,"result":"ok"}` + "\n")
		r := await(t, res, fmt.Sprintf("the answer of call %d under id %s", i+1, id))
		if r.err != nil {
			t.Fatalf("call %d: %v", i+1, r.err)
		}
		checkRaw(t, "ID", nil, r.m.ID, raw(id))
	}
	res := goCall(context.Background(), p.conn, "m", nil)
	p.mustReadLine()
	p.mustSend(`{"jsonrpc":"2.0","id":"5","result":"no"}` + "\n")
	if m := await(t, unmatched, "Unmatched"); string(m.ID) != `"5"` {
		t.Errorf("Unmatched got id %s, want the string \"5\"", m.ID)
	}
	p.mustSend(`{"jsonrpc":"2.0","id":5,"result":"yes"}` + "\n")
	if r := await(t, res, "call 5"); r.err != nil || string(r.m.Result) != `"yes"` {
		t.Errorf("call 5 = %+v, want the answer under the number 5", r)
	}
}

func TestHandle(t *testing.T) {
	t.Parallel()
	handled := make(chan *Message, 100)
	unmatched := make(chan *Message, 100)
	invalid := make(chan string, 100)
	p := newFakePeer(t, Options{
		Handle:    func(m *Message) { handled <- m },
		Unmatched: func(m *Message) { unmatched <- m },
		Invalid:   func(line []byte, _ *Message, _ error) { invalid <- string(line) },
	}, nil)

	lines := []string{
		`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name" : "x"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`, // a response: not for Handle
		`{"jsonrpc":"2.0","id":1.5e3,"method":"ping","params":[ ]}`,
		`not json`, // not for Handle
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":-7,"method":"resources/read","params":{"uri":"file:///x"}}`,
	}
	want := []struct {
		id     rawField
		method string
		params rawField
	}{
		{raw(`"abc"`), "tools/call", raw(`{"name" : "x"}`)},
		{absent, "notifications/initialized", absent},
		{raw(`1.5e3`), "ping", raw(`[ ]`)},
		{absent, "notifications/progress", raw(`{"progress":1}`)},
		{raw(`-7`), "resources/read", raw(`{"uri":"file:///x"}`)},
	}
	go p.send(strings.Join(lines, "\n") + "\n")

	var got []*Message
	for range want {
		got = append(got, await(t, handled, "Handle"))
	}
	await(t, unmatched, "Unmatched")
	await(t, invalid, "Invalid")
	// The messages handed to Handle stay intact while later lines are read.
	p.mustSend(`{"jsonrpc":"2.0","method":"later","params":{"overwrite":"` + strings.Repeat("z", 100<<10) + `"}}` + "\n")
	await(t, handled, "Handle")
	for i, m := range got {
		checkRaw(t, fmt.Sprintf("message %d: ID", i), nil, m.ID, want[i].id)
		checkRaw(t, fmt.Sprintf("message %d: Params", i), nil, m.Params, want[i].params)
		if m.Method != want[i].method {
			t.Errorf("message %d: Method = %q, want %q", i, m.Method, want[i].method)
		}
	}

	// Answers go out under the raw ids.
	for _, tt := range []struct {
		name  string
		write func() error
		want  string
	}{
		{"Reply", func() error { return p.conn.Reply(got[0].ID, []byte(`{"content" : []}`)) },
			`{"jsonrpc":"2.0","id":"abc","result":{"content" : []}}` + "\n"},
		{"ReplyError", func() error {
			return p.conn.ReplyError(got[2].ID, (&Error{Code: CodeMethodNotFound, Message: "no <ping>"}).Append(nil))
		}, `{"jsonrpc":"2.0","id":1.5e3,"error":{"code":-32601,"message":"no <ping>"}}` + "\n"},
		{"ReplyError with nil id", func() error { return p.conn.ReplyError(nil, []byte(`{"code":-32700,"message":"x"}`)) },
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}` + "\n"},
		{"Notify", func() error { return p.conn.Notify("notifications/cancelled", []byte(`{"requestId":-7}`)) },
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":-7}}` + "\n"},
		{"Notify without params", func() error { return p.conn.Notify("notifications/tools/list_changed", nil) },
			`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n"},
		{"Write", func() error { return p.conn.Write([]byte("{ \"any\" : \"line\" }\n")) },
			"{ \"any\" : \"line\" }\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			errc := make(chan error, 1)
			go func() { errc <- tt.write() }()
			if line := p.mustReadLine(); string(line) != tt.want {
				t.Errorf("wrote %q, want %q", line, tt.want)
			}
			if err := await(t, errc, tt.name); err != nil {
				t.Error(err)
			}
		})
	}
}

type invalidLine struct {
	line []byte
	msg  *Message
	err  error
}

func TestInvalid(t *testing.T) {
	t.Parallel()
	invalid := make(chan invalidLine, 100)
	handled := make(chan *Message, 100)
	p := newFakePeer(t, Options{
		Handle: func(m *Message) { handled <- m },
		Invalid: func(line []byte, m *Message, err error) {
			invalid <- invalidLine{bytes.Clone(line), m, err}
		},
	}, nil)

	tests := []struct {
		name   string
		send   string
		line   string // as Invalid gets it
		want   error
		noMsg  bool
		id     rawField
		method string
	}{
		{name: "not JSON", send: "not json\n", line: "not json", want: ErrParse, noMsg: true},
		{name: "truncated", send: `{"jsonrpc":"2.0","id":1,"method":` + "\n", line: `{"jsonrpc":"2.0","id":1,"method":`, want: ErrParse, noMsg: true},
		{name: "wrong version", send: `{"jsonrpc":"1.0","id":1,"method":"m"}` + "\n", line: `{"jsonrpc":"1.0","id":1,"method":"m"}`,
			want: ErrInvalid, id: raw(`1`)},
		{name: "array without Batch", send: `[{"jsonrpc":"2.0","method":"m"}]` + "\n", line: `[{"jsonrpc":"2.0","method":"m"}]`, want: ErrInvalid, noMsg: true},
		{name: "bool id", send: `{"jsonrpc":"2.0","id":true,"method":"m"}` + "\n", line: `{"jsonrpc":"2.0","id":true,"method":"m"}`, want: ErrInvalid},
		{name: "neither result nor error", send: `{"jsonrpc":"2.0","id":"r"}` + "\n", line: `{"jsonrpc":"2.0","id":"r"}`, want: ErrInvalid, id: raw(`"r"`)},
		{name: "string", send: `"hello"` + "\n", line: `"hello"`, want: ErrInvalid, noMsg: true},
		{name: "numeric params, spaces trimmed", send: " \t{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m\",\"params\":1} \r\n",
			line: `{"jsonrpc":"2.0","id":2,"method":"m","params":1}`, want: ErrInvalid, id: raw(`2`), method: "m"},
		// Invalid UTF-8 is replaced before Invalid sees it.
		{name: "binary", send: "\x00\xff\xfe\n", line: "\x00\uFFFD\uFFFD", want: ErrParse, noMsg: true},
		{name: "invalid UTF-8 in a refused message", send: "{\"jsonrpc\":\"1.0\",\"id\":\"\xc0\",\"method\":\"m\"}\n",
			line: "{\"jsonrpc\":\"1.0\",\"id\":\"\uFFFD\",\"method\":\"m\"}", want: ErrInvalid, id: raw("\"\uFFFD\"")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.mustSend(tt.send)
			got := await(t, invalid, "Invalid")
			if !bytes.Equal(got.line, []byte(tt.line)) {
				t.Errorf("Invalid got line %q, want %q", got.line, tt.line)
			}
			if !errors.Is(got.err, tt.want) {
				t.Errorf("Invalid got error %v, want one wrapping %q", got.err, tt.want)
			}
			if tt.noMsg {
				if got.msg != nil {
					t.Errorf("Invalid got message %+v, want nil", got.msg)
				}
			} else if got.msg == nil {
				t.Errorf("Invalid got no message, want one with id %v", tt.id)
			} else {
				checkRaw(t, "ID", nil, got.msg.ID, tt.id)
				if got.msg.Method != tt.method {
					t.Errorf("Method = %q, want %q", got.msg.Method, tt.method)
				}
			}

			// The connection keeps working.
			p.mustSend(`{"jsonrpc":"2.0","method":"still/here"}` + "\n")
			if m := await(t, handled, "Handle"); m.Method != "still/here" {
				t.Errorf("Handle got %q", m.Method)
			}
			res := goCall(context.Background(), p.conn, "m", nil)
			req := mustParse(t, p.mustReadLine())
			p.mustSend(string(AppendResult(nil, req.ID, []byte(`true`))))
			if r := await(t, res, "Call"); r.err != nil || string(r.m.Result) != "true" {
				t.Errorf("Call after an invalid line = %+v", r)
			}
		})
	}
	select {
	case got := <-invalid:
		t.Errorf("unexpected Invalid %q: %v", got.line, got.err)
	default:
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	batches := make(chan [][]byte, 10)
	invalid := make(chan invalidLine, 10)
	handled := make(chan *Message, 10)
	p := newFakePeer(t, Options{
		Handle: func(m *Message) { handled <- m },
		Batch: func(elems [][]byte) {
			var c [][]byte
			for _, e := range elems {
				c = append(c, bytes.Clone(e))
			}
			batches <- c
		},
		Invalid: func(line []byte, m *Message, err error) { invalid <- invalidLine{bytes.Clone(line), m, err} },
	}, nil)

	for _, tt := range []struct {
		name string
		send string
		want []string
	}{
		{"two messages", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b","params":{ }}]`,
			[]string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"jsonrpc":"2.0","method":"b","params":{ }}`}},
		{"spaces kept inside elements", " [ {\"a\" : 1} , 2,\"x\" ,[ ] ]\r",
			[]string{`{"a" : 1}`, `2`, `"x"`, `[ ]`}},
		{"one", `[{"jsonrpc":"2.0","id":2,"result":{}}]`, []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p.mustSend(tt.send + "\n")
			got := await(t, batches, "Batch")
			if len(got) != len(tt.want) {
				t.Fatalf("Batch got %q, want %q", got, tt.want)
			}
			for i := range got {
				if !bytes.Equal(got[i], []byte(tt.want[i])) {
					t.Errorf("element %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
	for _, tt := range []struct {
		name, send string
		want       error
	}{
		{"not JSON", `[{"jsonrpc":"2.0","method":"a"},`, ErrParse},
		{"trailing garbage", `[1] [2]`, ErrParse},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p.mustSend(tt.send + "\n")
			got := await(t, invalid, "Invalid")
			if string(got.line) != tt.send || !errors.Is(got.err, tt.want) {
				t.Errorf("Invalid got %q, %v; want %q, %v", got.line, got.err, tt.send, tt.want)
			}
		})
	}
	// Objects still go to Handle.
	p.mustSend(`{"jsonrpc":"2.0","method":"after"}` + "\n")
	if m := await(t, handled, "Handle"); m.Method != "after" {
		t.Errorf("Handle got %q", m.Method)
	}
	select {
	case b := <-batches:
		t.Errorf("unexpected Batch %q", b)
	case i := <-invalid:
		t.Errorf("unexpected Invalid %q: %v", i.line, i.err)
	default:
	}
}

// bigString returns a JSON string literal of about n bytes holding escapes,
// multi-byte characters and HTML characters, different for each seed.
func bigString(n int, seed byte) []byte {
	chunk := []byte(`abc \"q\" \\ \n é 😀 <&> \u00e9 {}[],: `)
	b := make([]byte, 0, n+len(chunk)+2)
	b = append(b, '"')
	for i := 0; len(b) < n; i++ {
		b = append(b, chunk...)
		b = append(b, 'a'+byte(i+int(seed))%26)
	}
	return append(b, '"')
}

func TestLongLines(t *testing.T) {
	t.Parallel()
	const (
		size = 20 << 20
		// Three 20 MiB lines take seconds under the race detector.
		timeout = 60 * time.Second
	)
	handled := make(chan *Message, 1)
	p := newSlowFakePeer(t, Options{Handle: func(m *Message) { handled <- m }}, nil, timeout)

	// Conn to peer: a 20 MiB request; peer to conn: a 20 MiB result.
	params := append(append([]byte(`{"blob" : `), bigString(size, 1)...), '}')
	result := append(append([]byte(`{ "blob":`), bigString(size, 2)...), " }"...)
	res := goCall(context.Background(), p.conn, "tools/call", params)
	line := p.mustReadLine()
	if want := requestLine([]byte("1"), "tools/call", params); !bytes.Equal(line, want) {
		t.Fatalf("the conn wrote %d bytes, not the %d-byte request line", len(line), len(want))
	}
	errc := make(chan error, 1)
	go func() { errc <- p.send(string(AppendResult(nil, []byte("1"), result))) }()
	r := awaitFor(t, res, timeout, "the call")
	if r.err != nil {
		t.Fatalf("Call: %v", r.err)
	}
	if !bytes.Equal(r.m.Result, result) {
		t.Fatalf("Call got a %d-byte result, not the %d bytes sent", len(r.m.Result), len(result))
	}
	if err := awaitFor(t, errc, timeout, "the answer written"); err != nil {
		t.Fatal(err)
	}

	// A 20 MiB notification without a newline at EOF.
	last := AppendNotification(nil, "last", params)
	last = last[:len(last)-1]
	go func() {
		err := p.send(string(last))
		if err == nil {
			err = p.toConn.Close()
		}
		errc <- err
	}()
	if m := awaitFor(t, handled, timeout, "Handle"); m.Method != "last" || !bytes.Equal(m.Params, params) {
		t.Fatalf("Handle got %q with %d bytes of params, want %q with %d", m.Method, len(m.Params), "last", len(params))
	}
	if err := awaitFor(t, errc, timeout, "the line written"); err != nil {
		t.Fatal(err)
	}
	if err := p.waitRun(); err != io.EOF {
		t.Errorf("Run = %v, want io.EOF", err)
	}
}

func TestLineEndings(t *testing.T) {
	t.Parallel()
	const (
		a = `{"jsonrpc":"2.0","method":"a","params":{"x" : 1}}`
		b = `{"jsonrpc":"2.0","id":1,"method":"b"}`
		c = `{"jsonrpc":"2.0","method":"c","params":[ 1 ]}`
	)
	tests := []struct {
		name  string
		input string
	}{
		{"\\n", a + "\n" + b + "\n" + c + "\n"},
		{"\\r\\n", a + "\r\n" + b + "\r\n" + c + "\r\n"},
		{"mixed", a + "\r\n" + b + "\n" + c + "\r\n"},
		{"blank lines", "\n\r\n \t \n" + a + "\n\n\n" + b + "\r\n\r\n   \r\n" + c + "\n\n"},
		{"no final newline", a + "\n" + b + "\n" + c},
		{"no final newline after \\r", a + "\r\n" + b + "\r\n" + c + "\r"},
		{"spaces around messages", "  " + a + "  \n\t" + b + "\t\r\n " + c + " "},
		{"final line of spaces", a + "\n" + b + "\n" + c + "\n   "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			watchdog(t, deadlockTimeout)
			var got []*Message
			var bad []string
			conn := NewConn(strings.NewReader(tt.input), io.Discard, Options{
				Handle:  func(m *Message) { got = append(got, m) },
				Invalid: func(line []byte, _ *Message, err error) { bad = append(bad, fmt.Sprintf("%q: %v", line, err)) },
			})
			if err := conn.Run(); err != io.EOF {
				t.Errorf("Run = %v, want io.EOF", err)
			}
			if len(bad) > 0 {
				t.Errorf("Invalid got %q", bad)
			}
			want := []struct {
				method string
				params rawField
			}{{"a", raw(`{"x" : 1}`)}, {"b", absent}, {"c", raw(`[ 1 ]`)}}
			if len(got) != len(want) {
				t.Fatalf("Handle got %d messages, want %d", len(got), len(want))
			}
			for i, m := range got {
				if m.Method != want[i].method {
					t.Errorf("message %d: Method = %q, want %q", i, m.Method, want[i].method)
				}
				checkRaw(t, "Params", nil, m.Params, want[i].params)
			}
			select {
			case <-conn.Done():
			default:
				t.Errorf("Done not closed after Run")
			}
			if err := conn.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
				t.Errorf("Err = %v, want ErrClosed and io.EOF", err)
			}
		})
	}
}

// failingReader returns the bytes of r, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = f.err
	}
	return n, err
}

func TestRunReadError(t *testing.T) {
	t.Parallel()
	watchdog(t, deadlockTimeout)
	var got []string
	conn := NewConn(&failingReader{strings.NewReader(`{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}`), errBoom},
		io.Discard, Options{Handle: func(m *Message) { got = append(got, m.Method) }})
	if err := conn.Run(); err != errBoom {
		t.Errorf("Run = %v, want %v", err, errBoom)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("Handle got %q, want [a b]: the partial line before the error is a message too", got)
	}
	if err := conn.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, errBoom) {
		t.Errorf("Err = %v, want ErrClosed and %v", err, errBoom)
	}
	if _, err := conn.Call(context.Background(), "m", nil); !errors.Is(err, ErrClosed) || !errors.Is(err, errBoom) {
		t.Errorf("Call after Run = %v, want ErrClosed and %v", err, errBoom)
	}
}

func TestEOFFailsPendingCalls(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		close func(*io.PipeWriter) error
		cause error
	}{
		{"EOF", (*io.PipeWriter).Close, io.EOF},
		{"read error", func(w *io.PipeWriter) error { return w.CloseWithError(errBoom) }, errBoom},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 10
			p := newFakePeer(t, Options{}, nil)
			var results []<-chan callResult
			for range n {
				results = append(results, goCall(context.Background(), p.conn, "m", nil))
			}
			for range n {
				p.mustReadLine() // every call is pending
			}
			if err := tt.close(p.toConn); err != nil {
				t.Fatal(err)
			}
			for i, res := range results {
				r := await(t, res, "a pending call to fail")
				if !errors.Is(r.err, ErrClosed) || !errors.Is(r.err, tt.cause) || r.m != nil {
					t.Errorf("call %d = %+v, want an error wrapping ErrClosed and %v", i, r, tt.cause)
				}
			}
			if err := p.waitRun(); err != tt.cause {
				t.Errorf("Run = %v, want %v", err, tt.cause)
			}
			await(t, p.conn.Done(), "Done")
		})
	}
}

// TestAnswerThenEOF checks that an answer read just before the end of input
// is not lost to the closing of the connection.
func TestAnswerThenEOF(t *testing.T) {
	t.Parallel()
	for i := range 50 {
		p := newFakePeer(t, Options{}, nil)
		res := goCall(context.Background(), p.conn, "m", nil)
		p.mustReadLine()
		p.mustSend(`{"jsonrpc":"2.0","id":1,"result":"last words"}`)
		p.toConn.Close()
		if r := await(t, res, "the call"); r.err != nil || string(r.m.Result) != `"last words"` {
			t.Fatalf("round %d: Call = %+v, %v; want the answer sent before EOF", i, r.m, r.err)
		}
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	rec := &recordingWriter{}
	p := newFakePeer(t, Options{}, rec)
	var results []<-chan callResult
	for range 5 {
		results = append(results, goCall(context.Background(), p.conn, "m", nil))
		p.mustReadLine()
	}
	if err := p.conn.Err(); err != nil {
		t.Fatalf("Err before Close = %v", err)
	}
	p.conn.Close(errBoom)
	for i, res := range results {
		r := await(t, res, "a pending call to fail")
		if !errors.Is(r.err, errBoom) || !errors.Is(r.err, ErrClosed) {
			t.Errorf("call %d = %+v, want an error wrapping ErrClosed and %v", i, r, errBoom)
		}
	}
	await(t, p.conn.Done(), "Done")

	// Only the first cause counts.
	p.conn.Close(io.ErrUnexpectedEOF)
	if err := p.conn.Err(); !errors.Is(err, errBoom) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Err after a second Close = %v, want the first cause", err)
	}

	// A call after Close fails at once, without writing.
	writes := len(rec.recorded())
	r := await(t, goCall(context.Background(), p.conn, "m", nil), "a call after Close")
	if !errors.Is(r.err, errBoom) || !errors.Is(r.err, ErrClosed) {
		t.Errorf("Call after Close = %+v, want an error wrapping ErrClosed and %v", r, errBoom)
	}
	if n := len(rec.recorded()); n != writes {
		t.Errorf("Call after Close wrote %d lines", n-writes)
	}

	// Late answers to the failed calls do not block the reader.
	for i := range 5 {
		p.mustSend(string(AppendResult(nil, []byte(fmt.Sprint(i+1)), []byte("0"))))
	}
}

func TestCloseNil(t *testing.T) {
	t.Parallel()
	c := NewConn(strings.NewReader(""), io.Discard, Options{})
	c.Close(nil)
	if err := c.Err(); !errors.Is(err, ErrClosed) || !errors.Is(err, io.EOF) {
		t.Errorf("Err after Close(nil) = %v, want ErrClosed and io.EOF", err)
	}
}

// TestCallWithEndedContextSendsNothing checks that a call whose context has
// already ended is neither sent nor reported as cancelled.
func TestCallWithEndedContextSendsNothing(t *testing.T) {
	t.Parallel()
	errGone := errors.New("caller gone")
	var rec recordingWriter
	called := false
	c := NewConn(strings.NewReader(""), &rec, Options{Cancelled: func(*Lane, json.RawMessage, error) { called = true }})
	ctx, cancel := context.WithDeadlineCause(context.Background(), time.Unix(0, 0), errGone)
	defer cancel()
	m, err := c.Call(ctx, "m", nil)
	if m != nil || err != errGone {
		t.Errorf("Call = %v, %v; want nil, %v", m, err, errGone)
	}
	if len(rec.recorded()) != 0 || called {
		t.Errorf("an ended call was written (%q) or reported cancelled (%v)", rec.recorded(), called)
	}
}

func TestCallCancel(t *testing.T) {
	t.Parallel()
	errGone := errors.New("caller gone")
	tests := []struct {
		name   string
		ctx    func() (context.Context, func())
		cause  error
		isWant error // what errors.Is must find in Call's error
	}{
		{"cancel with cause", func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			return ctx, func() { cancel(errGone) }
		}, errGone, errGone},
		{"cancel", func() (context.Context, func()) {
			return context.WithCancel(context.Background())
		}, context.Canceled, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type cancelled struct {
				id    json.RawMessage
				cause error
			}
			cancels := make(chan cancelled, 10)
			unmatched := make(chan *Message, 10)
			p := newFakePeer(t, Options{
				Cancelled: func(_ *Lane, id json.RawMessage, cause error) { cancels <- cancelled{id, cause} },
				Unmatched: func(m *Message) { unmatched <- m },
			}, nil)

			ctx, cancel := tt.ctx()
			defer cancel()
			res := goCall(ctx, p.conn, "slow", nil)
			req := mustParse(t, p.mustReadLine())
			cancel()
			r := await(t, res, "the cancelled call")
			if r.err != tt.cause || !errors.Is(r.err, tt.isWant) || r.m != nil {
				t.Errorf("Call = %+v, %v; want the cause %v", r.m, r.err, tt.cause)
			}
			c := await(t, cancels, "Cancelled")
			if !bytes.Equal(c.id, req.ID) || string(c.id) != "1" || c.cause != tt.cause {
				t.Errorf("Cancelled(%s, %v), want (1, %v)", c.id, c.cause, tt.cause)
			}

			// The late answer is unmatched.
			p.mustSend(`{"jsonrpc":"2.0","id":1,"result":"late"}` + "\n")
			if m := await(t, unmatched, "Unmatched"); string(m.ID) != "1" || string(m.Result) != `"late"` {
				t.Errorf("Unmatched got %+v", m)
			}

			// The connection goes on.
			res = goCall(context.Background(), p.conn, "next", nil)
			req = mustParse(t, p.mustReadLine())
			p.mustSend(string(AppendResult(nil, req.ID, []byte(`"on time"`))))
			if r := await(t, res, "the next call"); r.err != nil || string(r.m.ID) != "2" || string(r.m.Result) != `"on time"` {
				t.Errorf("next Call = %+v", r)
			}
			select {
			case c := <-cancels:
				t.Errorf("unexpected Cancelled(%s, %v)", c.id, c.cause)
			default:
			}
		})
	}
}

// TestOneWritePerLine checks, under concurrency, that every line reaches the
// writer in exactly one Write and that lines never interleave.
func TestOneWritePerLine(t *testing.T) {
	t.Parallel()
	const (
		workers = 20
		each    = 5 // lines per worker
	)
	rec := &recordingWriter{}
	p := newFakePeer(t, Options{}, rec)

	// The peer reads every line, answering the requests.
	peerLines := make(chan [][]byte, 1)
	peerErr := make(chan error, 1)
	go func() {
		var lines [][]byte
		for range workers * each {
			line, err := p.readLine()
			if err != nil {
				peerErr <- err
				return
			}
			lines = append(lines, line)
			m, err := Parse(line)
			if err != nil {
				peerErr <- fmt.Errorf("line %.100q: %v", line, err)
				return
			}
			if m.IsRequest() {
				go p.send(string(AppendResult(nil, m.ID, m.Params)))
			}
		}
		peerLines <- lines
		peerErr <- nil
	}()

	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			// Big enough for io.Pipe to hand them over in pieces.
			params := []byte(fmt.Sprintf(`{"w":%d,"pad":"%s"}`, w, strings.Repeat("p", (w+1)*10<<10)))
			var err error
			if m, cerr := p.conn.Call(context.Background(), "call", params); cerr != nil {
				err = cerr
			} else if !bytes.Equal(m.Result, params) {
				err = fmt.Errorf("worker %d: wrong result", w)
			}
			err = errors.Join(err,
				p.conn.Notify("note", params),
				p.conn.Reply([]byte(fmt.Sprint(w)), params),
				p.conn.ReplyError([]byte(`"e"`), params),
				p.conn.Write(AppendNotification(nil, "raw", params)))
			errs <- err
		}()
	}
	for range workers {
		if err := await(t, errs, "the workers"); err != nil {
			t.Error(err)
		}
	}
	if err := await(t, peerErr, "the peer"); err != nil {
		t.Fatal(err)
	}
	lines := await(t, peerLines, "the lines")

	writes := rec.recorded()
	if len(writes) != workers*each {
		t.Fatalf("%d writes for %d lines", len(writes), workers*each)
	}
	for i, w := range writes {
		if bytes.IndexByte(w, '\n') != len(w)-1 {
			t.Errorf("write %d is not one whole line: %.100q", i, w)
		}
		if !bytes.Equal(w, lines[i]) {
			t.Errorf("write %d differs from line %d the peer read", i, i)
		}
	}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	rec := &recordingWriter{err: errBoom}
	p := newFakePeer(t, Options{}, rec)
	if _, err := p.conn.Call(context.Background(), "m", nil); !errors.Is(err, errBoom) {
		t.Errorf("Call = %v, want %v", err, errBoom)
	}
	p.conn.mu.Lock()
	pending := len(p.conn.pending)
	p.conn.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d calls still pending after the write failed", pending)
	}
	if err := p.conn.Notify("n", nil); !errors.Is(err, errBoom) {
		t.Errorf("Notify = %v, want %v", err, errBoom)
	}
	if err := p.conn.Err(); err != nil {
		t.Errorf("a failed write closed the connection: %v", err)
	}
	if n := len(rec.recorded()); n != 2 {
		t.Errorf("%d writes, want 2", n)
	}
}

// TestCallStuckInWrite checks that a call blocked writing to a peer that
// reads nothing is freed by closing the writer (neither ctx nor Close can
// free it: the conn does not own the writer).
func TestCallStuckInWrite(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	rec := &recordingWriter{enter: func() { close(entered) }}
	p := newFakePeer(t, Options{}, rec)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := goCall(ctx, p.conn, "m", nil) // nobody reads fromConn
	await(t, entered, "the call to write")
	cancel()
	p.conn.Close(errBoom)
	p.fromConn.CloseWithError(errBoom)
	if r := await(t, res, "the stuck call"); !errors.Is(r.err, errBoom) {
		t.Errorf("Call = %+v, want %v", r, errBoom)
	}
	p.conn.mu.Lock()
	defer p.conn.mu.Unlock()
	if len(p.conn.pending) != 0 {
		t.Errorf("%d calls still pending", len(p.conn.pending))
	}
}

// TestNilHooks checks that a connection without hooks drops what it has no
// hook for and goes on.
func TestNilHooks(t *testing.T) {
	t.Parallel()
	p := newFakePeer(t, Options{}, nil)
	p.mustSend(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","method":"n"}`,
		`{"jsonrpc":"2.0","id":77,"result":{}}`,
		`not json`,
		`{"jsonrpc":"1.0"}`,
		`[{"jsonrpc":"2.0","method":"n"}]`,
	}, "\n") + "\n")
	res := goCall(context.Background(), p.conn, "m", nil)
	req := mustParse(t, p.mustReadLine())
	p.mustSend(string(AppendResult(nil, req.ID, []byte(`1`))))
	if r := await(t, res, "the call"); r.err != nil || string(r.m.Result) != "1" {
		t.Errorf("Call = %+v", r)
	}
	// Cancellation without a Cancelled hook.
	ctx, cancel := context.WithCancel(context.Background())
	res = goCall(ctx, p.conn, "m", nil)
	p.mustReadLine()
	cancel()
	if r := await(t, res, "the cancelled call"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Call = %+v, want context.Canceled", r)
	}
}

// TestDeliverFromBatch checks Deliver as a Batch hook uses it: responses in
// a batch reach their calls, unknown ones go to Unmatched.
func TestDeliverFromBatch(t *testing.T) {
	t.Parallel()
	unmatched := make(chan *Message, 10)
	delivered := make(chan []bool, 10)
	var p *fakePeer
	p = newFakePeer(t, Options{
		Unmatched: func(m *Message) { unmatched <- m },
		Batch: func(elems [][]byte) {
			var oks []bool
			for _, e := range elems {
				if m, err := Parse(e); err == nil && m.IsResponse() {
					oks = append(oks, p.conn.Deliver(m))
				}
			}
			delivered <- oks
		},
	}, nil)
	res1 := goCall(context.Background(), p.conn, "a", nil)
	p.mustReadLine()
	res2 := goCall(context.Background(), p.conn, "b", nil)
	p.mustReadLine()

	p.mustSend(`[{"jsonrpc":"2.0","id":2,"result":{"b" : 2}}, {"jsonrpc":"2.0","id":9,"result":0},` +
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"a"}}]` + "\n")
	if oks := await(t, delivered, "Batch"); len(oks) != 3 || !oks[0] || oks[1] || !oks[2] {
		t.Errorf("Deliver returned %v, want [true false true]", oks)
	}
	if m := await(t, unmatched, "Unmatched"); string(m.ID) != "9" {
		t.Errorf("Unmatched got id %s, want 9", m.ID)
	}
	if r := await(t, res1, "call 1"); r.err != nil || string(r.m.Error) != `{"code":-1,"message":"a"}` {
		t.Errorf("call 1 = %+v", r)
	}
	if r := await(t, res2, "call 2"); r.err != nil || string(r.m.Result) != `{"b" : 2}` {
		t.Errorf("call 2 = %+v", r)
	}
}

// TestGoParts: the parts are joined into the params of one request line,
// and no parts with bytes means no params member.
func TestGoParts(t *testing.T) {
	t.Parallel()
	p := newFakePeer(t, Options{}, nil)
	noop := func(*Message, error) {}
	obj := []byte(`{"name":"a:echo","arguments":{"x":1}}`)
	for _, tc := range []struct {
		method string
		parts  [][]byte
		want   string
	}{
		{"tools/call", [][]byte{obj[:8], []byte(`"echo"`), obj[16:]},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}`},
		{"ping", [][]byte{nil, {}}, `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
	} {
		errc := make(chan error, 1)
		go func() { // the fake peer's pipe takes a write only as it is read
			_, err := p.conn.GoParts(tc.method, AnswerFunc(noop), tc.parts...)
			errc <- err
		}()
		if got := string(p.mustReadLine()); got != tc.want+"\n" {
			t.Errorf("line %q, want %q", got, tc.want)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// WriteParts writes a line from its parts, in order, with no other line
// between them; ResultParts are the parts of a response line.
func TestWriteParts(t *testing.T) {
	t.Parallel()
	for _, queue := range []bool{false, true} {
		w := &recordingWriter{}
		c := NewConn(strings.NewReader(""), w, Options{Queue: queue})
		result := []byte(`{"big":"` + strings.Repeat("x", 1000) + `"}`)
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				parts := ResultParts([]byte(fmt.Sprint(i)), result)
				c.WriteParts(parts[:]...)
			}()
			go func() {
				defer wg.Done()
				c.Write([]byte(`{"jsonrpc":"2.0","method":"other"}` + "\n"))
			}()
		}
		wg.Wait()
		c.WaitWrites(0)
		w.mu.Lock()
		lines := strings.Split(strings.TrimSuffix(string(bytes.Join(w.writes, nil)), "\n"), "\n")
		w.mu.Unlock()
		if len(lines) != 40 {
			t.Fatalf("queue %v: %d lines, want 40", queue, len(lines))
		}
		for _, line := range lines {
			if line == `{"jsonrpc":"2.0","method":"other"}` {
				continue
			}
			m, err := Parse([]byte(line))
			if err != nil || string(m.Result) != string(result) {
				t.Fatalf("queue %v: line %.80q: %v", queue, line, err)
			}
		}
	}
}

// blockedWriter's Write waits until release is closed, then fails.
type blockedWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (w *blockedWriter) Write([]byte) (int, error) {
	close(w.entered)
	<-w.release
	return 0, errBoom
}

// TestGoFailsOrAnswersNeverBoth: a request whose write fails after the
// connection closed is answered once, by the close, and Go then reports
// no error of its own: the caller that got an error never hears from the
// Waiter, and the Waiter is never called twice.
func TestGoFailsOrAnswersNeverBoth(t *testing.T) {
	t.Parallel()
	w := &blockedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	c := NewConn(strings.NewReader(""), w, Options{})
	answers := make(chan error, 2)
	sent := make(chan error, 1)
	go func() {
		_, err := c.Go("m", nil, func(_ *Message, err error) { answers <- err })
		sent <- err
	}()
	await(t, w.entered, "the write")
	c.Close(errBoom) // the Waiter hears of the close...
	if err := await(t, answers, "the close's answer"); !errors.Is(err, ErrClosed) {
		t.Fatalf("Waiter got %v, want ErrClosed", err)
	}
	close(w.release) // ...and then the write fails
	if err := await(t, sent, "Go"); err != nil {
		t.Errorf("Go returned %v after its Waiter was answered: the caller would answer twice", err)
	}
	select {
	case err := <-answers:
		t.Errorf("Waiter called a second time, with %v", err)
	default:
	}
}

// TestPaceSaysWhatWasAnAnswer: Pace runs after each line that is not
// empty, told whether it was the answer to a pending call; a notification,
// an answer to nothing and a blank line are not.
func TestPaceSaysWhatWasAnAnswer(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	paced := make(chan bool, 10)
	var c *Conn
	c = NewConn(pr, io.Discard, Options{Pace: func(answered bool) { paced <- answered }})
	go c.Run()
	defer c.Close(nil)
	id, err := c.Go("m", nil, func(*Message, error) {})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		line     string
		answered bool
	}{
		{`{"jsonrpc":"2.0","method":"n"}`, false},
		{" ", false},
		{`{"jsonrpc":"2.0","id":99,"result":1}`, false},
		{`{"jsonrpc":"2.0","id":` + string(id) + `,"result":1}`, true},
	} {
		io.WriteString(pw, tt.line+"\n")
		if got := await(t, paced, "Pace"); got != tt.answered {
			t.Errorf("Pace(%v) after %q, want %v", got, tt.line, tt.answered)
		}
	}
}

// A request whose params hold a part of inPlacePart bytes or more is
// written whole and correct, the part from where it lies (not copied),
// wherever the part is among the others.
func TestGoPartsWritesALargePartInPlace(t *testing.T) {
	t.Parallel()
	big := append(append([]byte(`"`), bytes.Repeat([]byte("x"), inPlacePart)...), '"')
	for _, tc := range []struct {
		name  string
		parts [][]byte
	}{
		{"alone", [][]byte{append(append([]byte(`{"a":`), big...), '}')}},
		{"last", [][]byte{[]byte(`{"name":`), []byte(`"t"`), append(append([]byte(`,"arguments":`), big...), '}')}},
		{"first", [][]byte{append([]byte(`{"b":`), big...), []byte(`,"name":`), []byte(`"t"}`)}},
		{"middle", [][]byte{[]byte(`{"name":`), append([]byte(`"t","b":`), big...), []byte(`}`)}},
	} {
		var out bytes.Buffer
		c := NewConn(strings.NewReader(""), &out, Options{})
		if _, err := c.GoParts("m", AnswerFunc(func(*Message, error) {}), tc.parts...); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := `{"jsonrpc":"2.0","id":1,"method":"m","params":` + string(bytes.Join(tc.parts, nil)) + "}\n"
		if got := out.String(); got != want {
			t.Errorf("%s: the line differs (%d bytes, want %d): %.80q", tc.name, len(got), len(want), got)
		}
		if m, err := Parse(out.Bytes()); err != nil || string(m.Params) != string(bytes.Join(tc.parts, nil)) {
			t.Errorf("%s: the line does not parse as the request: %v", tc.name, err)
		}
	}
	if got := inPlace([][]byte{make([]byte, inPlacePart), make([]byte, inPlacePart)}); got != -1 {
		t.Errorf("two large parts: part %d in place, want none (the line has three parts)", got)
	}
}

// The large part is not copied: sending it allocates far less than its
// size (the line around it only).
func TestGoPartsDoesNotCopyALargePart(t *testing.T) {
	c := NewConn(strings.NewReader(""), io.Discard, Options{})
	part := bytes.Repeat([]byte("x"), 8*inPlacePart)
	part[0], part[len(part)-1] = '"', '"'
	send := func() {
		if _, err := c.GoParts("m", AnswerFunc(func(*Message, error) {}), []byte(`{"a":`), part, []byte(`}`)); err != nil {
			t.Fatal(err)
		}
	}
	send() // warm up
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	send()
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n >= uint64(len(part))/2 {
		t.Errorf("sending a %d-byte part allocated %d bytes: it was copied", len(part), n)
	}
}
