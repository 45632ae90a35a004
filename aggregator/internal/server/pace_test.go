package server

import (
	"testing"
	"time"
)

// A server may send NotifyBurst notifications at once; past them, each
// waits for its share of notifyRate a second, and idle time earns the
// burst back, never more.
func TestNotifyBucket(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for i := range NotifyBurst {
		if d := b.take(t0, 1); d != 0 {
			t.Fatalf("notification %d of a burst waits %v", i+1, d)
		}
	}
	perNote := time.Second / notifyRate
	if d := b.take(t0, 1); d != perNote {
		t.Errorf("the one past the burst waits %v, want %v", d, perNote)
	}
	if d := b.take(t0, 1); d != 2*perNote {
		t.Errorf("the next waits %v, want %v", d, 2*perNote)
	}
	// An hour idle earns one burst back, not more.
	later := t0.Add(time.Hour)
	for i := range NotifyBurst {
		if d := b.take(later, 1); d != 0 {
			t.Fatalf("after an idle hour, notification %d waits %v", i+1, d)
		}
	}
	if d := b.take(later, 1); d == 0 {
		t.Error("after an idle hour, more than a burst went at once")
	}
}

// Each answer earns perAnswer messages: a call's own progress, however
// fast the calls come, is never held back.
func TestNotifyBucketAnswersEarn(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for range NotifyBurst {
		b.take(t0, 1)
	}
	for call := range 1000 { // no time passes: only answers earn
		b.answered(t0)
		for n := range perAnswer {
			if d := b.take(t0, 1); d != 0 {
				t.Fatalf("call %d's message %d waits %v", call, n, d)
			}
		}
	}
	if d := b.take(t0, 1); d == 0 {
		t.Error("a message beyond what the answers earned went at once")
	}
}

// A request to the client costs perRequest messages: a flood of sampling
// requests is held back sooner than one of notifications.
func TestNotifyBucketRequestsCostMore(t *testing.T) {
	t.Parallel()
	var b notifyBucket
	t0 := time.Unix(1000, 0)
	for i := range NotifyBurst / perRequest {
		if d := b.take(t0, perRequest); d != 0 {
			t.Fatalf("request %d of a burst waits %v", i+1, d)
		}
	}
	if d, want := b.take(t0, perRequest), perRequest*time.Second/notifyRate; d != want {
		t.Errorf("the request past the burst waits %v, want %v", d, want)
	}
}
