package aggregator

import (
	"context"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file is the table of what a client may send: for every request, how
// it is served (here, fanned out, routed to one server) and what it waits
// for; for every notification, what it does.

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
		"subscriptions/listen": {await: (*startup).awaitListen, serve: (*Aggregator).listen},

		// Lists of prefixed names, answered from the registry.
		"tools/list":   {await: (*startup).awaitLists, quick: true, serve: serveRegistered(server.KindTools)},
		"prompts/list": {await: (*startup).awaitLists, quick: true, serve: serveRegistered(server.KindPrompts)},

		// Routed by prefixed name; a task-augmented call's task gets an id
		// of the aggregator's.
		"tools/call":  {await: (*startup).awaitNamed, quick: true, input: true, route: (*Aggregator).routeTool, taskCreated: taskCreated},
		"prompts/get": {await: (*startup).awaitNamed, quick: true, input: true, route: (*Aggregator).routePrompt},
		// by prompt name or resource template
		"completion/complete": {await: (*startup).awaitCompletion, route: (*Aggregator).routeCompletion},

		// Routed by URI: the child that listed it, else the one whose
		// template matches (this may refresh the lists, so not quick).
		"resources/read":        {await: (*startup).awaitURI, input: true, route: (*Aggregator).routeByURI},
		"resources/subscribe":   {await: (*startup).awaitURI, route: (*Aggregator).routeSubscribe},
		"resources/unsubscribe": {await: (*startup).awaitURI, route: (*Aggregator).routeSubscribe},

		// Fanned out to every child that can serve it; answers merged.
		"resources/list":           {await: (*startup).awaitLists, serve: (*Aggregator).listResources},
		"resources/templates/list": {await: (*startup).awaitLists, serve: (*Aggregator).listResourceTemplates},
		"logging/setLevel":         {await: (*startup).awaitLists, serve: (*Aggregator).setLevel},

		// Tasks: routed by the aggregator's task id to the child running
		// the task, which gets its own id; listed child by child.
		"tasks/get":    {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskState},
		"tasks/cancel": {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskState},
		"tasks/result": {quick: true, route: (*Aggregator).routeTask, modifyResponse: taskResult},
		"tasks/list":   {await: (*startup).awaitLists, serve: (*Aggregator).listTasks},
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

func answerPing(_ *Aggregator, _ context.Context, c *call) []byte {
	return jsonrpc.AppendResult(nil, c.id, []byte("{}"))
}
