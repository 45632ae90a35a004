package server

import (
	"context"
	"slices"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// The three lists a server may offer, tools, prompts and resources, are
// handled alike: fetched when the server starts and again on its
// list_changed, announced to the client when they change, asked for by a
// modern client's subscriptions/listen. Kinds says what differs between
// them; what is done for each alike walks the table.

// Kind is one of the lists a server may offer.
type Kind struct {
	Name    string // "tools": its capability
	Changed string // "notifications/tools/list_changed"
	Listen  string // "toolsListChanged": its flag in subscriptions/listen's notifications
	// Always: asked of every server, and announced for each, declared or
	// not (a server may list tools it did not declare); a server that
	// declared it and cannot list it fails. Else only of servers that
	// declared it, best effort.
	Always   bool
	Declared func(capabilities.Server) bool
	// Lists are the lists of the kind a server is asked for, in order
	// (the resources' templates go with them).
	Lists []List
}

// List is one list a server is asked for.
type List struct {
	Method  string                 // "tools/list"
	Hint    func(*Hints) eras.Hint // its caching hint, as the server last gave it
	refresh func(*Server, context.Context) error
}

// The indexes of Kinds.
const (
	KindTools = iota
	KindPrompts
	KindResources
)

// Kinds are the lists a server may offer, in the order they are fetched
// and announced.
var Kinds = [...]Kind{
	KindTools: {
		Name: "tools", Changed: "notifications/tools/list_changed", Listen: "toolsListChanged", Always: true,
		Declared: func(c capabilities.Server) bool { return c.Tools },
		Lists:    []List{{"tools/list", func(h *Hints) eras.Hint { return h.Tools }, (*Server).refreshTools}},
	},
	KindPrompts: {
		Name: "prompts", Changed: "notifications/prompts/list_changed", Listen: "promptsListChanged",
		Declared: func(c capabilities.Server) bool { return c.Prompts },
		Lists:    []List{{"prompts/list", func(h *Hints) eras.Hint { return h.Prompts }, (*Server).refreshPrompts}},
	},
	KindResources: {
		Name: "resources", Changed: "notifications/resources/list_changed", Listen: "resourcesListChanged",
		Declared: func(c capabilities.Server) bool { return c.Resources },
		Lists: []List{
			{"resources/list", func(h *Hints) eras.Hint { return h.Resources }, (*Server).refreshResources},
			{"resources/templates/list", func(h *Hints) eras.Hint { return h.Templates }, (*Server).refreshTemplates},
		},
	},
}

// Offered reports whether a server that declared caps is asked for the
// list, and its changes announced.
func (k *Kind) Offered(caps capabilities.Server) bool { return k.Always || k.Declared(caps) }

// OfferedBy reports whether any of the servers that declared caps offers
// the list (tools: always).
func (k *Kind) OfferedBy(caps []capabilities.Server) bool {
	return k.Always || slices.ContainsFunc(caps, k.Declared)
}

// refresh fetches every list of the kind anew from the server, stopping
// at the first that fails.
func (k *Kind) refresh(s *Server, ctx context.Context) error {
	for _, l := range k.Lists {
		if err := l.refresh(s, ctx); err != nil {
			return err
		}
	}
	return nil
}

// kindChanged is the kind whose list_changed method is, or nil.
func kindChanged(method string) *Kind {
	for i := range Kinds {
		if Kinds[i].Changed == method {
			return &Kinds[i]
		}
	}
	return nil
}

// Refresh fetches the list l anew from the server (a resources/list of
// the client's is answered with every server's current list).
func (s *Server) Refresh(ctx context.Context, l *List) error {
	if err := l.refresh(s, ctx); err != nil {
		return err
	}
	s.remember()
	return nil
}

// SetLevel sets a legacy server that has logging to level, unless it is
// set to it already.
func (s *Server) SetLevel(level string) {
	s.mu.Lock()
	defer s.mu.Unlock() // Go under the lock: levels go out in the order they are set; it never blocks
	if s.caps.Logging && s.logLevel != level {
		s.logLevel = level
		params := jsonrpc.AppendString([]byte(`{"level":`), level)
		s.conn.Go("logging/setLevel", append(params, '}'), func(*jsonrpc.Message, error) {})
	}
}
