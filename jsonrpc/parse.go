package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors of Parse, distinguished with errors.Is.
var (
	ErrParse   = errors.New("not valid JSON")
	ErrInvalid = errors.New("not a valid JSON-RPC 2.0 message")
	// ErrTooDeep is the error of a line nested deeper than encoding/json
	// accepts (10,000 levels). It wraps ErrInvalid: such a line may be
	// JSON to another parser, so its id is read, to answer it under it.
	ErrTooDeep = fmt.Errorf("%w: nested more than %d levels deep", ErrInvalid, maxDepth)
)

// Parse parses one line. On ErrInvalid the returned message still carries
// whatever id could be read, so that the error can be answered under it.
//
// The line is validated and its members found in one pass: a line that is
// not JSON is refused whole, and no byte of it is read twice. Like
// encoding/json.Valid, Parse does not check UTF-8 (a Conn does, see
// ToValidUTF8).
func Parse(line []byte) (*Message, error) {
	m, _, err := parse(line, nil)
	return m, err
}

// parse is Parse that also reports whether a string of the line holds a
// byte >= 0x80; when it says false and err is nil, the line is ASCII. p
// (maybe nil) says which pieces of the line are plain (see plainPieces).
func parse(line []byte, p *plainPieces) (m *Message, nonASCII bool, err error) {
	line = trimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		nonASCII, ok := validate(line)
		if ok {
			return nil, nonASCII, fmt.Errorf("%w: expected a JSON object", ErrInvalid)
		}
		return nil, false, notJSON(line)
	}
	var e envelope
	if !e.scan(line, p) {
		if m, deep := tooDeep(line); deep {
			return m, true, ErrTooDeep // non-ASCII or not: the caller checks the line's UTF-8
		}
		return nil, false, notJSON(line)
	}
	m, err = e.check()
	return m, e.nonASCII, err
}

// envelope is what one pass over a line finds: the protocol members, as
// sub-slices of the line, and the first protocol member that repeats.
type envelope struct {
	m               Message
	version, method json.RawMessage
	seen            uint8 // one bit per protocol member
	repeated        string
	nonASCII        bool // a string holds a byte >= 0x80
}

// scan walks the members of the object line, validating every value, and
// reports whether the line is JSON; p is as for parse.
func (e *envelope) scan(line []byte, p *plainPieces) bool {
	i := skipSpace(line, 1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return false
		}
		keyEnd, flags, ok := checkString(line, i, nil)
		if !ok {
			return false
		}
		key := line[i+1 : keyEnd-1]
		if flags&nonASCIIFlag != 0 {
			e.nonASCII = true
		}
		if flags&escapedFlag != 0 {
			s, _ := String(line[i:keyEnd])
			key = []byte(s)
		}
		i = skipSpace(line, keyEnd)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		end, nonASCII, ok := checkValue(line, i, 1, p) // inside the line's object
		if !ok {
			return false
		}
		e.nonASCII = e.nonASCII || nonASCII
		e.keep(key, line[i:end:end])
		i = skipSpace(line, end)
		if i >= len(line) {
			return false
		}
		if line[i] == '}' {
			return i+1 == len(line)
		}
		if line[i] != ',' {
			return false
		}
		i = skipSpace(line, i+1)
	}
}

// keep records a protocol member; other members are not the protocol's.
func (e *envelope) keep(key, value []byte) {
	var bit uint8
	var field *json.RawMessage
	switch string(key) {
	case "jsonrpc":
		bit, field = 1, &e.version
	case "id":
		bit, field = 2, &e.m.ID
	case "method":
		bit, field = 4, &e.method
	case "params":
		bit, field = 8, &e.m.Params
	case "result":
		bit, field = 16, &e.m.Result
	case "error":
		bit, field = 32, &e.m.Error
	default:
		return
	}
	if e.seen&bit != 0 {
		// A repeated member would be read differently by different peers
		// (first or last wins): refuse it.
		if e.repeated == "" {
			e.repeated = string(key)
		}
		return
	}
	e.seen |= bit
	*field = value
}

// check applies the rules of JSON-RPC 2.0 to what scan found.
func (e *envelope) check() (*Message, error) {
	m := &Message{}
	*m = e.m
	if e.repeated != "" {
		return m, fmt.Errorf("%w: member %q appears twice", ErrInvalid, e.repeated)
	}
	if m.ID != nil && !validID(m.ID) {
		id := m.ID
		m.ID = nil
		return m, fmt.Errorf("%w: id must be a string or a number, not %s", ErrInvalid, clip(id))
	}
	if string(e.version) != `"`+Version+`"` && !isVersion(e.version) {
		return m, fmt.Errorf(`%w: "jsonrpc" must be "2.0"`, ErrInvalid)
	}
	if e.method != nil {
		return m, checkRequest(m, e.method)
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

// checkRequest checks a request or notification and sets m.Method.
func checkRequest(m *Message, method []byte) error {
	name, ok := String(method)
	if !ok || name == "" {
		return fmt.Errorf(`%w: "method" must be a non-empty string`, ErrInvalid)
	}
	m.Method = name
	if m.ID != nil && string(m.ID) == "null" {
		return fmt.Errorf("%w: a request id must not be null", ErrInvalid)
	}
	if m.Params != nil && m.Params[0] != '{' && m.Params[0] != '[' {
		return fmt.Errorf(`%w: "params" must be an object or an array`, ErrInvalid)
	}
	return nil
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

// tooDeep reports whether the object line, which the scanner refused,
// nests containers more than maxDepth levels deep, and returns what can be
// read of its top-level members then: the id (when it is a whole string or
// number), the method, and where the result or error is. Such a line may be
// valid JSON that another parser accepts: refusing it without its id would
// leave the request it asks or answers without an answer. Brackets are
// counted, not kept, so that a line of any depth costs no memory.
func tooDeep(line []byte) (*Message, bool) {
	if nesting(line) <= maxDepth {
		return nil, false
	}
	m := &Message{}
	EachMember(line, func(key []byte, start, end int) bool {
		v := line[start:end:end]
		switch string(key) {
		case "id":
			if id, ok := headIDValue(line, start); ok && m.ID == nil {
				m.ID = id
			}
		case "method":
			if name, ok := String(v); ok && m.Method == "" {
				m.Method = name
			}
		case "result":
			m.Result = v
		case "error":
			m.Error = v
		}
		return true
	})
	return m, true
}

// nesting returns how deep the containers of line nest, strings skipped;
// it does not check that they are well formed.
func nesting(line []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '"':
			end := stringEnd(line, i)
			if end < 0 {
				return deepest
			}
			i = end - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

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
