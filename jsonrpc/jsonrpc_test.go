package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestErrorIs(t *testing.T) {
	t.Parallel()
	notFound := &Error{Code: CodeMethodNotFound, Message: "no such method"}
	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"same code", notFound, &Error{Code: CodeMethodNotFound}, true},
		{"same code, other message and data", notFound, &Error{Code: CodeMethodNotFound, Message: "x", Data: []byte(`1`)}, true},
		{"wrapped", fmt.Errorf("calling: %w", notFound), &Error{Code: CodeMethodNotFound}, true},
		{"wrapped target", notFound, fmt.Errorf("x: %w", &Error{Code: CodeMethodNotFound}), true},
		{"Errorf", Errorf(CodeInvalidParams, "bad %s", "x"), &Error{Code: CodeInvalidParams}, true},
		{"other code", notFound, &Error{Code: CodeInvalidParams}, false},
		{"not an Error", notFound, io.EOF, false},
		{"nil Error target", notFound, (*Error)(nil), false},
		{"not an Error, Error target", io.EOF, &Error{Code: CodeMethodNotFound}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.target, got, tt.want)
			}
		})
	}
}

func TestErrorLayout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  *Error
		want string
	}{
		{"without data", &Error{Code: CodeMethodNotFound, Message: "Method not found"},
			`{"code":-32601,"message":"Method not found"}`},
		{"empty message", &Error{Code: 0}, `{"code":0,"message":""}`},
		{"positive code", &Error{Code: 42, Message: "m"}, `{"code":42,"message":"m"}`},
		{"message escaped, not HTML", &Error{Code: CodeParseError, Message: "bad \"<x>\" & \\\n\x01"},
			`{"code":-32700,"message":"bad \"<x>\" & \\\n\u0001"}`},
		{"with data kept raw", &Error{Code: CodeInvalidParams, Message: "bad", Data: []byte(`{"k" : [1, "<&>"]}`)},
			`{"code":-32602,"message":"bad","data":{"k" : [1, "<&>"]}}`},
		{"with null data", &Error{Code: CodeInternalError, Message: "x", Data: []byte(`null`)},
			`{"code":-32603,"message":"x","data":null}`},
		{"with empty data", &Error{Code: -32002, Message: "x", Data: []byte{}},
			`{"code":-32002,"message":"x"}`},
		{"Errorf", Errorf(CodeInvalidRequest, "line %d: %s", 3, "oops"),
			`{"code":-32600,"message":"line 3: oops"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Append(nil); !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("Append = %s\nwant     %s", got, tt.want)
			}
			if got := tt.err.Append([]byte("x")); !bytes.Equal(got, []byte("x"+tt.want)) {
				t.Errorf("Append(x) = %s, want x%s", got, tt.want)
			}
			got, err := tt.err.MarshalJSON()
			if err != nil || !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("MarshalJSON = %s, %v; want %s", got, err, tt.want)
			}
			// encoding/json calls MarshalJSON (and compacts what it returns).
			std, err := json.Marshal(map[string]any{"error": tt.err})
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			var back struct {
				Error struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal(std, &back); err != nil || back.Error.Code != tt.err.Code || back.Error.Message != tt.err.Message {
				t.Errorf("json.Marshal = %s, decoded %+v, %v", std, back, err)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	err := Errorf(CodeMethodNotFound, "method %q not found", "x")
	if got, want := err.Error(), `jsonrpc: error -32601: method "x" not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if err.Data != nil {
		t.Errorf("Errorf set Data = %s", err.Data)
	}
}
