// Command gosdk runs one protocol-era interop scenario with the official Go MCP SDK client
// (github.com/modelcontextprotocol/go-sdk) against a stdio server spawned from the command after
// `--` (e2e/interop/era-server.mjs directly, or the aggregator). It is the Go counterpart of
// e2e/interop/era-client.mjs and prints the same JSON shape.
//
// Usage:
//
//	go run . [--prefix P] [--timeout DURATION] [--scenario era|everything] -- COMMAND ARGS...
//
// The client uses the SDK's default options: Connect first probes server/discover with protocol
// 2026-07-28 and falls back to initialize (2025-11-25) when the server answers with an error. Its
// ElicitationHandler answers form elicitations with canned values (name "Ada", color "blue"); its
// ToolListChangedHandler makes the SDK open a subscriptions/listen stream at Connect in the modern
// era (filter toolsListChanged, only when the server advertises tools.listChanged), while in the
// legacy era the same handler gets the unsolicited notification.
//
// Scenario "era" (the default, for era-server.mjs): list tools; call P+echo {text:"hi"}; call
// P+two_round (2 elicitations expected); call P+add_tool and wait (bounded, event-driven) for
// the tools list-changed notification; list tools again and look for P+added.
//
// Scenario "everything" (for the reference server-everything, a legacy-only server): list
// tools; call P+echo {message:"hi"}; call P+trigger-elicitation-request (1 elicitation expected,
// its text goes into "twoRound"); no list-change step.
//
// Output: one JSON object on stdout; a failed step is recorded under errors[step]. Logs go to
// stderr. Exit code: 0 when every step passed, 1 when one failed, 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// report is the JSON printed on stdout, the shape of era-client.mjs's.
type report struct {
	OK                  bool                    `json:"ok"`
	SDK                 string                  `json:"sdk"`
	Scenario            string                  `json:"scenario"`
	Prefix              string                  `json:"prefix"`
	ProtocolVersion     string                  `json:"protocolVersion"`
	Era                 string                  `json:"era"`
	ServerInfo          *mcp.Implementation     `json:"serverInfo"`
	Capabilities        *mcp.ServerCapabilities `json:"capabilities"`
	Tools               []string                `json:"tools"`
	Echo                *string                 `json:"echo"`
	TwoRound            *string                 `json:"twoRound"`
	Elicitations        int                     `json:"elicitations"`
	ElicitationMessages []string                `json:"elicitationMessages"`
	ListChanged         bool                    `json:"listChanged"`
	ToolsAfter          []string                `json:"toolsAfter"`
	Wire                wireSummary             `json:"wire"`
	Errors              map[string]string       `json:"errors"`
}

// wireSummary is what crossed the session's pipe: outbound request and notification methods in
// order, and the resultType of each inbound result that had one.
type wireSummary struct {
	Sent        []string `json:"sent"`
	ResultTypes []string `json:"resultTypes"`
}

var canned = map[string]any{"name": "Ada", "color": "blue", "check": true}

func main() {
	fs := flag.NewFlagSet("gosdk", flag.ContinueOnError)
	prefix := fs.String("prefix", "", "prepended to the tool names the scenario calls (e.g. era: behind the aggregator)")
	timeout := fs.Duration("timeout", 10*time.Second, "bound of each step")
	scenario := fs.String("scenario", "era", "era (era-server.mjs) or everything (server-everything)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run . [--prefix P] [--timeout D] [--scenario era|everything] -- COMMAND ARGS...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	cmdArgs := fs.Args()
	if len(cmdArgs) == 0 || (*scenario != "era" && *scenario != "everything") {
		fs.Usage()
		os.Exit(2)
	}
	out := run(*prefix, *timeout, *scenario, cmdArgs)
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if !out.OK {
		os.Exit(1)
	}
}

func run(p string, timeout time.Duration, scenario string, cmdArgs []string) *report {
	out := &report{SDK: "go", Scenario: scenario, Prefix: p, Errors: map[string]string{}, ElicitationMessages: []string{},
		Wire: wireSummary{Sent: []string{}, ResultTypes: []string{}}}
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "[gosdk] "+format+"\n", a...) }
	var mu sync.Mutex // guards out.Elicitations, out.ElicitationMessages, out.Wire, listChanged

	// step runs one step bounded by timeout; a failure is recorded in out.Errors[name].
	step := func(name string, fn func(ctx context.Context) error) bool {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := fn(ctx); err != nil {
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				err = fmt.Errorf("%w [code %d]", err, werr.Code)
			}
			out.Errors[name] = err.Error()
			logf("step %s failed: %v", name, err)
			return false
		}
		return true
	}

	// The tools list-changed waiter: armed just before add_tool is called, so a notification
	// from earlier does not count (event-driven, no polling).
	var listChanged chan struct{}
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			out.Elicitations++
			out.ElicitationMessages = append(out.ElicitationMessages, req.Params.Message)
			n := out.Elicitations
			mu.Unlock()
			logf("elicitation #%d: %s", n, req.Params.Message)
			content := map[string]any{}
			if schema, ok := req.Params.RequestedSchema.(map[string]any); ok {
				props, _ := schema["properties"].(map[string]any)
				for k := range props {
					if v, ok := canned[k]; ok {
						content[k] = v
					}
				}
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			mu.Lock()
			defer mu.Unlock()
			if listChanged == nil {
				logf("tools list_changed received (before add_tool: ignored)")
				return
			}
			logf("tools list_changed received")
			select {
			case <-listChanged:
			default:
				close(listChanged)
			}
		},
	}
	elicitations := func() int {
		mu.Lock()
		defer mu.Unlock()
		return out.Elicitations
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "era-client-go", Version: "1.0.0"}, opts)

	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stderr = os.Stderr
	transport := &tapTransport{inner: &mcp.CommandTransport{Command: cmd}, mu: &mu, wire: &out.Wire}

	var cs *mcp.ClientSession
	defer func() {
		out.OK = len(out.Errors) == 0
		if cs != nil {
			_ = cs.Close()
		}
	}()
	if !step("connect", func(ctx context.Context) error {
		var err error
		cs, err = client.Connect(ctx, transport, nil)
		return err
	}) {
		return out
	}
	ir := cs.InitializeResult()
	out.ProtocolVersion = ir.ProtocolVersion
	out.Era = "legacy"
	if ir.ProtocolVersion >= "2026-07-28" {
		out.Era = "modern"
	}
	out.ServerInfo = ir.ServerInfo
	out.Capabilities = ir.Capabilities
	logf("connected: %s (%s)", out.ProtocolVersion, out.Era)

	listTools := func(ctx context.Context) ([]string, error) {
		var names []string
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return names, err
			}
			names = append(names, t.Name)
		}
		return names, nil
	}
	callText := func(ctx context.Context, name string, args map[string]any) (string, error) {
		if args == nil {
			args = map[string]any{} // a nil map would go out as "arguments": null
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", err
		}
		var texts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		text := strings.Join(texts, "\n")
		if res.IsError {
			return text, fmt.Errorf("%s returned isError: %s", name, text)
		}
		return text, nil
	}

	step("listTools", func(ctx context.Context) (err error) {
		out.Tools, err = listTools(ctx)
		return err
	})

	if scenario == "everything" {
		step("echo", func(ctx context.Context) error {
			text, err := callText(ctx, p+"echo", map[string]any{"message": "hi"})
			out.Echo = &text
			if err == nil && text != "Echo: hi" {
				err = fmt.Errorf("unexpected echo text %q", text)
			}
			return err
		})
		step("elicitation", func(ctx context.Context) error {
			text, err := callText(ctx, p+"trigger-elicitation-request", nil)
			out.TwoRound = &text
			if err == nil && !strings.Contains(text, "- Name: Ada") {
				err = fmt.Errorf("unexpected trigger-elicitation-request text %q", text)
			}
			if n := elicitations(); err == nil && n != 1 {
				err = fmt.Errorf("expected 1 elicitation, got %d", n)
			}
			return err
		})
		return out
	}

	step("echo", func(ctx context.Context) error {
		text, err := callText(ctx, p+"echo", map[string]any{"text": "hi"})
		out.Echo = &text
		if err == nil && text != "echo: hi" {
			err = fmt.Errorf("unexpected echo text %q", text)
		}
		return err
	})
	step("twoRound", func(ctx context.Context) error {
		text, err := callText(ctx, p+"two_round", nil)
		out.TwoRound = &text
		if err == nil && text != "name=Ada color=blue" {
			err = fmt.Errorf("unexpected two_round text %q", text)
		}
		if n := elicitations(); err == nil && n != 2 {
			err = fmt.Errorf("expected 2 elicitations, got %d", n)
		}
		return err
	})

	// The modern era needs no explicit listen here: Connect already opened the
	// subscriptions/listen stream because ToolListChangedHandler is set.
	mu.Lock()
	listChanged = make(chan struct{})
	seen := listChanged
	mu.Unlock()
	step("addTool", func(ctx context.Context) error {
		_, err := callText(ctx, p+"add_tool", nil)
		return err
	})
	step("listChanged", func(ctx context.Context) error {
		select {
		case <-seen:
			out.ListChanged = true
			return nil
		case <-ctx.Done():
			return fmt.Errorf("no tools list_changed notification within %s", timeout)
		}
	})
	step("listToolsAfter", func(ctx context.Context) (err error) {
		out.ToolsAfter, err = listTools(ctx)
		if err == nil && !contains(out.ToolsAfter, p+"added") {
			err = fmt.Errorf("%sadded is not in the tools list", p)
		}
		return err
	})
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// tapTransport wraps a transport and records, in wire, the methods of the messages written and
// the resultType of the results read.
type tapTransport struct {
	inner mcp.Transport
	mu    *sync.Mutex
	wire  *wireSummary
}

func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tapConn{Connection: c, t: t}, nil
}

type tapConn struct {
	mcp.Connection
	t *tapTransport
}

func (c *tapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok {
		c.t.mu.Lock()
		c.t.wire.Sent = append(c.t.wire.Sent, req.Method)
		c.t.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && len(resp.Result) > 0 {
		var r struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(resp.Result, &r) == nil && r.ResultType != "" {
			c.t.mu.Lock()
			c.t.wire.ResultTypes = append(c.t.wire.ResultTypes, r.ResultType)
			c.t.mu.Unlock()
		}
	}
	return msg, err
}
