package server

import "time"

// A server's reader is paced two ways, in Server.pace: by room in its lane
// into the client's queue (Events.Pace), and by the rate of its messages.
// Both are flow control: the server's output waits in its
// own pipe, and nothing is dropped or reordered.

// notifyRate is how many messages a second (notifications, and lines that
// are not JSON-RPC; a request to the client counts as perRequest of them)
// one server may send on average beyond what its answers earn, with bursts
// of up to NotifyBurst: a server that sends more is read more slowly, so
// that a flood of logs, progress or sampling requests from one server
// (hundreds of thousands a second) cannot take the CPU that the other
// servers' answers need. Each answer to a request of the aggregator's
// earns perAnswer more, so that a call's own progress and requests are
// never held back, however fast the calls come.
const (
	notifyRate  = 10_000
	NotifyBurst = 10_000
	perRequest  = 4
	perAnswer   = 16
)

// notifyBucket is a token bucket of one server's messages. Only the
// server's reader goroutine uses it.
type notifyBucket struct {
	tokens float64   // messages it may send now
	at     time.Time // when tokens was last brought up to date; zero: never
}

// take counts one message of cost tokens at now and returns how long the
// reader is to wait before it reads on (0: at once).
func (b *notifyBucket) take(now time.Time, cost float64) time.Duration {
	b.refill(now)
	b.tokens -= cost
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / notifyRate * float64(time.Second))
}

// answered earns the tokens of one answer (up to a burst).
func (b *notifyBucket) answered(now time.Time) {
	b.refill(now)
	b.tokens = min(b.tokens+perAnswer, NotifyBurst)
}

func (b *notifyBucket) refill(now time.Time) {
	if b.at.IsZero() {
		b.tokens = NotifyBurst
	} else {
		b.tokens = min(b.tokens+now.Sub(b.at).Seconds()*notifyRate, NotifyBurst)
	}
	b.at = now
}

// Pacing is the clock a server's reader reads its rate by, and how it
// waits; the zero value is time.Now and a timer that shutdown cuts short.
type Pacing struct {
	Now  func() time.Time
	Wait func(d time.Duration, stop <-chan struct{})
}

func (p Pacing) clock() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p Pacing) sleep(d time.Duration, stop <-chan struct{}) {
	if p.Wait != nil {
		p.Wait(d, stop)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	}
}

// pace holds the server's reader while what it sent the client waits to
// be written (Events.Pace: the client's pace is the server's), and while
// it sends messages faster than notifyRate: an answer to one of the
// aggregator's requests earns, every other line (a request, a
// notification, a line that is not JSON-RPC or is blank, an answer to
// nothing) costs.
func (s *Server) pace(answered bool) {
	done := s.set.Life.Context().Done()
	s.events.Pace(done)
	cost := max(s.lineCost, 1)
	s.lineCost = 0
	p := s.set.Pacing
	if answered {
		s.notifies.answered(p.clock())
		return
	}
	if d := s.notifies.take(p.clock(), cost); d > 0 {
		p.sleep(d, done)
	}
}
