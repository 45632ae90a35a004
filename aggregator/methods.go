package aggregator

import (
	"context"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// codeResourceNotFound is MCP's error for a resource URI nobody serves.
const codeResourceNotFound = -32002

// method says how the aggregator serves one client request. Exactly one of
// serve and route is set.
type method struct {
	// early: may come before initialize.
	early bool
	// await starts the servers the request needs and waits for them
	// (startup.go), before it is served; false when the client cancelled
	// or the aggregator is shutting down. nil: it needs none.
	await func(*Aggregator, context.Context, *call) bool
	// quick: never blocks once the servers it needs are up, so it is then
	// served on the client's reader goroutine, with no goroutine or
	// hand-off.
	quick bool
	// accept runs on the reader goroutine before the request is served, so
	// that the requests read after it see its effect (initialize).
	accept func(*Aggregator, *call) []byte
	// input: the server may ask the client for input while it serves the
	// request (childRequests' input), which a modern client answers
	// through input_required (input_modern.go).
	input bool

	// serve answers here: locally, or by asking several children and
	// merging their answers. nil means no answer is due (the client
	// cancelled, or the aggregator is shutting down).
	serve func(*Aggregator, context.Context, *call) []byte
	// route picks the one child that serves the request and the params it
	// gets (a target with a child); or it returns the error to answer.
	// Neither: the client cancelled, or the aggregator is shutting down.
	route func(*Aggregator, context.Context, *call) (target, []byte)

	// modifyResponse, the hook of forward in the manner of
	// httputil.ReverseProxy, may rewrite the child's answer: it returns
	// the line to send the client, or nil to send the answer as it is
	// (nil, the common case: the answer is spliced under the client's id).
	modifyResponse func(c *call, resp *jsonrpc.Message) []byte
	// taskCreated is modifyResponse for a request the client augmented
	// with a task ("task" in its params): only such a call's answer may
	// create one, and only its answer goes through the task tables.
	taskCreated func(c *call, resp *jsonrpc.Message) []byte
}

// clientMethods says, for every request a client may send, how it is
// served.
var clientMethods map[string]*method

func init() { // a var initialiser would make an initialisation cycle
	clientMethods = map[string]*method{
		// The session, answered here.
		"initialize": {early: true, accept: (*Aggregator).acceptInitialize, serve: (*Aggregator).finishInitialize},
		"ping":       {early: true, quick: true, serve: answerPing},
		// The modern era's session: none; discover answers as initialize.
		"server/discover":      {early: true, serve: (*Aggregator).serveDiscover},
		"subscriptions/listen": {await: (*Aggregator).awaitListen, serve: (*Aggregator).listen},

		// Lists of prefixed names, answered from the registry.
		"tools/list":   {await: (*Aggregator).awaitLists, quick: true, serve: serveRegistered(server.KindTools)},
		"prompts/list": {await: (*Aggregator).awaitLists, quick: true, serve: serveRegistered(server.KindPrompts)},

		// Routed by prefixed name; a task-augmented call's task gets an id
		// of the aggregator's.
		"tools/call":  {await: (*Aggregator).awaitNamed, quick: true, input: true, route: (*Aggregator).routeTool, taskCreated: taskCreated},
		"prompts/get": {await: (*Aggregator).awaitNamed, quick: true, input: true, route: (*Aggregator).routePrompt},
		// by prompt name or resource template
		"completion/complete": {await: (*Aggregator).awaitCompletion, route: (*Aggregator).routeCompletion},

		// Routed by URI: the child that listed it, else the one whose
		// template matches (this may refresh the lists, so not quick).
		"resources/read":        {await: (*Aggregator).awaitURI, input: true, route: (*Aggregator).routeByURI},
		"resources/subscribe":   {await: (*Aggregator).awaitURI, route: (*Aggregator).routeSubscribe},
		"resources/unsubscribe": {await: (*Aggregator).awaitURI, route: (*Aggregator).routeSubscribe},

		// Fanned out to every child that can serve it; answers merged.
		"resources/list":           {await: (*Aggregator).awaitLists, serve: (*Aggregator).listResources},
		"resources/templates/list": {await: (*Aggregator).awaitLists, serve: (*Aggregator).listResourceTemplates},
		"logging/setLevel":         {await: (*Aggregator).awaitLists, serve: (*Aggregator).setLevel},

		// Tasks: routed by the aggregator's task id to the child running
		// the task, which gets its own id; listed child by child.
		"tasks/get":    {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskState},
		"tasks/cancel": {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskState},
		"tasks/result": {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskResult},
		"tasks/list":   {await: (*Aggregator).awaitLists, serve: (*Aggregator).listTasks},
	}
}

// clientNotifications says what each notification of the client does;
// others are dropped (and logged when debugging).
var clientNotifications = map[string]func(*Aggregator, []byte){
	"notifications/initialized":        (*Aggregator).clientInitialized,
	"notifications/cancelled":          (*Aggregator).clientCancelled,
	"notifications/progress":           func(a *Aggregator, p []byte) { a.relay.progressFromClient(p) },
	"notifications/roots/list_changed": (*Aggregator).rootsChanged,
	"notifications/tasks/status":       func(a *Aggregator, p []byte) { a.relay.clientTaskStatus(p) },
}

// childMethod says what is done with one request a child may send the
// client.
type childMethod struct {
	// need is the client capability it needs ("" for none): without it
	// the child gets -32601.
	need string
	// input: it asks for input during a call of the client (a method
	// entry's input): a modern client, which takes no requests, answers
	// it through input_required (input_modern.go), and a modern server
	// may ask for it in an input_required of its own (input_legacy.go).
	input bool
}

// childRequests are the requests a child may send, each relayed to the
// client when the client declared the capability it needs; others get
// -32601. It is the one table of them, for the clients of both eras.
var childRequests = map[string]childMethod{
	"ping":                   {},
	"sampling/createMessage": {need: "sampling", input: true},
	"elicitation/create":     {need: "elicitation", input: true},
	"roots/list":             {need: "roots", input: true},
	// About the tasks the client runs for the child.
	"tasks/get":    {need: "tasks"},
	"tasks/result": {need: "tasks"},
	"tasks/cancel": {need: "tasks"},
	"tasks/list":   {need: "tasks"},
}

// inputNeed is the capability a request a child may ask for input with
// (childMethod.input) needs; ok is false for any other request.
func inputNeed(method string) (need string, ok bool) {
	m := childRequests[method]
	return m.need, m.input
}

// childNotifications says what a child's notification does; every other
// one (message and any newer) goes up to the client untouched. A
// list_changed of a list kind never comes here: the server refreshes
// that list itself and tells ListChanged (child.go).
var childNotifications = map[string]func(*child, []byte){
	"notifications/cancelled":    (*child).cancelled,
	"notifications/progress":     (*child).progressed,
	"notifications/tasks/status": (*child).taskStatus,
	// Only from their owner (owners.go).
	"notifications/resources/updated":    (*child).resourceUpdated,
	"notifications/elicitation/complete": (*child).elicitationComplete,
}

func answerPing(_ *Aggregator, _ context.Context, c *call) []byte {
	return jsonrpc.AppendResult(nil, c.id, []byte("{}"))
}
