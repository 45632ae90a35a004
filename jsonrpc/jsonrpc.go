// Package jsonrpc is a newline-delimited JSON-RPC 2.0 codec and connection that
// keeps ids and payloads as the raw bytes the peer sent.
//
// Nothing that merely passes through is decoded and re-encoded: a Message holds
// sub-slices of the line it was parsed from, outgoing lines are built by
// appending bytes (see AppendResult and friends), and the small raw-JSON
// helpers (Members, Elements, Member, ReplaceMember) edit one member of an
// object while leaving every other byte alone.
//
// A Conn reads one message per line (of any length, or up to
// Options.MaxLineSize: a longer line is read by, not stored), correlates the
// answers to its own requests by id, and hands every request and notification
// of the peer to a handler. Ids are compared as JSON values, never as bytes:
// Key is the one key of an id (or any string or number that names
// something), under which every table of ids is to be looked up, while the
// bytes a peer wrote are what goes back to it. Parse validates a line and finds its members in
// one pass of its own scanner (valid.go), which accepts exactly what
// encoding/json.Valid accepts. The hooks of a Conn only ever see valid UTF-8:
// a line with invalid UTF-8 is rewritten first, each invalid byte becoming
// U+FFFD as encoding/json would decode it (ToValidUTF8); the scanner notes
// any byte >= 0x80 on its way, so ASCII lines are never checked twice.
package jsonrpc

import (
	"encoding/json"
	"strconv"
)

// Version is the only JSON-RPC version this package speaks.
const Version = "2.0"

// Standard JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object built by this side of a connection. Error
// objects that only pass through are never decoded into it.
type Error struct {
	Code    int
	Message string
	Data    json.RawMessage // optional
}

// Append appends the error object's JSON to b.
func (e *Error) Append(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = strconv.AppendInt(b, int64(e.Code), 10)
	b = append(b, `,"message":`...)
	b = AppendString(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = append(b, e.Data...)
	}
	return append(b, '}')
}
