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

// WithMeta returns params with the members of meta added to its _meta
// where it lacks them (params nil or empty: an object of _meta alone).
// Members params has already are kept as they are.
func WithMeta(params, meta []byte) []byte {
	if len(ObjectBody(params)) == 0 {
		return append(append([]byte(`{"_meta":`), meta...), '}')
	}
	existing, ok := jsonrpc.Member(params, "_meta")
	if !ok || len(existing) == 0 || existing[0] != '{' {
		out, err := jsonrpc.ReplaceMember(params, "_meta", meta)
		if err != nil {
			return params
		}
		return out
	}
	ms, _ := jsonrpc.Members(meta)
	for _, m := range ms {
		if _, has := jsonrpc.Member(existing, m.Key); !has {
			if more, err := jsonrpc.ReplaceMember(existing, m.Key, m.Value); err == nil {
				existing = more
			}
		}
	}
	out, err := jsonrpc.ReplaceMember(params, "_meta", existing)
	if err != nil {
		return params
	}
	return out
}

// SubscriptionID is the subscription a modern server's notification says
// it belongs to (raw; nil when it names none).
func SubscriptionID(params []byte) []byte {
	meta, _ := jsonrpc.Member(params, "_meta")
	sub, _ := jsonrpc.Member(meta, MetaSubscriptionID)
	return sub
}
