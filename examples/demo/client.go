package main

// This file is the demo's MCP client: one request at a time over the
// aggregator's stdin and stdout, and the printing of what comes back.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// client speaks to the aggregator it started.
type client struct {
	stdin   io.WriteCloser
	r       *bufio.Reader
	id      int // the last request id used
	changed int // notifications/tools/list_changed read and not yet acted on
}

// response is an answer to one of the client's requests; Result keeps the
// bytes as they came.
type response struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// startClient starts cmd with pipes for its stdin and stdout.
func startClient(cmd *exec.Cmd) (*client, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin of the aggregator: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("stdout of the aggregator: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the aggregator: %w", err)
	}
	return &client{stdin: stdin, r: bufio.NewReader(stdout)}, nil
}

// notify sends a notification.
func (c *client) notify(method string) error {
	_, err := fmt.Fprintf(c.stdin, `{"jsonrpc":"2.0","method":%q}`+"\n", method)
	if err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

// call prints and sends a request, and returns its answer: an error answer
// is an error. Notifications that come meanwhile are passed over.
func (c *client) call(out io.Writer, method, params string) (*response, error) {
	fmt.Fprintf(out, "\n--> %s\n", method)
	return c.request(method, params)
}

// awaitListChanged returns once notifications/tools/list_changed was read
// since the last call: at once when one was read meanwhile.
func (c *client) awaitListChanged() error {
	for c.changed == 0 {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("waiting for notifications/tools/list_changed: %w", err)
		}
		var r response
		if json.Unmarshal(line, &r) == nil && r.Method == "notifications/tools/list_changed" {
			c.changed++
		}
	}
	c.changed = 0
	return nil
}

// callTool prints and sends a tools/call of tool with args.
func (c *client) callTool(out io.Writer, tool, args string) (*response, error) {
	fmt.Fprintf(out, "\n--> tools/call %s %s\n", tool, args)
	return c.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
}

func (c *client) request(method, params string) (*response, error) {
	c.id++
	if _, err := fmt.Fprintf(c.stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", c.id, method, params); err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	want := fmt.Sprint(c.id)
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the answer to %s: %w", method, err)
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("the aggregator wrote a line that is not JSON: %q: %w", line, err)
		}
		if r.Method == "notifications/tools/list_changed" {
			c.changed++
		}
		if r.Method != "" || string(r.ID) != want {
			continue // a notification
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s %s: error %s", method, params, r.Error)
		}
		return &r, nil
	}
}

// printInitialize shows who answered, in which protocol, and the
// instructions the aggregator merged from its servers, when it knows them.
func printInitialize(out io.Writer, result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct{ Name, Version string }
		Instructions    string
	}
	json.Unmarshal(result, &r)
	fmt.Fprintf(out, "<-- %s %s, protocol %s: a first start (--no-memory), so initialize started both servers to say what they declare\n",
		r.ServerInfo.Name, r.ServerInfo.Version, r.ProtocolVersion)
	if r.Instructions != "" {
		fmt.Fprintf(out, "    the servers' instructions, each under its key:\n%s", indent(r.Instructions, "      "))
	}
}

// printTools shows the merged tool list.
func printTools(out io.Writer, result json.RawMessage) error {
	var r struct {
		Tools []struct{ Name, Description string }
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("tools/list result %s: %w", result, err)
	}
	fmt.Fprintf(out, "<-- %d tools in one list, from both servers, named KEY:tool:\n", len(r.Tools))
	for _, t := range r.Tools {
		fmt.Fprintf(out, "      %-14s %s\n", t.Name, t.Description)
	}
	return nil
}

// toolText is the text of a tool result, its lines indented.
func toolText(result json.RawMessage) string {
	var r struct {
		Content []struct{ Text string }
	}
	json.Unmarshal(result, &r)
	var texts []string
	for _, c := range r.Content {
		texts = append(texts, c.Text)
	}
	return strings.ReplaceAll(strings.Join(texts, "\n"), "\n", "\n    ")
}
