package inflight

import (
	"errors"
	"testing"
)

func TestRequestCancelRacesItsSending(t *testing.T) {
	t.Parallel()
	cause := errors.New("cancelled")

	var early Request // the cancel comes while the request is being sent
	if _, id := early.Cancel(cause); id != nil || !early.IsCancelled() {
		t.Fatalf("Cancel before the sending: id %q, cancelled %v; want none, true", id, early.IsCancelled())
	}
	if got := early.Sent(nil, []byte("7")); got != cause {
		t.Errorf("Sent after the cancel = %v, want the cancel: the sender takes the request back", got)
	}

	var late Request // the cancel comes once it was sent
	if got := late.Sent(nil, []byte("8")); got != nil || late.IsCancelled() {
		t.Fatalf("Sent = %v, cancelled %v: want nil, false", got, late.IsCancelled())
	}
	if _, id := late.ID(); string(id) != "8" {
		t.Errorf("ID = %q, want 8", id)
	}
	if _, id := late.Cancel(cause); string(id) != "8" {
		t.Errorf("Cancel after the sending = %q, want 8: the canceller tells the peer", id)
	}
}
