package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The tools the server lists, in tools/list order (builtins, then those of
// -hostile and -malformed, -tools, -tool-names and the tool change), and
// which function answers each name.

// toolFunc answers one tools/call: a result, an error, or errNoReply for
// no answer at all.
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
		{"log", simpleDef("log", "send notifications/message with arguments.text, at arguments.level (default info)",
			`"text":{"type":"string"},"level":{"type":"string"}`), toolLog},
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
	return append(items, s.fileTools()...)
}

// fileTools are the tool definitions of -tools-file, as the file has them
// now; none when it cannot be read.
func (s *server) fileTools() [][]byte {
	if s.cfg.toolsFile == "" {
		return nil
	}
	b, err := os.ReadFile(s.cfg.toolsFile)
	if err != nil {
		return nil
	}
	var defs []json.RawMessage
	if json.Unmarshal(b, &defs) != nil {
		return nil
	}
	items := make([][]byte, len(defs))
	for i, d := range defs {
		items[i] = d
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
