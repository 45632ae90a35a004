package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/capabilities"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/server"
)

// The three lists a server may offer are server.Kinds; the session adds
// what a kind is in its registry.

// listKind is one of the lists a server may offer (server.Kind), and its
// list result in the registry, as the client gets it; registered is nil
// for a kind that is not in the registry (resources are fetched anew for
// each list).
type listKind struct {
	*server.Kind
	registered func(*registry) []byte
}

// listKinds are server.Kinds, in their order, as the session has them.
var listKinds = [...]listKind{
	server.KindTools:     {&server.Kinds[server.KindTools], func(r *registry) []byte { return r.toolsResult }},
	server.KindPrompts:   {&server.Kinds[server.KindPrompts], func(r *registry) []byte { return r.promptsResult }},
	server.KindResources: {&server.Kinds[server.KindResources], nil},
}

// announceLists tells, through tell, that each list a server that
// declared caps offers changed (it came up, or went).
func announceLists(caps capabilities.Server, tell func(method string)) {
	for i := range listKinds {
		if k := &listKinds[i]; k.Offered(caps) {
			tell(k.Changed)
		}
	}
}
