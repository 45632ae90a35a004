package aggregator

// This file is the table of what servers send: the requests a server may
// make of the client, with the capability each needs, and the notifications
// a server sends that the session acts on (route_server.go dispatches by
// them).

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

// childNotifications says what a child's notification does; every other
// one (message and any newer) goes up to the client untouched. A
// list_changed of a list kind never comes here: the server refreshes
// that list itself and tells ListChanged (child_events.go).
var childNotifications = map[string]func(*child, []byte){
	"notifications/cancelled":    (*child).cancelled,
	"notifications/progress":     (*child).progressed,
	"notifications/tasks/status": (*child).taskStatus,
	// Only from their owner (owners.go).
	"notifications/resources/updated":    (*child).resourceUpdated,
	"notifications/elicitation/complete": (*child).elicitationComplete,
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

// inputNeed is the capability a request a child may ask for input with
// (childMethod.input) needs; ok is false for any other request.
func inputNeed(method string) (need string, ok bool) {
	m := childRequests[method]
	return m.need, m.input
}
