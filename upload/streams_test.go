package upload

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestPartsStayInTheBudget runs 40 parts of one transfer with 8 helpers
// asked for, on a budget of 3 streams of which the transfer holds one and
// another transfer holds one: at most 3 run at once (the transfer's own
// stream, and 2 helpers once the other transfer ends), each part once.
func TestPartsStayInTheBudget(t *testing.T) {
	c := &Client{streams: make(streams, 3)}
	ctx := context.Background()
	if err := c.streams.take(ctx); err != nil { // this transfer's own
		t.Fatal(err)
	}
	if err := c.streams.take(ctx); err != nil { // another transfer's
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[int]int{}
	var now, most atomic.Int32
	n := 0
	next := func() (int, bool) { n++; return n - 1, n <= 40 }
	release := make(chan struct{})
	p := c.startParts(ctx, 8, next, func(ctx context.Context, i int) error {
		if v := now.Add(1); v > most.Load() {
			most.Store(v)
		}
		defer now.Add(-1)
		if i == 0 {
			<-release // the first part waits until the other transfer is done
		}
		mu.Lock()
		ran[i]++
		mu.Unlock()
		return nil
	})
	close(release)
	c.streams.put() // the other transfer ends: its stream is free for a helper
	if err := p.join(); err != nil {
		t.Fatal(err)
	}
	if len(ran) != 40 || most.Load() > 3 {
		t.Errorf("%d parts ran, at most %d at once (budget: 3)", len(ran), most.Load())
	}
	for i, k := range ran {
		if k != 1 {
			t.Errorf("part %d ran %d times", i, k)
		}
	}
	if len(c.streams) != 1 {
		t.Errorf("%d streams taken after the parts, want 1 (the transfer's own)", len(c.streams))
	}
}

// TestPartsStopAtTheFirstError: a failing part ends the run with its error,
// the parts in flight see their context cancelled, and no part starts after.
func TestPartsStopAtTheFirstError(t *testing.T) {
	c := &Client{streams: make(streams, 4)}
	boom := errors.New("slice 3 failed")
	var started atomic.Int32
	n := 0
	next := func() (int, bool) { n++; return n - 1, n <= 100 }
	p := c.startParts(context.Background(), 1, next, func(ctx context.Context, i int) error {
		started.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if err := p.join(); !errors.Is(err, boom) {
		t.Fatalf("join: %v", err)
	}
	if s := started.Load(); s != 4 {
		t.Errorf("%d parts started; want 4 (none after the failure, on one stream)", s)
	}
	if len(c.streams) != 0 {
		t.Errorf("%d streams still taken", len(c.streams))
	}
}
