package aggregator

import (
	"testing"
	"time"
)

// A task's ttl, in milliseconds, gives when it expires; one that is no
// number of 0 or more gives none, and a task without one never expires.
func TestTaskExpiry(t *testing.T) {
	before := time.Now()
	for ttl, want := range map[string]time.Duration{"0": 0, "1500": 1500 * time.Millisecond, "2.5": 2500 * time.Microsecond} {
		e := taskEntry{expires: ttlExpiry([]byte(ttl))}
		if e.expires.Before(before.Add(want)) || e.expires.After(time.Now().Add(want)) {
			t.Errorf("ttl %s: expires %v after the start, want %v", ttl, e.expires.Sub(before), want)
		}
		if e.expired(e.expires) || !e.expired(e.expires.Add(time.Nanosecond)) {
			t.Errorf("ttl %s: expired at its expiry or not just after it", ttl)
		}
	}
	for _, ttl := range []string{"", "null", "-1", `"60000"`} {
		if e := (taskEntry{expires: ttlExpiry([]byte(ttl))}); !e.expires.IsZero() || e.expired(time.Now().Add(time.Hour)) {
			t.Errorf("ttl %q: expires %v, want never", ttl, e.expires)
		}
	}
}
