package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// Errors of Parse, distinguished with errors.Is.
var (
	ErrParse   = errors.New("not valid JSON")
	ErrInvalid = errors.New("not a valid JSON-RPC 2.0 message")
)

// Message is one JSON-RPC message. The raw fields are sub-slices of the parsed
// line, exactly as the peer wrote them; a nil field was absent.
type Message struct {
	ID     json.RawMessage // e.g. `7` or `"a"`; nil in a notification
	Method string          // "" in a response
	Params json.RawMessage
	Result json.RawMessage
	Error  json.RawMessage
}

// IsRequest reports whether m is a request (a method and an id).
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID != nil }

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// Parse parses one line. On ErrInvalid the returned message still carries
// whatever id could be read, so that the error can be answered under it.
//
// The line is validated and its members found in one pass: a line that is
// not JSON is refused whole, and no byte of it is read twice.
func Parse(line []byte) (*Message, error) {
	line = trimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		if Valid(line) {
			return nil, fmt.Errorf("%w: expected a JSON object", ErrInvalid)
		}
		return nil, notJSON(line)
	}
	m := &Message{}
	var version, method json.RawMessage
	var seen uint8 // one bit per protocol member
	repeated := ""
	i := skipSpace(line, 1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return nil, notJSON(line)
			}
			keyEnd, escaped, ok := checkString(line, i)
			if !ok {
				return nil, notJSON(line)
			}
			key := line[i+1 : keyEnd-1]
			if escaped {
				s, _ := String(line[i:keyEnd])
				key = []byte(s)
			}
			i = skipSpace(line, keyEnd)
			if i >= len(line) || line[i] != ':' {
				return nil, notJSON(line)
			}
			i = skipSpace(line, i+1)
			end, ok := checkValue(line, i, 1) // inside the line's object
			if !ok {
				return nil, notJSON(line)
			}
			var bit uint8
			var field *json.RawMessage
			switch string(key) {
			case "jsonrpc":
				bit, field = 1, &version
			case "id":
				bit, field = 2, &m.ID
			case "method":
				bit, field = 4, &method
			case "params":
				bit, field = 8, &m.Params
			case "result":
				bit, field = 16, &m.Result
			case "error":
				bit, field = 32, &m.Error
			}
			switch {
			case field == nil: // not a member of the protocol
			case seen&bit != 0:
				// A repeated member would be read differently by different
				// peers (first or last wins): refuse it.
				if repeated == "" {
					repeated = string(key)
				}
			default:
				seen |= bit
				*field = line[i:end:end]
			}
			i = skipSpace(line, end)
			if i >= len(line) {
				return nil, notJSON(line)
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return nil, notJSON(line)
			}
			i = skipSpace(line, i+1)
		}
	}
	if i != len(line) {
		return nil, notJSON(line)
	}
	if repeated != "" {
		return m, fmt.Errorf("%w: member %q appears twice", ErrInvalid, repeated)
	}
	if m.ID != nil && !validID(m.ID) {
		id := m.ID
		m.ID = nil
		return m, fmt.Errorf("%w: id must be a string or a number, not %s", ErrInvalid, clip(id))
	}
	if string(version) != `"`+Version+`"` && !isVersion(version) {
		return m, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalid)
	}
	if method != nil {
		name, ok := methodName(method)
		if !ok || name == "" {
			return m, fmt.Errorf(`%w: "method" must be a non-empty string`, ErrInvalid)
		}
		m.Method = name
		if m.ID != nil && string(m.ID) == "null" {
			return m, fmt.Errorf("%w: a request id must not be null", ErrInvalid)
		}
		if m.Params != nil && m.Params[0] != '{' && m.Params[0] != '[' {
			return m, fmt.Errorf(`%w: "params" must be an object or an array`, ErrInvalid)
		}
		return m, nil
	}
	if m.ID == nil {
		return m, fmt.Errorf(`%w: neither "method" nor "id"`, ErrInvalid)
	}
	if (m.Result == nil) == (m.Error == nil) {
		return m, fmt.Errorf(`%w: a response needs exactly one of "result" and "error"`, ErrInvalid)
	}
	if m.Error != nil && m.Error[0] != '{' {
		return m, fmt.Errorf(`%w: "error" must be an object`, ErrInvalid)
	}
	return m, nil
}

func validID(id []byte) bool {
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return string(id) == "null"
}

// isVersion reports whether raw is the string "2.0", however escaped.
func isVersion(raw []byte) bool {
	v, ok := String(raw)
	return ok && v == Version
}

// methodName decodes a raw method name. The methods of MCP come back as
// constants, without an allocation.
func methodName(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' {
		if name, ok := knownMethods[string(raw[1:len(raw)-1])]; ok {
			return name, true
		}
	}
	return String(raw)
}

// knownMethods maps each method name of MCP (2025-11-25) to itself.
var knownMethods = func() map[string]string {
	names := []string{
		"initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/templates/list", "resources/read", "resources/subscribe",
		"resources/unsubscribe", "completion/complete", "logging/setLevel",
		"sampling/createMessage", "elicitation/create", "roots/list",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/message", "notifications/tools/list_changed",
		"notifications/prompts/list_changed", "notifications/resources/list_changed",
		"notifications/resources/updated", "notifications/roots/list_changed",
		"notifications/elicitation/complete", "notifications/tasks/status",
	}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}()

// notJSON is Parse's error for a line that is not JSON.
func notJSON(line []byte) error {
	return fmt.Errorf("%w: %s", ErrParse, validationError(line))
}

// validationError says where a line stops being JSON.
func validationError(line []byte) string {
	var v any
	err := json.Unmarshal(line, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%v (at byte %d)", syn, syn.Offset)
	}
	if err != nil {
		return err.Error()
	}
	return "invalid JSON"
}

func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// requestPrefix begins every request line.
const requestPrefix = `{"jsonrpc":"2.0","id":`

// AppendRequest appends a request line, newline included.
func AppendRequest(b, id []byte, method string, params []byte) []byte {
	b = slices.Grow(b, len(id)+len(method)+len(params)+48)
	b = append(b, requestPrefix...)
	b = append(b, id...)
	return appendMethodParams(b, method, params)
}

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
			b = append(b, p...)
		}
	}
	return append(b, "}\n"...)
}

// AppendResult appends a response line carrying result, newline included.
func AppendResult(b, id, result []byte) []byte {
	return appendResponse(b, id, `,"result":`, result)
}

// AppendError appends a response line carrying the raw error object errObj,
// newline included. A nil id is written as null.
func AppendError(b, id, errObj []byte) []byte {
	return appendResponse(b, id, `,"error":`, errObj)
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
	b = append(b, payload...)
	return append(b, "}\n"...)
}

// IntID returns the raw id for n.
func IntID(n int64) json.RawMessage {
	return strconv.AppendInt(nil, n, 10)
}
