package e2e

// The three model APIs the fake model speaks (fakeapi_test.go), each with
// its real rule for tool names and its real 400 answer to a bad one.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// anthropicAPI is the Anthropic Messages API (Claude Code): tool names
// must match ^[a-zA-Z0-9_-]{1,64}$ and be unique.
type anthropicAPI struct{}

func (anthropicAPI) parse(r *http.Request, body []byte) ([]fakeTool, []string, bool) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return nil, nil, false
	}
	var req struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil, nil, false
	}
	var tools []fakeTool
	for _, t := range req.Tools {
		tools = append(tools, fakeTool{name: t.Name, description: t.Description})
	}
	var results []string
	for _, m := range req.Messages {
		var blocks []struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, textOf(b.Content))
			}
		}
	}
	return tools, results, true
}

func (anthropicAPI) refuse(tools []fakeTool) (int, string) {
	seen := map[string]bool{}
	for i, t := range tools {
		var msg string
		switch {
		case len(t.name) > 64:
			msg = fmt.Sprintf("tools.%d.custom.name: String should have at most 64 characters", i)
		case !nameRule.MatchString(t.name):
			msg = fmt.Sprintf("tools.%d.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'", i)
		case seen[t.name]:
			msg = "tools: Tool names must be unique."
		}
		seen[t.name] = true
		if msg != "" {
			return http.StatusBadRequest, `{"type":"error","error":{"type":"invalid_request_error","message":` + jsonString(msg) + `}}`
		}
	}
	return 0, ""
}

// anthropicMessage answers with one content block, streamed (its start,
// with a delta) or whole.
func anthropicMessage(w http.ResponseWriter, stream bool, block, delta, whole, stop string) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[`+whole+`],"stop_reason":"`+stop+`","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`)
		return
	}
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`
	sse(w, "message_start", start,
		"content_block_start", `{"type":"content_block_start","index":0,"content_block":`+block+`}`,
		"content_block_delta", `{"type":"content_block_delta","index":0,"delta":`+delta+`}`,
		"content_block_stop", `{"type":"content_block_stop","index":0}`,
		"message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":1}}`,
		"message_stop", `{"type":"message_stop"}`)
}

func (anthropicAPI) call(w http.ResponseWriter, stream bool, tool fakeTool, id int, args string) {
	use := fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%s,"input":%s}`, id, jsonString(tool.name), args)
	start := fmt.Sprintf(`{"type":"tool_use","id":"toolu_%d","name":%s,"input":{}}`, id, jsonString(tool.name))
	anthropicMessage(w, stream, start, `{"type":"input_json_delta","partial_json":`+jsonString(args)+`}`, use, "tool_use")
}

func (anthropicAPI) text(w http.ResponseWriter, stream bool, text string) {
	anthropicMessage(w, stream, `{"type":"text","text":""}`, `{"type":"text_delta","text":`+jsonString(text)+`}`,
		`{"type":"text","text":`+jsonString(text)+`}`, "end_turn")
}

func (anthropicAPI) other(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/count_tokens") {
		io.WriteString(w, `{"input_tokens":1}`)
	}
}

// openAIAPI is the OpenAI Responses API (Codex) as an OpenAI-compatible
// gateway serves it: a namespace's tools become functions named
// NAMESPACE__NAME (as QuantumNous/new-api flattens them), and every
// function name must match ^[a-zA-Z0-9_-]{1,64}$.
type openAIAPI struct{}

type openAITool struct {
	Type        string       `json:"type"`
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Tools       []openAITool `json:"tools"`
}

func (openAIAPI) parse(r *http.Request, body []byte) ([]fakeTool, []string, bool) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		return nil, nil, false
	}
	var req struct {
		Tools []openAITool `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil, nil, false
	}
	var tools []fakeTool
	for _, t := range req.Tools {
		switch t.Type {
		case "function":
			tools = append(tools, fakeTool{name: t.Name, description: t.Description})
		case "namespace":
			for _, m := range t.Tools {
				tools = append(tools, fakeTool{name: m.Name, description: m.Description, namespace: t.Name})
			}
		}
	}
	var results []string
	for _, it := range req.Input {
		if it.Type == "function_call_output" {
			results = append(results, textOf(it.Output))
		}
	}
	return tools, results, true
}

func (openAIAPI) refuse(tools []fakeTool) (int, string) {
	for i, t := range tools {
		name := t.name
		if t.namespace != "" {
			name = t.namespace + "__" + t.name
		}
		var msg, code string
		switch {
		case len(name) > 64:
			msg, code = fmt.Sprintf("Invalid 'tools[%d].name': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", i, len(name)), "string_above_max_length"
		case !nameRule.MatchString(name):
			msg, code = fmt.Sprintf("Invalid 'tools[%d].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", i), "invalid_value"
		}
		if msg != "" {
			return http.StatusBadRequest, fmt.Sprintf(`{"error":{"message":%s,"type":"invalid_request_error","param":"tools[%d].name","code":%q}}`, jsonString(msg), i, code)
		}
	}
	return 0, ""
}

// openAIResponse streams one output item.
func openAIResponse(w http.ResponseWriter, item string) {
	sse(w, "response.created", `{"type":"response.created","response":{"id":"resp_1"}}`,
		"response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":`+item+`}`,
		"response.completed", `{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0},"output_tokens":1,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":2}}}`)
}

func (openAIAPI) call(w http.ResponseWriter, _ bool, tool fakeTool, id int, args string) {
	ns := ""
	if tool.namespace != "" {
		ns = `,"namespace":` + jsonString(tool.namespace)
	}
	openAIResponse(w, fmt.Sprintf(`{"type":"function_call","id":"fc_%d","call_id":"call_%d","name":%s%s,"arguments":%s}`, id, id, jsonString(tool.name), ns, jsonString(args)))
}

func (openAIAPI) text(w http.ResponseWriter, _ bool, text string) {
	openAIResponse(w, `{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":`+jsonString(text)+`}]}`)
}

func (openAIAPI) other(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) }

// geminiAPI is the Gemini API (Gemini CLI): a function name must start
// with a letter or _, hold only [a-zA-Z0-9_.:-] and have at most 64
// characters, and be unique.
type geminiAPI struct{}

var geminiNameRule = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$`)

func (geminiAPI) parse(r *http.Request, body []byte) ([]fakeTool, []string, bool) {
	if r.Method != http.MethodPost || !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		return nil, nil, false
	}
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil, nil, false
	}
	var tools []fakeTool
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			tools = append(tools, fakeTool{name: f.Name, description: f.Description})
		}
	}
	var results []string
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				results = append(results, string(p.FunctionResponse.Response))
			}
		}
	}
	return tools, results, true
}

func (geminiAPI) refuse(tools []fakeTool) (int, string) {
	seen := map[string]bool{}
	var msgs []string
	for i, t := range tools {
		if !geminiNameRule.MatchString(t.name) {
			msgs = append(msgs, fmt.Sprintf("* GenerateContentRequest.tools[0].function_declarations[%d].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.\n", i))
		} else if seen[t.name] {
			msgs = append(msgs, fmt.Sprintf("* GenerateContentRequest.tools[0].function_declarations[%d].name: Duplicate function declaration found: %s\n", i, t.name))
		}
		seen[t.name] = true
	}
	if len(msgs) == 0 {
		return 0, ""
	}
	return http.StatusBadRequest, `{"error":{"code":400,"message":` + jsonString(strings.Join(msgs, "")) + `,"status":"INVALID_ARGUMENT"}}`
}

// geminiAnswer streams one candidate with parts.
func geminiAnswer(w http.ResponseWriter, parts string) {
	sse(w, "", `{"candidates":[{"content":{"role":"model","parts":`+parts+`},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`)
}

func (geminiAPI) call(w http.ResponseWriter, _ bool, tool fakeTool, id int, args string) {
	geminiAnswer(w, `[{"functionCall":{"name":`+jsonString(tool.name)+`,"args":`+args+`}}]`)
}

func (geminiAPI) text(w http.ResponseWriter, _ bool, text string) {
	geminiAnswer(w, `[{"text":`+jsonString(text)+`}]`)
}

// other answers Gemini CLI's own requests that are not streamed (a
// routing classifier, token counts) as a model would.
func (geminiAPI) other(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.Contains(r.URL.Path, ":countTokens"):
		io.WriteString(w, `{"totalTokens":1}`)
	case strings.Contains(r.URL.Path, ":generateContent"):
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"complexity_reasoning\":\"simple\",\"complexity_score\":1}"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2}}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}
