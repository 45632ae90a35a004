package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// toolCall is one tools/call being served.
type toolCall struct {
	ctx  context.Context
	id   json.RawMessage            // the client's request id, raw
	name string                     // tool name
	args json.RawMessage            // raw "arguments" bytes ("{}" when absent)
	argm map[string]json.RawMessage // arguments by key
	meta map[string]json.RawMessage // params._meta by key
}

func (c *toolCall) str(key, def string) string {
	var v string
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return def
}

func (c *toolCall) num(key string, def int64) int64 {
	var v float64
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return int64(v)
	}
	return def
}

func (c *toolCall) flag(key string) bool {
	var v bool
	if raw, ok := c.argm[key]; ok && json.Unmarshal(raw, &v) == nil {
		return v
	}
	return false
}

type toolFunc func(s *server, c *toolCall) ([]byte, *rpcError)

// toolDef is a tool as listed (def is its raw JSON object) and how it answers.
type toolDef struct {
	name string
	def  string
	run  toolFunc
}

// echoDef carries every optional Tool field, and raw non-ASCII and <>&
// characters, so that byte-for-byte passthrough can be checked.
const echoDef = `{"name":"echo","title":"Echo ✓","description":"echo <input> & return it — ünïcode",` +
	`"inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"any <text> & more"}}},` +
	`"outputSchema":{"type":"object"},` +
	`"annotations":{"readOnlyHint":true},` +
	`"icons":[{"src":"https://example.com/echo.png","mimeType":"image/png","sizes":["48x48"]}],` +
	`"_meta":{"x":1}}`

// simpleDef builds a tool object; props is the inside of inputSchema.properties.
func simpleDef(name, description, props string) string {
	return `{"name":` + string(jsonString(name)) + `,"description":` + string(jsonString(description)) +
		`,"inputSchema":{"type":"object","properties":{` + props + `}}}`
}

// builtinTools lists the fixed tools, in tools/list order.
func builtinTools() []toolDef {
	return []toolDef{
		{"echo", echoDef, toolEcho},
		{"env", simpleDef("env", "return the value of environment variable arguments.name",
			`"name":{"type":"string"}`), toolEnv},
		{"slow", simpleDef("slow", "answer \"done\" after arguments.ms milliseconds (default 60000) unless cancelled",
			`"ms":{"type":"number"}`), toolSlow},
		{"progress", simpleDef("progress", "send arguments.steps progress notifications (needs _meta.progressToken)",
			`"steps":{"type":"number"},"ms":{"type":"number"}`), toolProgress},
		{"crash", simpleDef("crash", "exit with status 3 without answering", ""), toolCrash},
		{"big", simpleDef("big", "answer a text of arguments.bytes bytes",
			`"bytes":{"type":"number"}`), toolBig},
		{"fail", simpleDef("fail", "answer a JSON-RPC error -32042", ""), toolFail},
		{"iserror", simpleDef("iserror", "answer a result with isError true", ""), toolIsError},
		{"sample", simpleDef("sample", "ask the client for sampling/createMessage and return its raw answer",
			`"progress":{"type":"boolean"}`), toolSample},
		{"elicit", simpleDef("elicit", "ask the client for elicitation/create and return its raw answer", ""), toolElicit},
		{"roots", simpleDef("roots", "ask the client for roots/list and return its raw answer", ""), toolRoots},
		{"pingclient", simpleDef("pingclient", "ping the client and return its raw answer", ""), toolPingClient},
		{"log", simpleDef("log", "send notifications/message with arguments.text",
			`"text":{"type":"string"}`), toolLog},
		{"change", simpleDef("change", "add a tool (or a prompt or resource, arguments.kind) and send its list_changed",
			`"kind":{"type":"string"}`), toolChange},
		{"notify", simpleDef("notify", "send notifications/resources/updated and notifications/elicitation/complete (of e1, with arguments.url after its URL elicitation)",
			`"uri":{"type":"string"}`), toolNotify},
		{"cancelclient", simpleDef("cancelclient", "start a sampling request, then cancel it after arguments.ms (default 50)",
			`"ms":{"type":"number"}`), toolCancelClient},
		{"initparams", simpleDef("initparams", "return the client's initialize params, raw", ""), toolInitParams},
		{"deaf", simpleDef("deaf", "stop reading stdin for arguments.ms milliseconds (default 2000), then answer",
			`"ms":{"type":"number"}`), toolDeaf},
		{"badanswer", simpleDef("badanswer", "answer with an invalid response (\"error\":5)", ""), toolBadAnswer},
	}
}

var builtins = func() map[string]toolDef {
	m := map[string]toolDef{}
	for _, t := range builtinTools() {
		m[t.name] = t
	}
	return m
}()

func generatedDef(i int) string {
	return simpleDef("t"+strconv.Itoa(i), fmt.Sprintf("generated tool %d: answers like echo", i),
		`"value":{"type":"string","description":"anything"}`)
}

func addedDef(name string) string {
	return simpleDef(name, "tool added at run time: answers like echo", "")
}

// allTools returns the raw tool objects: builtins, generated, added.
func (s *server) allTools() [][]byte {
	s.mu.Lock()
	added := append([]string(nil), s.added...)
	s.mu.Unlock()
	bt := builtinTools()
	items := make([][]byte, 0, len(bt)+s.cfg.tools+len(added))
	for _, t := range bt {
		items = append(items, []byte(t.def))
	}
	items = append(items, s.hostileDefs()...)             // with -hostile (hostile.go)
	items = append(items, s.malformedEntries("tools")...) // with -malformed (malformed.go)
	for i := 0; i < s.cfg.tools; i++ {
		items = append(items, []byte(generatedDef(i)))
	}
	for _, name := range s.cfg.toolNames {
		items = append(items, []byte(simpleDef(name, "answers with the name it was called by", "")))
	}
	for _, name := range added {
		items = append(items, []byte(addedDef(name)))
	}
	return items
}

func (s *server) listTools(params json.RawMessage) ([]byte, *rpcError) {
	if s.cfg.failList {
		return nil, &rpcError{code: -32603, message: "list failed"}
	}
	page, next, rerr := paginate(s.allTools(), params, s.cfg.page)
	if rerr != nil {
		return nil, rerr
	}
	return listResult("tools", page, next), nil
}

// lookupTool finds the function answering tool name.
func (s *server) lookupTool(name string) toolFunc {
	if t, ok := builtins[name]; ok {
		return t.run
	}
	if run := s.hostileTool(name); run != nil { // with -hostile (hostile.go)
		return run
	}
	if name == "shapeless" && s.cfg.malformed {
		return toolShapeless
	}
	if rest, ok := strings.CutPrefix(name, "t"); ok {
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < s.cfg.tools && strconv.Itoa(i) == rest {
			return toolEcho
		}
	}
	for _, n := range s.cfg.toolNames {
		if n == name {
			return toolOwnName
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.added {
		if a == name {
			return toolEcho
		}
	}
	return nil
}

func (s *server) callTool(ctx context.Context, id, params json.RawMessage) ([]byte, *rpcError) {
	var p struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments"`
		Meta      map[string]json.RawMessage `json:"_meta"`
		Task      json.RawMessage            `json:"task"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &rpcError{code: -32602, message: "invalid tools/call params: " + err.Error()}
	}
	run := s.lookupTool(p.Name)
	if run == nil {
		return nil, &rpcError{code: -32602, message: "Unknown tool: " + p.Name}
	}
	c := &toolCall{ctx: ctx, id: id, name: p.Name, args: p.Arguments, meta: p.Meta}
	if len(c.args) == 0 || string(c.args) == "null" {
		c.args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(c.args, &c.argm); err != nil {
		return nil, &rpcError{code: -32602, message: "arguments must be an object: " + err.Error()}
	}
	if s.cfg.tasks && len(p.Task) > 0 && string(p.Task) != "null" {
		return s.startTask(c, run, p.Task)
	}
	return run(s, c)
}

// toolOwnName answers with the name the tool was called by.
func toolOwnName(_ *server, c *toolCall) ([]byte, *rpcError) {
	return textResult(c.name, false), nil
}

// toolEcho answers the raw arguments bytes, as text and as structuredContent.
func toolEcho(_ *server, c *toolCall) ([]byte, *rpcError) {
	b := make([]byte, 0, 2*len(c.args)+80)
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = append(b, jsonString(string(c.args))...)
	b = append(b, `}],"structuredContent":`...)
	b = append(b, c.args...)
	return append(b, '}'), nil
}

func toolEnv(_ *server, c *toolCall) ([]byte, *rpcError) {
	return textResult(os.Getenv(c.str("name", "")), false), nil
}

func toolSlow(s *server, c *toolCall) ([]byte, *rpcError) {
	t := time.NewTimer(time.Duration(c.num("ms", 60000)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return textResult("done", false), nil
	case <-c.ctx.Done():
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
}

func toolProgress(s *server, c *toolCall) ([]byte, *rpcError) {
	token, ok := c.meta["progressToken"]
	if !ok || len(token) == 0 || string(token) == "null" {
		return nil, &rpcError{code: -32602, message: "progress needs _meta.progressToken"}
	}
	steps := c.num("steps", 3)
	pause := time.Duration(c.num("ms", 0)) * time.Millisecond
	for i := int64(1); i <= steps; i++ {
		if pause > 0 {
			select {
			case <-time.After(pause):
			case <-c.ctx.Done():
				s.logf("cancelled %s", c.id)
				return nil, errNoReply
			}
		}
		p := []byte(`{"progressToken":`)
		p = append(p, token...)
		p = fmt.Appendf(p, `,"progress":%d,"total":%d,"message":"step %d"}`, i, steps, i)
		s.out.writeLine(notificationLine("notifications/progress", p))
	}
	return textResult("progressed", false), nil
}

func toolCrash(s *server, _ *toolCall) ([]byte, *rpcError) {
	crashing.Lock() // never unlocked: the process exits with 3, not 0
	s.logf("crash requested")
	if last := os.Getenv("TESTSERVER_LAST_WORDS"); last != "" {
		s.logf("%s", last) // a secret, say: what a server that fails may print
	}
	os.Exit(3)
	return nil, errNoReply
}

func toolBig(_ *server, c *toolCall) ([]byte, *rpcError) {
	n := c.num("bytes", 1<<20)
	if n < 0 {
		n = 0
	}
	return textResult(strings.Repeat("x", int(n)), false), nil
}

func toolFail(_ *server, _ *toolCall) ([]byte, *rpcError) {
	return nil, &rpcError{code: -32042, message: "custom failure", data: []byte(`{"why":"asked to fail <&>"}`)}
}

func toolIsError(_ *server, _ *toolCall) ([]byte, *rpcError) {
	return textResult("tool error", true), nil
}

// askClient sends a request to the client and turns its answer into a tool
// result: the raw result as text, or the raw error as text with isError.
func askClient(s *server, c *toolCall, method string, params []byte) ([]byte, *rpcError) {
	id, ch := s.sendRequest(method, params)
	m := s.await(c.ctx, id, ch)
	if m == nil {
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		return textResult(string(m.Error), true), nil
	}
	return textResult(string(m.Result), false), nil
}

func samplingParams(s *server, progress bool) []byte {
	p := []byte(`{"messages":[{"role":"user","content":{"type":"text","text":`)
	p = append(p, jsonString("hello from "+s.cfg.name)...)
	p = append(p, `}}],"maxTokens":100`...)
	if progress {
		p = append(p, `,"_meta":{"progressToken":"sample-tok"}`...)
	}
	return append(p, '}')
}

func toolSample(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "sampling/createMessage", samplingParams(s, c.flag("progress")))
}

func toolElicit(s *server, c *toolCall) ([]byte, *rpcError) {
	p := []byte(`{"message":"please fill the form","requestedSchema":{"type":"object",` +
		`"properties":{"name":{"type":"string","description":"your name"}},"required":["name"]}}`)
	return askClient(s, c, "elicitation/create", p)
}

func toolRoots(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "roots/list", nil)
}

func toolPingClient(s *server, c *toolCall) ([]byte, *rpcError) {
	return askClient(s, c, "ping", nil)
}

func toolLog(s *server, c *toolCall) ([]byte, *rpcError) {
	data, ok := c.argm["text"]
	if !ok {
		data = json.RawMessage(`""`)
	}
	p := []byte(`{"level":"info","logger":"testserver","data":`)
	p = append(p, bytes.TrimSpace(data)...)
	p = append(p, '}')
	s.out.writeLine(notificationLine("notifications/message", p))
	return textResult("logged", false), nil
}

// toolChange adds a tool (or, with arguments.kind "prompts" or
// "resources", a prompt or a resource) and says that list changed.
func toolChange(s *server, c *toolCall) ([]byte, *rpcError) {
	kind := c.str("kind", "tools")
	list := map[string]*[]string{"tools": &s.added, "prompts": &s.addedPrompts, "resources": &s.addedResources}[kind]
	if list == nil {
		return nil, &rpcError{code: -32602, message: "kind must be tools, prompts or resources"}
	}
	s.mu.Lock()
	name := "added" + strconv.Itoa(len(*list)+1)
	*list = append(*list, name)
	s.mu.Unlock()
	s.out.writeLine(notificationLine("notifications/"+kind+"/list_changed", nil))
	return textResult(name, false), nil
}

func toolNotify(s *server, c *toolCall) ([]byte, *rpcError) {
	uri := c.str("uri", "test://"+s.cfg.name+"/r0")
	s.out.writeLine(notificationLine("notifications/resources/updated",
		append(append([]byte(`{"uri":`), jsonString(uri)...), '}')))
	if c.flag("url") { // the URL elicitation e1 first, whose answer it waits for
		_, answered := s.sendRequest("elicitation/create",
			[]byte(`{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":"e1"}`))
		select {
		case <-answered:
		case <-c.ctx.Done():
			return nil, errNoReply
		}
	}
	s.out.writeLine(notificationLine("notifications/elicitation/complete", []byte(`{"elicitationId":"e1"}`)))
	return textResult("notified", false), nil
}

func toolCancelClient(s *server, c *toolCall) ([]byte, *rpcError) {
	id, _ := s.sendRequest("sampling/createMessage", samplingParams(s, false))
	t := time.NewTimer(time.Duration(c.num("ms", 50)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
	s.forget(id)
	s.sendCancelled(id, "changed my mind")
	if c.ctx.Err() != nil {
		s.logf("cancelled %s", c.id)
		return nil, errNoReply
	}
	return textResult("cancelled sampling", false), nil
}

func toolInitParams(s *server, _ *toolCall) ([]byte, *rpcError) {
	s.mu.Lock()
	p := s.initParams
	s.mu.Unlock()
	if p == nil {
		p = json.RawMessage("null")
	}
	return textResult(string(p), false), nil
}

func toolDeaf(s *server, c *toolCall) ([]byte, *rpcError) {
	s.readGate.Lock()
	s.logf("deaf")
	time.Sleep(time.Duration(c.num("ms", 2000)) * time.Millisecond)
	s.readGate.Unlock()
	return textResult("heard again", false), nil
}

func toolBadAnswer(s *server, c *toolCall) ([]byte, *rpcError) {
	s.out.writeLine([]byte(`{"jsonrpc":"2.0","id":` + string(c.id) + `,"error":5}`))
	return nil, errNoReply
}
