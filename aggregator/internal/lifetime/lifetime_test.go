package lifetime

import "testing"

func TestEndStopsNewGoroutinesAndWaitsForTheRest(t *testing.T) {
	t.Parallel()
	l := New()
	release := make(chan struct{})
	finished := false
	if !l.Go(func() { <-release; finished = true }) {
		t.Fatal("Go refused before the shutdown")
	}
	l.End()
	if !l.Stopping() || l.Context().Err() == nil {
		t.Errorf("after End: Stopping %v, Context's error %v; want true and cancelled", l.Stopping(), l.Context().Err())
	}
	if l.Go(func() { t.Error("a goroutine started after End") }) {
		t.Error("Go accepted after End")
	}
	close(release)
	l.Wait()
	if !finished {
		t.Error("Wait returned before the goroutine started through Go ended")
	}
}

func TestHurryClosesHurriedOnce(t *testing.T) {
	t.Parallel()
	l := New()
	select {
	case <-l.Hurried():
		t.Fatal("Hurried closed before Hurry")
	default:
	}
	l.Hurry()
	l.Hurry() // twice: no panic
	<-l.Hurried()
}
