package eras

import (
	"testing"
	"time"
)

// A modern-only server's refusal of initialize is known by the versions it
// names, whatever its code (the spec leaves the code to the server).
func TestRefusesLegacy(t *testing.T) {
	cases := map[string]bool{
		`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}`: true,
		`{"code":-32601,"message":"initialize is not supported: this server speaks 2026-07-28"}`:                                true,
		`{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"]}}`:                          false,
		`{"code":-32601,"message":"Method not found"}`:                                                                          false,
	}
	for errObj, want := range cases {
		if got := RefusesLegacy([]byte(errObj)); got != want {
			t.Errorf("RefusesLegacy(%s) = %t, want %t", errObj, got, want)
		}
	}
}

func TestVersionLists(t *testing.T) {
	cases := []struct {
		versions       string
		modern, legacy bool
	}{
		{`["2026-07-28"]`, true, false},
		{`["2025-06-18","2026-07-28"]`, true, true},
		{`["2024-11-05"]`, false, true},
		{`["2027-01-01"]`, false, false},
		{`[]`, false, false},
		{`"2026-07-28"`, false, false}, // not an array
		{``, false, false},
	}
	for _, c := range cases {
		if got := Lists([]byte(c.versions), ModernVersion); got != c.modern {
			t.Errorf("Lists(%s, modern) = %t", c.versions, got)
		}
		if got := ListsLegacy([]byte(c.versions)); got != c.legacy {
			t.Errorf("ListsLegacy(%s) = %t", c.versions, got)
		}
	}
	if got := string(UnsupportedVersionData("1999-01-01")); got != `{"supported":["2026-07-28"],"requested":"1999-01-01"}` {
		t.Errorf("UnsupportedVersionData = %s", got)
	}
	if !IsLegacy(LatestLegacy) || IsLegacy(ModernVersion) {
		t.Errorf("IsLegacy: %s is legacy, %s is not", LatestLegacy, ModernVersion)
	}
}

func TestHints(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	h := ReadHint([]byte(`{"ttlMs":2500,"cacheScope":"public"}`), now)
	if h.TTL != 2500*time.Millisecond || !h.Public || !h.At.Equal(now) {
		t.Errorf("ReadHint = %+v", h)
	}
	if h := ReadHint([]byte(`{"ttlMs":-1,"cacheScope":"shared"}`), now); h.TTL != 0 || h.Public {
		t.Errorf("ReadHint of a negative ttl and an unknown scope = %+v, want 0 and private", h)
	}
	later := now.Add(time.Second)
	merged := MergeHints([]Hint{{At: now}, {TTL: 5 * time.Second, Public: true, At: now}, {TTL: 3 * time.Second, Public: true, At: now}}, later)
	if merged.TTL != 0 || merged.Public {
		t.Errorf("MergeHints with a stale private one = %+v, want 0 and private", merged)
	}
	merged = MergeHints([]Hint{{TTL: 5 * time.Second, Public: true, At: now}, {TTL: 3 * time.Second, Public: true, At: now}}, later)
	if merged.TTL != 2*time.Second || !merged.Public {
		t.Errorf("MergeHints = %+v, want the smallest left (2s), public", merged)
	}
	if merged := MergeHints(nil, later); merged.TTL != 0 || merged.Public {
		t.Errorf("MergeHints of none = %+v, want stale and private", merged)
	}
	if got := string(AppendHint(nil, Hint{TTL: 1500 * time.Millisecond})); got != `,"ttlMs":1500,"cacheScope":"private"` {
		t.Errorf("AppendHint = %s", got)
	}
}
