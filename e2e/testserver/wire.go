package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"
)

// message is any incoming JSON-RPC message. Raw fields keep the exact bytes.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m *message) hasID() bool {
	return len(m.ID) > 0 && string(m.ID) != "null"
}

// idKey is the map key of a raw id: its bytes (so "1" and 1 differ).
func idKey(id json.RawMessage) string {
	return string(bytes.TrimSpace(id))
}

// rpcError is a JSON-RPC error object; data is raw JSON (nil: absent).
type rpcError struct {
	code    int
	message string
	data    []byte
}

// errNoReply tells the dispatcher not to answer the request at all.
var errNoReply = &rpcError{code: 0, message: "no reply"}

// lineWriter writes whole lines, one Write call per line, under a mutex.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// writeLine appends '\n' to b (which it may modify) and writes it.
func (lw *lineWriter) writeLine(b []byte) {
	b = append(b, '\n')
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, _ = lw.w.Write(b)
}

// jsonString encodes s as a JSON string without escaping <, > and &
// (json.Marshal would write \u003c etc.).
func jsonString(s string) []byte {
	var buf bytes.Buffer
	buf.Grow(len(s) + 2)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b := buf.Bytes()
	return b[:len(b)-1] // Encode adds '\n'
}

var nullID = []byte("null")

// resultLine builds {"jsonrpc":"2.0","id":ID,"result":RESULT}.
func resultLine(id, result []byte) []byte {
	b := make([]byte, 0, len(id)+len(result)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// errorLine builds {"jsonrpc":"2.0","id":ID,"error":{...}}; a nil id is written as null.
func errorLine(id []byte, e *rpcError) []byte {
	if len(id) == 0 {
		id = nullID
	}
	b := make([]byte, 0, len(id)+len(e.message)+len(e.data)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(e.code), 10)
	b = append(b, `,"message":`...)
	b = append(b, jsonString(e.message)...)
	if len(e.data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.data...)
	}
	return append(b, "}}"...)
}

// requestLine builds a request to the client; nil params are left out.
func requestLine(id []byte, method string, params []byte) []byte {
	b := make([]byte, 0, len(id)+len(method)+len(params)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = append(b, jsonString(method)...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// notificationLine builds a notification; nil params are left out.
func notificationLine(method string, params []byte) []byte {
	b := make([]byte, 0, len(method)+len(params)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = append(b, jsonString(method)...)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// textResult builds a tool result with one text content item.
func textResult(text string, isError bool) []byte {
	b := make([]byte, 0, len(text)+64)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = append(b, jsonString(text)...)
	b = append(b, "}]"...)
	if isError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}')
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
