package eras

import (
	"strconv"
	"time"

	"github.com/mcp-simple-aggregator/mcp-simple-aggregator/jsonrpc"
)

// Hint is how long a modern result may be cached and by whom (its ttlMs
// and cacheScope). The zero value is a legacy result's, which says
// nothing: stale at once (ttl 0) and private, the most conservative
// reading.
type Hint struct {
	TTL    time.Duration
	Public bool
	At     time.Time // when the result came
}

// ReadHint reads the hint of a modern result that came at now.
func ReadHint(result []byte, now time.Time) Hint {
	h := Hint{At: now}
	if raw, ok := jsonrpc.Member(result, "ttlMs"); ok {
		if ms, err := strconv.ParseFloat(string(raw), 64); err == nil && ms > 0 {
			h.TTL = time.Duration(ms * float64(time.Millisecond))
		}
	}
	scope, _ := jsonrpc.StringMember(result, "cacheScope")
	h.Public = scope == "public"
	return h
}

// MergeHints is the hint, at now, of a result merged from several: the
// smallest time left, and private when any of them is (or there are none).
func MergeHints(hs []Hint, now time.Time) Hint {
	merged := Hint{Public: len(hs) > 0, At: now}
	for i, h := range hs {
		left := max(h.TTL-now.Sub(h.At), 0)
		if i == 0 || left < merged.TTL {
			merged.TTL = left
		}
		merged.Public = merged.Public && h.Public
	}
	return merged
}

// AppendHint appends the hint's members, with a leading comma.
func AppendHint(b []byte, h Hint) []byte {
	b = strconv.AppendInt(append(b, `,"ttlMs":`...), h.TTL.Milliseconds(), 10)
	if h.Public {
		return append(b, `,"cacheScope":"public"`...)
	}
	return append(b, `,"cacheScope":"private"`...)
}
