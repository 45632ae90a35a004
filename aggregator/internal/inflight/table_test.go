package inflight

import (
	"slices"
	"sync"
	"testing"
	"time"
)

func TestTableTakesAnEntryOnce(t *testing.T) {
	t.Parallel()
	var tab Table[int]
	if !tab.Add("1", 10) || tab.Add("1", 11) {
		t.Fatal("Add: want the first entry in and the second, under the same id, refused")
	}
	if e, ok := tab.Get("1"); !ok || e != 10 || tab.Len() != 1 {
		t.Fatalf("Get = %d, %v; Len %d: want 10, true; 1 (Get does not take)", e, ok, tab.Len())
	}
	if tab.Remove("1", 11) {
		t.Error("Remove of another entry under the id removed it")
	}
	// An answer, a cancel and a peer's end race for the entry: one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for _, take := range []func() bool{
		func() bool { _, ok := tab.Take("1"); return ok },
		func() bool { return tab.Remove("1", 10) },
		func() bool { return len(tab.TakeAll()) == 1 },
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if take() {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 || tab.Len() != 0 {
		t.Errorf("%d of the three took the entry, %d left: want 1, 0", won, tab.Len())
	}
	if !tab.Add("1", 12) {
		t.Error("an id whose entry left cannot be used again")
	}
	tab.Add("2", 20)
	all := tab.All()
	slices.Sort(all)
	if !slices.Equal(all, []int{12, 20}) || tab.Len() != 2 {
		t.Errorf("All = %v, Len %d: want [12 20] and both kept", all, tab.Len())
	}
}

func TestTableWaitEmpty(t *testing.T) {
	t.Parallel()
	var tab Table[int]
	tab.WaitEmpty(time.Hour, nil) // empty: returns at once
	tab.Add("a", 1)
	tab.Add("b", 2)
	done := make(chan struct{})
	go func() {
		tab.WaitEmpty(time.Hour, nil)
		close(done)
	}()
	tab.Take("a")
	select {
	case <-done:
		t.Fatal("WaitEmpty returned with an entry left")
	default:
	}
	tab.Remove("b", 2)
	<-done // the last entry leaving ends the wait, not the hour

	tab.Add("c", 3)
	abort := make(chan struct{})
	close(abort)
	tab.WaitEmpty(time.Hour, abort)     // ended by abort
	tab.WaitEmpty(time.Nanosecond, nil) // ended by the grace
	if tab.Len() != 1 {
		t.Errorf("Len = %d after waits that ended otherwise: want 1", tab.Len())
	}
}
