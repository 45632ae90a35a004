package aggregator

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/config"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The children of a transcript, and the requestStates of the aggregator's
// in its lines (transcript_test.go).

// transcriptChildren returns the keys of a transcript's children and how
// each starts. A transcript whose first line is
//
//	# children: alpha=legacy beta=modern
//
// has those children, of those kinds (eraChild); any other has alpha and
// beta made by transcriptChild.
func transcriptChildren(t *testing.T, file string) ([]string, func(config.Server) (Process, error)) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	spec, ok := strings.CutPrefix(first, "# children:")
	if !ok {
		return []string{"alpha", "beta"}, func(s config.Server) (Process, error) { return startFake(transcriptChild(s.Key)), nil }
	}
	kinds := map[string]string{}
	var keys []string
	for _, f := range strings.Fields(spec) {
		key, kind, _ := strings.Cut(f, "=")
		if kind != "legacy" && kind != "modern" && kind != "tasks" {
			t.Fatalf("%s: child %q: kind %q, want legacy, modern or tasks", file, key, kind)
		}
		kinds[key] = kind
		keys = append(keys, key)
	}
	return keys, func(s config.Server) (Process, error) {
		return startScripted((&eraChild{key: s.Key, kind: kinds[s.Key]}).script), nil
	}
}

// eraChild is a scripted child of a transcript, named key, of one kind:
//
//   - legacy: a 2025-11-25 server. server/discover is -32601; initialize
//     says tools (listChanged), resources (subscribe) and logging; resource
//     x://KEY/a.
//   - tasks: legacy, and it runs tools/call as a task when asked (tasks
//     capability; tool work, taskSupport optional).
//   - modern: a 2026-07-28 server. initialize is -32022; server/discover
//     says tools (listChanged) and instructions, caching hint 0 and public;
//     every request without the modern _meta is -32602; it acknowledges
//     subscriptions/listen and never answers it.
//
// Tools of each: echo (answers with its arguments; a modern child adds the
// _meta it got), change (answers, then says its tools changed; a modern
// child on the listen it was last sent), ask (asks for a name, then a
// color, then answers with what it got: a legacy child by
// elicitation/create, a modern one by input_required, stateless, its
// requestState carrying what it was told so far); a legacy child's log
// (logs "working" at info, then answers) and touch (answers, then says
// x://KEY/a was updated).
type eraChild struct {
	key, kind string
	// Its own state, touched only by the goroutine that runs the script.
	askID    []byte // legacy: the id of the call of ask under way
	name     []byte // legacy: the answer to the first question
	listenID []byte // modern: the id of the last subscriptions/listen
}

func (ec *eraChild) script(m *jsonrpc.Message, _ []byte, out io.Writer) {
	say := func(line []byte) { out.Write(line) }
	answer := func(result string) { say(jsonrpc.AppendResult(nil, m.ID, []byte(result))) }
	fail := func(errObj string) { say(jsonrpc.AppendError(nil, m.ID, []byte(errObj))) }
	if ec.kind == "modern" {
		ec.modern(m, say, answer, fail)
		return
	}
	if m.IsResponse() {
		ec.answered(m, say)
		return
	}
	if !m.IsRequest() {
		return
	}
	key := ec.key
	taskID, _ := jsonrpc.StringMember(m.Params, "taskId")
	switch m.Method {
	case "server/discover":
		fail(`{"code":-32601,"message":"Method not found"}`)
	case "initialize":
		tasks := ""
		if ec.kind == "tasks" {
			tasks = `,"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`
		}
		answer(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{"subscribe":true},"logging":{}` + tasks + `},"serverInfo":{"name":"` + key + `","version":"1"}}`)
	case "tools/list":
		work := ""
		if ec.kind == "tasks" {
			work = `,{"name":"work","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`
		}
		answer(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"change","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}},{"name":"log","inputSchema":{"type":"object"}},{"name":"touch","inputSchema":{"type":"object"}}` + work + `]}`)
	case "tools/call":
		ec.legacyCall(m, say, answer)
	case "resources/list":
		answer(`{"resources":[{"uri":"x://` + key + `/a","name":"a"}]}`)
	case "resources/templates/list":
		answer(`{"resourceTemplates":[]}`)
	case "resources/read":
		uri, _ := jsonrpc.Member(m.Params, "uri")
		answer(`{"contents":[{"uri":` + string(uri) + `,"text":"` + key + `"}]}`)
	case "tasks/get":
		answer(ec.taskObj(taskID, "completed"))
	case "tasks/result":
		answer(`{"content":[{"type":"text","text":"` + key + `'s result of ` + taskID + `"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":` + string(jsonrpc.AppendString(nil, taskID)) + `}}}`)
	default:
		answer(`{}`)
	}
}

func (ec *eraChild) taskObj(id, status string) string {
	return `{"taskId":` + string(jsonrpc.AppendString(nil, id)) + `,"status":"` + status + `","createdAt":"2026-11-23T10:00:00Z","lastUpdatedAt":"2026-11-23T10:00:01Z","ttl":60000,"pollInterval":100}`
}

func (ec *eraChild) legacyCall(m *jsonrpc.Message, say func([]byte), answer func(string)) {
	key := ec.key
	name, _ := jsonrpc.StringMember(m.Params, "name")
	switch name {
	case "change":
		answer(`{"content":[]}`)
		say(jsonrpc.AppendNotification(nil, "notifications/tools/list_changed", nil))
	case "touch":
		answer(`{"content":[]}`)
		say(jsonrpc.AppendNotification(nil, "notifications/resources/updated", []byte(`{"uri":"x://`+key+`/a"}`)))
	case "log":
		say(jsonrpc.AppendNotification(nil, "notifications/message", []byte(`{"level":"info","logger":"`+key+`","data":"working"}`)))
		answer(`{"content":[]}`)
	case "ask":
		ec.askID = m.ID
		say([]byte(`{"jsonrpc":"2.0","id":"` + key + `-e1","method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}` + "\n"))
	case "work":
		if _, ok := jsonrpc.Member(m.Params, "task"); ok && ec.kind == "tasks" {
			answer(`{"task":` + ec.taskObj("task-1", "working") + `}`)
			return
		}
		answer(`{"content":[{"type":"text","text":"no task"}]}`)
	default:
		args, _ := jsonrpc.Member(m.Params, "arguments")
		answer(`{"content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, key+" "+string(args))) + `}]}`)
	}
}

// answered is the client's answer to a legacy child's question during ask.
func (ec *eraChild) answered(m *jsonrpc.Message, say func([]byte)) {
	id, _ := jsonrpc.String(m.ID)
	switch {
	case id == ec.key+"-e1" && m.Result != nil:
		ec.name = m.Result
		say([]byte(`{"jsonrpc":"2.0","id":"` + ec.key + `-e2","method":"elicitation/create","params":{"message":"color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}}}}}` + "\n"))
	case id == ec.key+"-e2" && m.Result != nil:
		text := ec.key + " was told " + string(ec.name) + " then " + string(m.Result)
		say(jsonrpc.AppendResult(nil, ec.askID, []byte(`{"content":[{"type":"text","text":`+string(jsonrpc.AppendString(nil, text))+`}]}`)))
	case id == ec.key+"-e1" || id == ec.key+"-e2":
		say(jsonrpc.AppendResult(nil, ec.askID, []byte(`{"content":[{"type":"text","text":"no answer"}],"isError":true}`)))
	}
}

func (ec *eraChild) modern(m *jsonrpc.Message, say func([]byte), answer func(string), fail func(string)) {
	if !m.IsRequest() {
		return
	}
	key := ec.key
	info := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"` + key + `","version":"1"}}`
	if m.Method == "initialize" {
		requested, _ := jsonrpc.Member(m.Params, "protocolVersion")
		fail(`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":` + string(requested) + `}}`)
		return
	}
	meta, _ := jsonrpc.Member(m.Params, "_meta")
	if v, _ := jsonrpc.StringMember(meta, "io.modelcontextprotocol/protocolVersion"); v != "2026-07-28" {
		fail(`{"code":-32602,"message":"Invalid params: no io.modelcontextprotocol/protocolVersion in _meta"}`)
		return
	}
	switch m.Method {
	case "server/discover":
		answer(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"instructions":"Ask ` + key + `.","ttlMs":0,"cacheScope":"public",` + info + `}`)
	case "tools/list":
		answer(`{"resultType":"complete","tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"change","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"public",` + info + `}`)
	case "subscriptions/listen":
		ec.listenID = m.ID
		f, _ := jsonrpc.Member(m.Params, "notifications")
		say(jsonrpc.AppendNotification(nil, "notifications/subscriptions/acknowledged", []byte(`{"notifications":`+string(f)+`,"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(m.ID)+`}}`)))
	case "tools/call":
		name, _ := jsonrpc.StringMember(m.Params, "name")
		switch name {
		case "change":
			answer(`{"resultType":"complete","content":[],` + info + `}`)
			say(jsonrpc.AppendNotification(nil, "notifications/tools/list_changed", []byte(`{"_meta":{"io.modelcontextprotocol/subscriptionId":`+string(ec.listenID)+`}}`)))
		case "ask":
			answer(ec.modernAsk(m.Params, info))
		default:
			args, _ := jsonrpc.Member(m.Params, "arguments")
			text := key + " " + string(args) + " with _meta " + string(meta)
			answer(`{"resultType":"complete","content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, text)) + `}],` + info + `}`)
		}
	default:
		fail(`{"code":-32601,"message":"Method not found"}`)
	}
}

// modernAsk is a modern child's stateless ask: what it answers depends
// only on the requestState and inputResponses of the call.
func (ec *eraChild) modernAsk(params []byte, info string) string {
	state, _ := jsonrpc.StringMember(params, "requestState")
	responses, _ := jsonrpc.Member(params, "inputResponses")
	switch {
	case state == "":
		return `{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"round-1"}`
	case state == "round-1":
		next := "round-2 " + string(responses)
		return `{"resultType":"input_required","inputRequests":{"color":{"method":"elicitation/create","params":{"message":"color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}}}}}},"requestState":` + string(jsonrpc.AppendString(nil, next)) + `}`
	case strings.HasPrefix(state, "round-2 "):
		text := ec.key + " was told " + strings.TrimPrefix(state, "round-2 ") + " then " + string(responses)
		return `{"resultType":"complete","content":[{"type":"text","text":` + string(jsonrpc.AppendString(nil, text)) + `}],` + info + `}`
	}
	return `{"resultType":"complete","content":[{"type":"text","text":"unknown requestState"}],"isError":true,` + info + `}`
}

// inputTokens are the requestStates of the aggregator's in a transcript,
// which are random: written $1, $2, ... (after their prefix) in the order
// the aggregator first sent them, in its lines and in the client's.
type inputTokens struct {
	byValue map[string]string
	byName  map[string]string
}

var (
	inputTokenRE = regexp.MustCompile(regexp.QuoteMeta(inputTokenPrefix) + `[0-9a-f]{32}`)
	inputNameRE  = regexp.MustCompile(regexp.QuoteMeta(inputTokenPrefix) + `\$[0-9]+`)
)

// hide writes the aggregator's line with its tokens' names.
func (tk *inputTokens) hide(line string) string {
	return inputTokenRE.ReplaceAllStringFunc(line, func(v string) string {
		if tk.byValue == nil {
			tk.byValue, tk.byName = map[string]string{}, map[string]string{}
		}
		name, ok := tk.byValue[v]
		if !ok {
			name = inputTokenPrefix + "$" + strconv.Itoa(len(tk.byValue)+1)
			tk.byValue[v], tk.byName[name] = name, v
		}
		return name
	})
}

// show writes the client's line with the tokens its names stand for (a
// name never sent stays as it is).
func (tk *inputTokens) show(line string) string {
	return inputNameRE.ReplaceAllStringFunc(line, func(name string) string {
		if v, ok := tk.byName[name]; ok {
			return v
		}
		return name
	})
}
