package eras

import (
	"bytes"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// ModernResult turns a result made for the legacy era (with no _meta of
// its own) into the modern era's: resultType first, the caching hint and
// serverInfo in _meta at the end.
func ModernResult(result []byte, h Hint, serverInfo []byte) []byte {
	b := make([]byte, 0, len(result)+160)
	b = append(b, `{"resultType":"complete"`...)
	if body := ObjectBody(result); len(body) > 0 {
		b = append(append(b, ','), body...)
	}
	b = AppendHint(b, h)
	b = append(append(b, `,"_meta":{"`+MetaServerInfo+`":`...), serverInfo...)
	return append(b, "}}"...)
}

// WithResultType gives a legacy result the resultType a modern client
// needs, and the hint of a read (cacheable) when it lacks one. What is not
// an object, or has a resultType, is returned as it is.
func WithResultType(result []byte, cacheable bool) []byte {
	if len(result) == 0 || result[0] != '{' {
		return result
	}
	if _, ok := jsonrpc.Member(result, "resultType"); ok {
		return result
	}
	body := ObjectBody(result)
	b := make([]byte, 0, len(result)+64)
	b = append(b, `{"resultType":"complete"`...)
	if len(body) > 0 {
		b = append(append(b, ','), body...)
	}
	if _, ok := jsonrpc.Member(result, "ttlMs"); cacheable && !ok {
		b = AppendHint(b, Hint{})
	}
	return append(b, '}')
}

// LegacyResult turns a modern result into one for a legacy client: the
// members the legacy era lacks (resultType, the caching hint, the
// server's serverInfo in _meta) go; every other byte stays. A result
// without resultType is returned as it is.
func LegacyResult(result []byte) []byte {
	if _, ok := jsonrpc.Member(result, "resultType"); !ok {
		return result
	}
	out := RemoveMembers(result, func(key string) bool {
		return key == "resultType" || key == "ttlMs" || key == "cacheScope"
	})
	meta, ok := jsonrpc.Member(out, "_meta")
	if !ok || len(meta) == 0 || meta[0] != '{' {
		return out
	}
	meta = RemoveMembers(meta, func(key string) bool { return key == MetaServerInfo })
	if len(ObjectBody(meta)) == 0 {
		return RemoveMembers(out, func(key string) bool { return key == "_meta" })
	}
	if replaced, err := jsonrpc.ReplaceMember(out, "_meta", meta); err == nil {
		return replaced
	}
	return out
}

// IsInputRequired reports whether a modern result asks for input.
func IsInputRequired(result []byte) bool {
	t, _ := jsonrpc.StringMember(result, "resultType")
	return t == "input_required"
}

// ModernError turns a legacy error into the modern era's: "resource not
// found" (-32002) became -32602. Any other error is returned as it is.
func ModernError(errObj []byte) []byte {
	if code, _ := jsonrpc.Member(errObj, "code"); string(code) != "-32002" {
		return errObj
	}
	if e, err := jsonrpc.ReplaceMember(errObj, "code", []byte("-32602")); err == nil {
		return e
	}
	return errObj
}

// ObjectBody is what lies between an object's braces, spaces trimmed.
func ObjectBody(obj []byte) []byte {
	body := bytes.TrimSpace(obj)
	if len(body) < 2 {
		return nil
	}
	return bytes.TrimSpace(body[1 : len(body)-1])
}

// RemoveMembers returns a copy of obj without the members whose key drop
// reports; every other byte is kept.
func RemoveMembers(obj []byte, drop func(key string) bool) []byte {
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
