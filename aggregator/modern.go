package aggregator

import (
	"bytes"
	"strconv"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// This file holds what results and requests of the modern era carry that
// the legacy era's lack: resultType, the caching hints, serverInfo in
// _meta, and the _meta of each request to a modern child.

// cacheHint is how long a result may be cached and by whom (ttlMs and
// cacheScope). The zero value is a legacy result's, which says nothing:
// stale at once (ttl 0) and private, the most conservative reading.
type cacheHint struct {
	ttl    time.Duration
	public bool
	at     time.Time // when the result came
}

// childHints are a child's hints for its discover result and its lists,
// as it last gave them; guarded by the child's mu.
type childHints struct {
	discover, tools, prompts, resources, templates cacheHint
}

// readCacheHint reads the hint of a modern result.
func readCacheHint(result []byte) cacheHint {
	h := cacheHint{at: time.Now()}
	if raw, ok := jsonrpc.Member(result, "ttlMs"); ok {
		if ms, err := strconv.ParseFloat(string(raw), 64); err == nil && ms > 0 {
			h.ttl = time.Duration(ms * float64(time.Millisecond))
		}
	}
	scope, _ := jsonrpc.StringMember(result, "cacheScope")
	h.public = scope == "public"
	return h
}

// mergeHints is the hint of a result merged from several: the smallest
// time left, and private when any of them is.
func mergeHints(hs []cacheHint, now time.Time) cacheHint {
	merged := cacheHint{public: len(hs) > 0, at: now}
	for i, h := range hs {
		left := max(h.ttl-now.Sub(h.at), 0)
		if i == 0 || left < merged.ttl {
			merged.ttl = left
		}
		merged.public = merged.public && h.public
	}
	return merged
}

// appendCacheHint appends the hint's members, with a leading comma.
func appendCacheHint(b []byte, h cacheHint) []byte {
	b = strconv.AppendInt(append(b, `,"ttlMs":`...), h.ttl.Milliseconds(), 10)
	if h.public {
		return append(b, `,"cacheScope":"public"`...)
	}
	return append(b, `,"cacheScope":"private"`...)
}

// modernResult turns a result the aggregator made for the legacy era into
// the modern era's: resultType first, the caching hint and serverInfo in
// _meta at the end (result has no _meta of its own).
func (a *Aggregator) modernResult(result []byte, h cacheHint) []byte {
	b := make([]byte, 0, len(result)+160)
	b = append(b, `{"resultType":"complete"`...)
	if body := objectBody(result); len(body) > 0 {
		b = append(append(b, ','), body...)
	}
	b = appendCacheHint(b, h)
	b = append(append(b, `,"_meta":{"`+metaServerInfo+`":`...), a.serverInfo()...)
	return append(b, "}}"...)
}

// listAnswer answers the call with a list the aggregator made: as it is
// for a legacy client; for a modern one with its resultType, the caching
// hint that hint gives and serverInfo (modernResult).
func (c *call) listAnswer(result []byte, hint func() cacheHint) []byte {
	if c.modern {
		result = c.a.modernResult(result, hint())
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// result answers the call with a result the aggregator made, with the
// resultType a modern client needs.
func (c *call) result(result []byte) []byte {
	if c.modern {
		result = withResultType(result, false)
	}
	return jsonrpc.AppendResult(nil, c.id, result)
}

// withResultType gives a legacy child's result the resultType a modern
// client needs, and the hint of a read (cacheable) when it lacks one.
func withResultType(result []byte, cacheable bool) []byte {
	if len(result) == 0 || result[0] != '{' {
		return result
	}
	if _, ok := jsonrpc.Member(result, "resultType"); ok {
		return result
	}
	body := objectBody(result)
	b := make([]byte, 0, len(result)+64)
	b = append(b, `{"resultType":"complete"`...)
	if len(body) > 0 {
		b = append(append(b, ','), body...)
	}
	if _, ok := jsonrpc.Member(result, "ttlMs"); cacheable && !ok {
		b = appendCacheHint(b, cacheHint{})
	}
	return append(b, '}')
}

// objectBody is what lies between an object's braces, spaces trimmed.
func objectBody(obj []byte) []byte {
	body := bytes.TrimSpace(obj)
	if len(body) < 2 {
		return nil
	}
	return bytes.TrimSpace(body[1 : len(body)-1])
}

// childMeta is the _meta of the modern era for a request to a modern
// child on the client's behalf: the modern version, the client's
// capabilities and clientInfo, and the level a legacy client set with
// logging/setLevel.
func (a *Aggregator) childMeta() []byte {
	s := a.client.state()
	b := []byte(`{"` + metaProtocolVersion + `":"` + ModernVersion + `","` + metaClientCapabilities + `":`)
	b = append(b, s.caps.raw()...)
	info := s.info
	if info == nil {
		info = a.serverInfo()
	}
	b = append(append(b, `,"`+metaClientInfo+`":`...), info...)
	if s.logLevel != "" {
		b = jsonrpc.AppendString(append(b, `,"`+metaLogLevel+`":`...), s.logLevel)
	}
	return append(b, '}')
}

// withMeta returns params with the members of meta added to its _meta
// where it lacks them (params nil: an object of _meta alone).
func withMeta(params, meta []byte) []byte {
	if len(objectBody(params)) == 0 {
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

// legacyResult turns a modern child's result into one for a legacy client:
// the members the legacy era lacks (resultType, the caching hint, the
// child's serverInfo in _meta) go; every other byte stays. A result without
// resultType is returned as it is.
func legacyResult(result []byte) []byte {
	if _, ok := jsonrpc.Member(result, "resultType"); !ok {
		return result
	}
	out := removeMembers(result, func(key string) bool {
		return key == "resultType" || key == "ttlMs" || key == "cacheScope"
	})
	meta, ok := jsonrpc.Member(out, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return out
	}
	meta = removeMembers(meta, func(key string) bool { return key == metaServerInfo })
	if len(objectBody(meta)) == 0 {
		return removeMembers(out, func(key string) bool { return key == "_meta" })
	}
	if replaced, err := jsonrpc.ReplaceMember(out, "_meta", meta); err == nil {
		return replaced
	}
	return out
}

// removeMembers returns a copy of obj without the members whose key drop
// reports; every other byte is kept.
func removeMembers(obj []byte, drop func(key string) bool) []byte {
	open := bytes.IndexByte(obj, '{') + 1
	out := append(make([]byte, 0, len(obj)), obj[:open]...)
	from, kept := open, 0
	jsonrpc.EachMember(obj, func(key []byte, _, end int) bool {
		// From the end of the previous value: its comma (none for the
		// first), spaces, the key and the value.
		member := obj[from:end]
		from = end
		if drop(string(key)) {
			return true
		}
		if q := bytes.IndexByte(member, '"'); q > 0 { // the separating comma goes
			if c := bytes.IndexByte(member[:q], ','); c >= 0 {
				member = member[c+1:]
			}
		}
		if kept > 0 {
			out = append(out, ',')
		}
		kept++
		out = append(out, member...)
		return true
	})
	return append(out, obj[from:]...)
}
