package jsonrpc

import (
	"bytes"
	"testing"
)

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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Append(nil); !bytes.Equal(got, []byte(tt.want)) {
				t.Errorf("Append = %s\nwant     %s", got, tt.want)
			}
			if got := tt.err.Append([]byte("x")); !bytes.Equal(got, []byte("x"+tt.want)) {
				t.Errorf("Append(x) = %s, want x%s", got, tt.want)
			}
		})
	}
}
