package aggregator

import (
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/aggregator/internal/eras"
	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file holds what results and requests of the modern era carry that
// the legacy era's lack: resultType, the caching hints, serverInfo in
// _meta, and the _meta of each request to a modern child.

// childHints are a child's hints for its discover result and its lists,
// as it last gave them; guarded by the child's mu.
type childHints struct {
	discover, tools, prompts, resources, templates eras.Hint
}

// listAnswer answers the call with a list the aggregator made: as it is
// for a legacy client; for a modern one with its resultType, the caching
// hint that hint gives and serverInfo (eras.ModernResult).
func (c *call) listAnswer(result []byte, hint func() eras.Hint) []byte {
	if c.modern {
		result = eras.ModernResult(result, hint(), c.a.serverInfo())
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// result answers the call with a result the aggregator made, with the
// resultType a modern client needs.
func (c *call) result(result []byte) []byte {
	if c.modern {
		result = eras.WithResultType(result, false)
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// childMeta is the _meta of the modern era for a request to a modern
// child on the client's behalf: the modern version, the client's
// capabilities and clientInfo, and the level a legacy client set with
// logging/setLevel.
func (a *Aggregator) childMeta() []byte {
	s := a.client.state()
	info := s.info
	if info == nil {
		info = a.serverInfo()
	}
	return eras.RequestMeta(s.caps.raw(), info, s.logLevel)
}
