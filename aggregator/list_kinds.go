package aggregator

import (
	"context"
	"slices"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
)

// The three lists a server may offer, tools, prompts and resources, are
// handled alike: fetched when the server starts and again on its
// list_changed, announced to the client when they change, asked for by a
// modern client's subscriptions/listen. listKinds says what differs
// between them; what is done for each alike walks the table.

// listKind is one of the lists a server may offer.
type listKind struct {
	name    string // "tools": its capability
	changed string // "notifications/tools/list_changed"
	listen  string // "toolsListChanged": its flag in subscriptions/listen's notifications
	// always: asked of every server, and announced for each, declared or
	// not (a server may list tools it did not declare); a server that
	// declared it and cannot list it fails. Else only of servers that
	// declared it, best effort.
	always   bool
	declared func(capabilities.Server) bool
	// fetch are the lists of the kind a child is asked for, in order (the
	// resources' templates go with them).
	fetch []childList
	// registered is the kind's list result in the registry, as the client
	// gets it; nil: the kind is not in the registry (resources are
	// fetched anew for each list).
	registered func(*registry) []byte
}

// childList is one list a child is asked for.
type childList struct {
	method  string                              // "tools/list"
	refresh func(*child, context.Context) error // fetches it anew from the child and stores it
	hint    func(*childHints) eras.Hint         // its caching hint, as the child last gave it
}

// The indexes of listKinds.
const (
	kindTools = iota
	kindPrompts
	kindResources
)

// listKinds are the lists a server may offer, in the order they are
// fetched and announced.
var listKinds = [...]listKind{
	kindTools: {
		name: "tools", changed: "notifications/tools/list_changed", listen: "toolsListChanged", always: true,
		declared:   func(c capabilities.Server) bool { return c.Tools },
		fetch:      []childList{{"tools/list", (*child).refreshTools, func(h *childHints) eras.Hint { return h.tools }}},
		registered: func(r *registry) []byte { return r.toolsResult },
	},
	kindPrompts: {
		name: "prompts", changed: "notifications/prompts/list_changed", listen: "promptsListChanged",
		declared:   func(c capabilities.Server) bool { return c.Prompts },
		fetch:      []childList{{"prompts/list", (*child).refreshPrompts, func(h *childHints) eras.Hint { return h.prompts }}},
		registered: func(r *registry) []byte { return r.promptsResult },
	},
	kindResources: {
		name: "resources", changed: "notifications/resources/list_changed", listen: "resourcesListChanged",
		declared: func(c capabilities.Server) bool { return c.Resources },
		fetch: []childList{
			{"resources/list", (*child).refreshResources, func(h *childHints) eras.Hint { return h.resources }},
			{"resources/templates/list", (*child).refreshTemplates, func(h *childHints) eras.Hint { return h.templates }},
		},
	},
}

// offered reports whether a server that declared caps is asked for the
// list, and its changes announced.
func (k *listKind) offered(caps capabilities.Server) bool { return k.always || k.declared(caps) }

// offeredBy reports whether any of the servers that declared caps offers
// the list (tools: always).
func (k *listKind) offeredBy(caps []capabilities.Server) bool {
	return k.always || slices.ContainsFunc(caps, k.declared)
}

// refresh fetches every list of the kind anew from the child, stopping at
// the first that fails.
func (k *listKind) refresh(c *child, ctx context.Context) error {
	for _, l := range k.fetch {
		if err := l.refresh(c, ctx); err != nil {
			return err
		}
	}
	return nil
}

// announceLists tells, through tell, that each list a server that
// declared caps offers changed (it came up, or went).
func announceLists(caps capabilities.Server, tell func(method string)) {
	for i := range listKinds {
		if k := &listKinds[i]; k.offered(caps) {
			tell(k.changed)
		}
	}
}

// serveRegistered is the serve of a kind's list in the registry (tools/list,
// prompts/list): the registry's answer, in one page, with the children's
// caching hints merged for a modern client.
func serveRegistered(kind int) func(*Aggregator, context.Context, *call) []byte {
	k := &listKinds[kind]
	return func(a *Aggregator, _ context.Context, c *call) []byte {
		if bad := noCursor(c); bad != nil {
			return bad
		}
		a.listing()
		return c.listAnswer(k.registered(a.reg.Load()), func() eras.Hint {
			serves := func(ch *child) bool { return ch.running() && k.offered(ch.capabilities()) }
			return a.listHint(serves, k.fetch[0].hint)
		})
	}
}
