// Package mcpserver is the little that the example servers need to be MCP
// servers over stdio: newline-delimited JSON-RPC 2.0, initialize, ping,
// tools/list and tools/call. It is written for reading, not for reuse: one
// request at a time, tools only.
package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Tool is one tool of a server.
type Tool struct {
	Name        string
	Description string
	InputSchema string // a JSON Schema object

	// Call runs the tool with its arguments. An error becomes a result
	// with isError true, as MCP wants for a tool that failed: the model
	// reads the message.
	Call func(args json.RawMessage) (string, error)
}

// Server is an MCP server with tools.
type Server struct {
	Name, Version, Instructions string
	Tools                       []Tool
}

// versions are the protocol versions served; the last is the newest.
var versions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// request is a JSON-RPC request or notification (no id).
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// Serve answers the requests read from in on out until in ends.
func (s *Server) Serve(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in) // no line-length limit, unlike bufio.Scanner
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			if werr := s.answer(line, out); werr != nil {
				return fmt.Errorf("mcpserver %s: writing an answer: %w", s.Name, werr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("mcpserver %s: reading a request: %w", s.Name, err)
		}
	}
}

// answer handles one line and writes its answer, if it has one.
func (s *Server) answer(line []byte, out io.Writer) error {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return write(out, json.RawMessage("null"), nil, &rpcError{-32700, "parse error: " + err.Error()})
	}
	if req.ID == nil {
		return nil // a notification: nothing to answer
	}
	result, rerr := s.handle(req)
	return write(out, req.ID, result, rerr)
}

// handle serves one request.
func (s *Server) handle(req request) (any, *rpcError) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		version := versions[len(versions)-1]
		if slices.Contains(versions, p.ProtocolVersion) {
			version = p.ProtocolVersion
		}
		return map[string]any{
			"protocolVersion": version,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]string{"name": s.Name, "version": s.Version},
			"instructions":    s.Instructions,
		}, nil
	case "ping":
		return map[string]any{}, nil
	case "tools/list":
		tools := make([]map[string]any, len(s.Tools))
		for i, t := range s.Tools {
			tools[i] = map[string]any{"name": t.Name, "description": t.Description, "inputSchema": json.RawMessage(t.InputSchema)}
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		return s.call(req.Params)
	}
	return nil, &rpcError{-32601, "method not found: " + req.Method}
}

// call runs a tool.
func (s *Server) call(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{-32602, "invalid params: " + err.Error()}
	}
	i := slices.IndexFunc(s.Tools, func(t Tool) bool { return t.Name == p.Name })
	if i < 0 {
		return nil, &rpcError{-32602, "unknown tool: " + p.Name}
	}
	if p.Arguments == nil {
		p.Arguments = json.RawMessage("{}")
	}
	text, err := s.Tools[i].Call(p.Arguments)
	if err != nil {
		text = err.Error()
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	return struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError"`
	}{[]content{{"text", text}}, err != nil}, nil
}

// write writes one answer line: a result, or an error.
func write(out io.Writer, id json.RawMessage, result any, rerr *rpcError) error {
	msg := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *rpcError       `json:"error,omitempty"`
	}{"2.0", id, result, rerr}
	line, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = out.Write(append(line, '\n'))
	return err
}

// Args decodes a tool's arguments into v, strictly: an unknown or
// misspelt argument is an error the model can read.
func Args(args json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}
