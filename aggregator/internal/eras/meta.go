package eras

import "github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"

// RequestMeta is the _meta a modern request carries for a client that
// declared caps (raw) and info (its clientInfo, raw), at logLevel ("" for
// none): the modern version first.
func RequestMeta(caps, info []byte, logLevel string) []byte {
	b := []byte(`{"` + MetaProtocolVersion + `":"` + ModernVersion + `","` + MetaClientCapabilities + `":`)
	b = append(b, caps...)
	b = append(append(b, `,"`+MetaClientInfo+`":`...), info...)
	if logLevel != "" {
		b = jsonrpc.AppendString(append(b, `,"`+MetaLogLevel+`":`...), logLevel)
	}
	return append(b, '}')
}

// EditMeta is the one way _meta is edited: it returns msg (params or a
// result) with the _meta edit makes of the one msg has. edit gets that
// _meta, raw (nil when msg has none, or one that is not an object), and
// returns the new one, or nil to leave msg as it is. An empty msg (nil,
// {}) becomes an object of _meta alone; in any other, every byte but the
// _meta's value is kept, and the _meta goes at the end when it is new. A
// msg that is no object is left as it is.
func EditMeta(msg []byte, edit func(meta []byte) []byte) []byte {
	meta, ok := jsonrpc.Member(msg, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		meta = nil
	}
	next := edit(meta)
	if next == nil {
		return msg
	}
	if len(ObjectBody(msg)) == 0 {
		return append(append([]byte(`{"_meta":`), next...), '}')
	}
	out, err := jsonrpc.ReplaceMember(msg, "_meta", next)
	if err != nil {
		return msg
	}
	return out
}

// RelatedTask is the _meta member that ties a message to a task.
const RelatedTask = "io.modelcontextprotocol/related-task"

// TiedToTask reports whether msg (params or a result) carries a
// related-task tie in its _meta: only such a message needs a task's id
// told in other words.
func TiedToTask(msg []byte) bool {
	meta, ok := jsonrpc.Member(msg, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return false
	}
	_, ok = jsonrpc.Member(meta, RelatedTask)
	return ok
}

// WithMeta returns params with the members of meta added to its _meta
// where it lacks them (params nil or empty: an object of _meta alone).
// Members params has already are kept as they are.
func WithMeta(params, meta []byte) []byte {
	return EditMeta(params, func(existing []byte) []byte {
		if existing == nil {
			return meta
		}
		ms, _ := jsonrpc.Members(meta)
		for _, m := range ms {
			if _, has := jsonrpc.Member(existing, m.Key); !has {
				if more, err := jsonrpc.ReplaceMember(existing, m.Key, m.Value); err == nil {
					existing = more
				}
			}
		}
		return existing
	})
}

// SubscriptionID is the subscription a modern server's notification says
// it belongs to (raw; nil when it names none).
func SubscriptionID(params []byte) []byte {
	meta, _ := jsonrpc.Member(params, "_meta")
	sub, _ := jsonrpc.Member(meta, MetaSubscriptionID)
	return sub
}
