// Package shape checks the shape of what a server sends that the aggregator
// passes on byte for byte: its list entries and the top level of its
// answers, as the official SDK clients read them. Pure functions.
package shape

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/internal/printable"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// A server's answers and list entries pass through byte for byte, so their
// shape is checked where one bad one would cost every server's: a client
// (the official TypeScript SDK's is one) refuses a whole merged list for
// one entry it cannot read, and drops an answer whose result or error it
// cannot read, leaving the call to hang until its timeout.
//
//   - a list entry (tool, prompt, resource, resource template) is checked
//     once, when its server's list is fetched: one that the MCP schema
//     (as the official SDKs read it) refuses is left out, with a warning
//     naming the server and the entry, once (Entry); tools/list
//     then stays a byte copy of the registry;
//   - an answer to a relayed call is checked at its top level only
//     (Answer): a result that is not an object, an error without
//     an integer code or a string message, is replaced by an error naming
//     the server. A well-formed answer is never re-encoded.

// Answer says what makes a server's answer one a client cannot
// read, or "" when its top level is well formed: a result that is an
// object, or an error object with an integer "code" and a string
// "message". It looks at the error's members only, never into a result.
func Answer(resp *jsonrpc.Message) string {
	if resp.Error == nil {
		if len(resp.Result) == 0 || resp.Result[0] != '{' {
			return "its result is not an object"
		}
		return ""
	}
	code, ok := jsonrpc.Member(resp.Error, "code")
	if !ok || !isInteger(code) {
		return `its error has no integer "code"`
	}
	if msg, ok := jsonrpc.Member(resp.Error, "message"); !ok || msg[0] != '"' {
		return `its error has no string "message"`
	}
	return ""
}

// isInteger reports whether raw is a JSON number with an integer value
// (7, -32603, 1e3, 7.0: as a JavaScript client reads it).
func isInteger(raw []byte) bool {
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
}

// A checker checks one member's value and says what is wrong with it, or
// returns "".
type checker func(key string, v []byte) string

// entryShape is what the MCP schema asks of one kind of list entry: the
// checker of each member it knows (others are free) and the members it
// requires.
type entryShape struct {
	kind     string // "tool", "prompt", "resource", "resource template"
	members  map[string]checker
	required []string
}

// entryShapes are the shapes of the entries of each list method.
var entryShapes = map[string]*entryShape{
	"tools/list": {kind: "tool", required: []string{"name", "inputSchema"}, members: map[string]checker{
		"name": isName, "title": isString, "description": isString, "icons": isIcons,
		"inputSchema": isSchema, "outputSchema": isSchema, "annotations": isToolAnnotations,
		"execution": isExecution, "_meta": isObject,
	}},
	"prompts/list": {kind: "prompt", required: []string{"name"}, members: map[string]checker{
		"name": isName, "title": isString, "description": isString, "icons": isIcons,
		"arguments": isPromptArguments, "_meta": isObject,
	}},
	"resources/list": {kind: "resource", required: []string{"name", "uri"}, members: map[string]checker{
		"name": isString, "title": isString, "description": isString, "icons": isIcons,
		"uri": isString, "mimeType": isString, "size": isNumber, "annotations": isAnnotations, "_meta": isObject,
	}},
	"resources/templates/list": {kind: "resource template", required: []string{"name", "uriTemplate"}, members: map[string]checker{
		"name": isString, "title": isString, "description": isString, "icons": isIcons,
		"uriTemplate": isString, "mimeType": isString, "annotations": isAnnotations, "_meta": isObject,
	}},
}

// Entry says what makes entry, an element of a list of method, one
// that the MCP schema refuses, or "" when it is well formed.
func Entry(method string, entry []byte) string {
	shape := entryShapes[method]
	if shape == nil {
		return ""
	}
	return shape.check(entry)
}

// check says what is wrong with the object entry, or "".
func (s *entryShape) check(entry []byte) string {
	if entry[0] != '{' {
		return "it is not an object"
	}
	found := 0
	var problem string
	jsonrpc.EachMember(entry, func(k []byte, start, end int) bool {
		check, known := s.members[string(k)]
		if !known {
			return true
		}
		for _, r := range s.required {
			if r == string(k) {
				found++
			}
		}
		problem = check(string(k), entry[start:end])
		return problem == ""
	})
	if problem == "" && found < len(s.required) {
		for _, r := range s.required {
			if _, ok := jsonrpc.Member(entry, r); !ok {
				return strconv.Quote(r) + " is missing"
			}
		}
	}
	return problem
}

// The checkers of values.

func isString(key string, v []byte) string {
	if v[0] != '"' {
		return strconv.Quote(key) + " is not a string"
	}
	return ""
}

func isObject(key string, v []byte) string {
	if v[0] != '{' {
		return strconv.Quote(key) + " is not an object"
	}
	return ""
}

func isBool(key string, v []byte) string {
	if string(v) != "true" && string(v) != "false" {
		return strconv.Quote(key) + " is not true or false"
	}
	return ""
}

func isNumber(key string, v []byte) string {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return strconv.Quote(key) + " is not a number"
	}
	return ""
}

// isName checks a tool's or prompt's name: a non-empty string without
// control characters, which would reach terminals and logs as they are.
func isName(key string, v []byte) string {
	name, ok := jsonrpc.String(v)
	switch {
	case !ok:
		return strconv.Quote(key) + " is not a string"
	case name == "":
		return strconv.Quote(key) + " is empty"
	case printable.HasControl(name):
		return strconv.Quote(key) + " holds control characters"
	}
	return ""
}

// oneOf returns a checker of a string that must be one of values.
func oneOf(values ...string) checker {
	return func(key string, v []byte) string {
		s, ok := jsonrpc.String(v)
		for _, want := range values {
			if ok && s == want {
				return ""
			}
		}
		if len(values) == 1 {
			return strconv.Quote(key) + " is not " + strconv.Quote(values[0])
		}
		return strconv.Quote(key) + " is not one of " + quoteAll(values)
	}
}

// quoteAll is values quoted, joined by commas.
func quoteAll(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// arrayOf returns a checker of an array whose every element elem accepts.
func arrayOf(elem checker) checker {
	return func(key string, v []byte) string {
		if v[0] != '[' {
			return strconv.Quote(key) + " is not an array"
		}
		items, err := jsonrpc.Elements(v)
		if err != nil {
			return strconv.Quote(key) + " is not an array"
		}
		for i, it := range items {
			if p := elem(key+"["+strconv.Itoa(i)+"]", it); p != "" {
				return p
			}
		}
		return ""
	}
}

// objectWith returns a checker of an object whose members named in
// members each pass their checker, with the members required present.
func objectWith(members map[string]checker, required ...string) checker {
	return func(key string, v []byte) string {
		if p := isObject(key, v); p != "" {
			return p
		}
		var problem string
		jsonrpc.EachMember(v, func(k []byte, start, end int) bool {
			if check, ok := members[string(k)]; ok {
				problem = check(key+"."+string(k), v[start:end])
			}
			return problem == ""
		})
		for _, r := range required {
			if _, ok := jsonrpc.Member(v, r); !ok && problem == "" {
				problem = strconv.Quote(key+"."+r) + " is missing"
			}
		}
		return problem
	}
}

var (
	isIcons = arrayOf(objectWith(map[string]checker{
		"src": isString, "mimeType": isString, "sizes": arrayOf(isString), "theme": oneOf("light", "dark"),
	}, "src"))
	isToolAnnotations = objectWith(map[string]checker{
		"title": isString, "readOnlyHint": isBool, "destructiveHint": isBool, "idempotentHint": isBool, "openWorldHint": isBool,
	})
	isExecution       = objectWith(map[string]checker{"taskSupport": oneOf("required", "optional", "forbidden")})
	isPromptArguments = arrayOf(objectWith(map[string]checker{
		"name": isString, "description": isString, "required": isBool,
	}, "name"))
	isAnnotations = objectWith(map[string]checker{
		"audience": arrayOf(oneOf("user", "assistant")), "priority": isPriority, "lastModified": isDateTime,
	})
	// isSchema checks a tool's inputSchema or outputSchema: an object
	// with "type": "object", its properties objects, its required names.
	isSchema = objectWith(map[string]checker{
		"type": oneOf("object"), "properties": isProperties, "required": arrayOf(isString),
	}, "type")
)

// isProperties checks a schema's properties: an object whose members are
// objects (or arrays, which a JavaScript client takes for objects too).
func isProperties(key string, v []byte) string {
	if p := isObject(key, v); p != "" {
		return p
	}
	var problem string
	jsonrpc.EachMember(v, func(k []byte, start, _ int) bool {
		if c := v[start]; c != '{' && c != '[' {
			problem = strconv.Quote(key+"."+string(k)) + " is not an object"
		}
		return problem == ""
	})
	return problem
}

func isPriority(key string, v []byte) string {
	f, err := strconv.ParseFloat(string(v), 64)
	if isNumber(key, v) != "" || err != nil || f < 0 || f > 1 {
		return strconv.Quote(key) + " is not a number from 0 to 1"
	}
	return ""
}

// dateTime is an RFC 3339 date and time with seconds and an offset, as
// the official TypeScript SDK requires of lastModified.
var dateTime = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)

func isDateTime(key string, v []byte) string {
	s, ok := jsonrpc.String(v)
	if ok {
		if m := dateTime.FindStringSubmatch(s); m != nil {
			if _, err := time.Parse(time.DateOnly, m[1]); err == nil {
				return ""
			}
		}
	}
	return strconv.Quote(key) + " is not a date and time (RFC 3339)"
}

// Repaired returns entry with what is missing added where what it means
// is certain, and says what was added: a tool without "inputSchema" takes
// any arguments, {"type":"object"}.
func Repaired(method string, entry []byte) ([]byte, string) {
	if method != "tools/list" || len(entry) == 0 || entry[0] != '{' {
		return entry, ""
	}
	if _, ok := jsonrpc.Member(entry, "inputSchema"); ok {
		return entry, ""
	}
	fixed, err := jsonrpc.ReplaceMember(entry, "inputSchema", []byte(`{"type":"object"}`))
	if err != nil {
		return entry, ""
	}
	return fixed, `"inputSchema" {"type":"object"} (any arguments)`
}

// Kind names the kind of entry a list method lists ("tool", "prompt",
// "resource", "resource template"), or "" for another method.
func Kind(method string) string {
	if shape := entryShapes[method]; shape != nil {
		return shape.kind
	}
	return ""
}
