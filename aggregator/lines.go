package aggregator

import (
	"errors"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file builds the error lines the aggregator writes itself, under a
// peer's id as it wrote it (a peer's answer relayed under another id is
// jsonrpc.AppendAnswer).

func invalidLine(m *jsonrpc.Message, err error) []byte {
	if errors.Is(err, jsonrpc.ErrParse) {
		return errorLine(nil, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	}
	var id []byte
	if m != nil {
		id = m.ID
	}
	return errorLine(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
}

func errorLine(id []byte, code int, message string) []byte {
	e := jsonrpc.Error{Code: code, Message: message}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

func errorDataLine(id []byte, code int, message string, data []byte) []byte {
	e := jsonrpc.Error{Code: code, Message: message, Data: data}
	return jsonrpc.AppendError(nil, id, e.Append(nil))
}

// rawError is an error object a peer sent, for logs.
type rawError []byte

func (e rawError) Error() string { return string(e) }

// codeResourceNotFound is MCP's error for a resource URI nobody serves.
const codeResourceNotFound = -32002
