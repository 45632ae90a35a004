package jsonrpc

import (
	"encoding/json"
	"slices"
)

// Message is one JSON-RPC message. The raw fields are sub-slices of the parsed
// line, exactly as the peer wrote them; a nil field was absent.
type Message struct {
	ID     json.RawMessage // e.g. `7` or `"a"`; nil in a notification
	Method string          // "" in a response
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
	// Duplicate, with Options.CheckDuplicates, is the key of a member
	// that appears twice in one object of an answer ("" for none).
	Duplicate string
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// requestPrefix begins every request line.
const requestPrefix = `{"jsonrpc":"2.0","id":`

// AppendNotification appends a notification line, newline included.
func AppendNotification(b []byte, method string, params []byte) []byte {
	b = slices.Grow(b, len(method)+len(params)+40)
	b = append(b, `{"jsonrpc":"2.0"`...)
	return appendMethodParams(b, method, params)
}

// appendMethodParams appends the method and the params made of the
// concatenated parts (none: no params member), and closes the line.
func appendMethodParams(b []byte, method string, parts ...[]byte) []byte {
	b = append(b, `,"method":`...)
	b = AppendString(b, method)
	withParams := false
	for _, p := range parts {
		if len(p) > 0 {
			withParams = true
			break
		}
	}
	if withParams {
		b = append(b, `,"params":`...)
		for _, p := range parts {
			b = appendBulk(b, p)
		}
	}
	return append(b, "}\n"...)
}

// AppendResult appends a response line carrying result, newline included.
func AppendResult(b, id, result []byte) []byte {
	return appendResponse(b, id, `,"result":`, result)
}

// ResultParts returns the parts of a response line carrying result, to be
// written one after the other (Conn.WriteParts): result itself is not
// copied, which matters for a large one.
func ResultParts(id, result []byte) [3][]byte {
	head := appendResponse(nil, id, `,"result":`, []byte("0"))
	return [3][]byte{head[:len(head)-len("0}\n")], result, []byte("}\n")}
}

// IsBrokenNotification reports whether an invalid message m, read from
// line, was meant as a notification: a method and no id member at all (it
// gets no answer).
func IsBrokenNotification(line []byte, m *Message) bool {
	_, hasID := Member(line, "id")
	return m.Method != "" && !hasID
}

// AppendError appends a response line carrying the raw error object errObj,
// newline included. A nil id is written as null.
func AppendError(b, id, errObj []byte) []byte {
	return appendResponse(b, id, `,"error":`, errObj)
}

// AppendAnswer appends the response line that carries resp's raw error,
// or else its raw result, under id instead of resp's own: a peer's answer
// relayed to the peer that asked, newline included.
func AppendAnswer(b, id []byte, resp *Message) []byte {
	if resp.Error != nil {
		return AppendError(b, id, resp.Error)
	}
	return AppendResult(b, id, resp.Result)
}

func appendResponse(b, id []byte, field string, payload []byte) []byte {
	b = slices.Grow(b, len(id)+len(payload)+40) // one allocation for the line
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		id = []byte("null")
	}
	b = append(b, id...)
	b = append(b, field...)
	if len(payload) == 0 {
		payload = []byte("null")
	}
	b = appendBulk(b, payload)
	return append(b, "}\n"...)
}
