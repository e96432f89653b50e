package aimd

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
)

// fill takes n slots that must be free at once.
func fill(t *testing.T, w *Window, n int) []Ticket {
	t.Helper()
	ts := make([]Ticket, n)
	for i := range ts {
		tk, ok := tryAcquire(w)
		if !ok {
			t.Fatalf("slot %d of %d not free: %+v", i+1, n, w.Stats())
		}
		ts[i] = tk
	}
	return ts
}

// tryAcquire takes a slot if one is free now.
func tryAcquire(w *Window) (Ticket, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.mu.Lock()
	free := len(w.waiters) == 0 && w.inFlight < w.allowed()
	w.mu.Unlock()
	if !free {
		return Ticket{}, false
	}
	tk, err := w.Acquire(ctx)
	return tk, err == nil
}

// round sends a full window and answers every request with o.
func round(t *testing.T, w *Window, o Outcome) {
	t.Helper()
	for _, tk := range fill(t, w, w.Stats().Window) {
		tk.Release(o)
	}
}

// Slow start doubles the window every window of answers, from 4 up to the
// ceiling and no further.
func TestSlowStartToCeiling(t *testing.T) {
	w := New(32, Tuning{Initial: 4})
	var got []int
	for range 5 {
		got = append(got, w.Stats().Window)
		round(t, w, Answered)
	}
	want := []int{4, 8, 16, 32, 32}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("windows %v, want %v", got, want)
		}
	}
	if _, ok := tryAcquire(w); !ok {
		t.Fatal("no slot at an idle window")
	}
	fill(t, w, 31)
	if _, ok := tryAcquire(w); ok {
		t.Fatalf("a 33rd request in flight at a ceiling of 32: %+v", w.Stats())
	}
}

// A refusal cuts the window to 0.7 of it; the refusals of the requests sent
// before the cut (the same overload) make no second cut, but deepen it to
// 0.7 of the requests the bucket admitted of that window.
func TestOneCutPerWindow(t *testing.T) {
	for _, tc := range []struct {
		refused, window int
	}{
		{1, 5},  // 8×0.7 = 5.6
		{2, 4},  // 6 admitted: 6×0.7 = 4.2
		{4, 2},  // 4×0.7 = 2.8
		{8, 1},  // none admitted: the floor
		{16, 1}, // of a window of 16
	} {
		w := New(16, Tuning{Initial: 8})
		if tc.refused == 16 {
			round(t, w, Answered) // slow start: 16
		}
		ts := fill(t, w, max(tc.refused, 8))
		for i, tk := range ts {
			if i < tc.refused {
				tk.Release(Refused)
			} else {
				tk.Release(Answered)
			}
		}
		s := w.Stats()
		if s.Window != tc.window || s.Cuts != 1 || s.Refusals != tc.refused || s.InFlight != 0 {
			t.Fatalf("%d refused of one window: %+v, want window %d, 1 cut", tc.refused, s, tc.window)
		}
	}
	// A request sent after the cut is of a new window: its refusal cuts.
	w := New(8, Tuning{Initial: 8})
	fill(t, w, 1)[0].Release(Refused)
	tk := fill(t, w, 1)[0]
	tk.Release(Refused)
	if s := w.Stats(); s.Window != 3 || s.Cuts != 2 { // 5.6×0.7 = 3.92
		t.Fatalf("a refusal after the cut: %+v, want window 3, 2 cuts", s)
	}
}

// The answers of requests sent before a cut do not widen the window again.
func TestAnswersOfTheOverloadDoNotGrow(t *testing.T) {
	w := New(8, Tuning{Initial: 8})
	ts := fill(t, w, 8)
	ts[0].Release(Refused)
	for _, tk := range ts[1:] {
		tk.Release(Answered)
	}
	if s := w.Stats(); s.Window != 5 {
		t.Fatalf("window %d after the cut and 7 answers of the old window, want 5", s.Window)
	}
}

// fakeClock is a Window's clock that moves only when the test says.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// roundTook sends a full window, lets d pass and answers every request.
func roundTook(t *testing.T, w *Window, c *fakeClock, d time.Duration) {
	t.Helper()
	ts := fill(t, w, w.Stats().Window)
	c.advance(d)
	for _, tk := range ts {
		tk.Release(Answered)
	}
}

// windowAt is the window to a hundredth, for exact comparisons of a float.
func windowAt(w *Window) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return math.Round(w.window*100) / 100
}

// Past slow start the window grows by Rate × the window the last cut
// started from, per second of a full window in flight, whatever the round
// trip: one second of answers at 5 ms and at 20 ms grows a window cut from
// 10 to 7 by 0.2 × 10 = 2, to 9; another half second to 10, where it was
// refused. (Growing by a tenth of a request per round trip, it reached the
// ceiling of 16 in that second at 5 ms, and 12 at 20 ms.)
func TestGrowthIsARateInTime(t *testing.T) {
	for _, rtt := range []time.Duration{5 * time.Millisecond, 20 * time.Millisecond} {
		c := &fakeClock{t: time.Unix(0, 0)}
		w := New(16, Tuning{Initial: 10, Now: c.now})
		fill(t, w, 1)[0].Release(Refused) // 10 -> 7
		var got []float64
		for _, d := range []time.Duration{time.Second, time.Second / 2, time.Second / 2} {
			for range d / rtt {
				roundTook(t, w, c, rtt)
			}
			got = append(got, windowAt(w))
		}
		if want := []float64{9, 10, 11}; !slices.Equal(got, want) {
			t.Fatalf("at %v: windows %v after 1, 1.5 and 2 s of answers, want %v", rtt, got, want)
		}
	}
}

// The growth follows the time each request was in flight, so a window
// half full grows at half the rate, and a request that hung counts for a
// second at most.
func TestGrowthCountsTimeInFlight(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	w := New(16, Tuning{Initial: 10, Now: c.now})
	fill(t, w, 1)[0].Release(Refused) // 10 -> 7, base 10
	for range 100 {                   // 1 s with 3 of the 7 slots in flight, at 10 ms
		ts := fill(t, w, 3)
		c.advance(10 * time.Millisecond)
		for _, tk := range ts {
			tk.Release(Answered)
		}
	}
	if got := windowAt(w); got != 7.86 { // 7 + 2 × 3/7
		t.Fatalf("window %v after a second at 3 of 7 in flight, want 7.86", got)
	}
	tk := fill(t, w, 1)[0]
	c.advance(time.Hour)
	tk.Release(Answered)
	if got := windowAt(w); got != 8.14 { // + 0.2 × 10 × 1 s / 7 allowed
		t.Fatalf("window %v after a request in flight for an hour, want 8.14 (one second's worth)", got)
	}
}

// Only the first cut deepens with the refusals of its overload: the
// window was set blind (-j). Later cuts met the bucket by slow growth, and
// several refusals of one small window say little of the capacity: a cut
// from 9 with 3 refused keeps 6 (0.7 × 9), where deepening would leave
// 0.7 × (9 - 3) = 4.
func TestOnlyTheFirstCutDeepens(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	w := New(16, Tuning{Initial: 10, Now: c.now})
	ts := fill(t, w, 10)
	for i, tk := range ts {
		tk.Release([]Outcome{Refused, Answered}[min(i/4, 1)]) // 4 of 10 refused
	}
	if s := w.Stats(); s.Window != 4 || s.Cuts != 1 { // 0.7 × 6 admitted = 4.2
		t.Fatalf("first overload, 4 of 10 refused: %+v, want window 4, 1 cut", s)
	}
	for windowAt(w) < 9 {
		roundTook(t, w, c, 10*time.Millisecond)
	}
	ts = fill(t, w, 9)
	for i, tk := range ts {
		tk.Release([]Outcome{Refused, Answered}[min(i/3, 1)]) // 3 of 9 refused
	}
	if s := w.Stats(); s.Window != 6 || s.Cuts != 2 || s.Refusals != 7 {
		t.Fatalf("second overload, 3 of 9 refused: %+v, want window 6 (0.7 × 9), 2 cuts, 7 refusals", s)
	}
}

// Cuts never take the window below one request, and one request still goes.
func TestFloorOne(t *testing.T) {
	w := New(8, Tuning{})
	for range 20 {
		fill(t, w, 1)[0].Release(Refused)
	}
	s := w.Stats()
	if s.Window != 1 || s.Least != 1 || s.Cuts != 20 {
		t.Fatalf("after 20 refusals: %+v, want window 1, least 1, 20 cuts", s)
	}
	tk := fill(t, w, 1)[0]
	if _, ok := tryAcquire(w); ok {
		t.Fatal("two requests in flight at a window of 1")
	}
	tk.Release(Answered)
}

// Neutral outcomes (a per-object refusal, a network error) neither cut nor
// grow.
func TestNeutralLeavesWindow(t *testing.T) {
	w := New(8, Tuning{Initial: 6})
	round(t, w, Neutral)
	round(t, w, ObjectRefused)
	if s := w.Stats(); s.Window != 6 || s.Cuts != 0 || s.Neutral != 6 || s.ObjectRefusals != 6 || s.Refusals != 0 {
		t.Fatalf("%+v, want window 6, no cut, 6 neutral, 6 object refusals", s)
	}
}

// A full window makes the next request wait for a slot, first come first
// served; a release lets exactly one waiter go, and a waiter whose context
// ends leaves the queue without a slot.
func TestAcquireWaitsForSlot(t *testing.T) {
	w := New(2, Tuning{})
	held := fill(t, w, 2)
	got := make(chan int, 2)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { // the first waiter gives up
		_, err := w.Acquire(ctx)
		errc <- err
	}()
	waitQueued(w, 1)
	go func() {
		tk, err := w.Acquire(context.Background())
		if err == nil {
			got <- 2
			tk.Release(Answered)
		}
	}()
	waitQueued(w, 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	select {
	case n := <-got:
		t.Fatalf("waiter %d got a slot while the window was full", n)
	default:
	}
	held[0].Release(Answered)
	if n := <-got; n != 2 {
		t.Fatalf("waiter %d", n)
	}
	held[1].Release(Answered)
	if s := w.Stats(); s.InFlight != 0 {
		t.Fatalf("%d in flight after all released", s.InFlight)
	}
}

// waitQueued waits until n requests wait for a slot (a condition, not a time).
func waitQueued(w *Window, n int) {
	for {
		w.mu.Lock()
		q := len(w.waiters)
		w.mu.Unlock()
		if q >= n {
			return
		}
		runtime.Gosched() // Acquire queues itself before it blocks
	}
}

// Buckets keeps one window per bucket: a cut of one leaves the others.
func TestBucketsAreIndependent(t *testing.T) {
	b := NewBuckets(8, Tuning{Initial: 8})
	tk, _ := b.For("a").Acquire(context.Background())
	tk.Release(Refused)
	s := b.Stats()
	if s["a"].Window != 5 || b.For("b").Stats().Window != 8 {
		t.Fatalf("a %+v, b %+v", s["a"], b.For("b").Stats())
	}
}

// An observed outcome (a request that held no slot) counts as one of the
// last window: a refusal cuts once, a second of the same window deepens it,
// answers grow it by their time in flight; and the slots are untouched.
func TestObserve(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	w := New(8, Tuning{Initial: 8, Now: c.now})
	round(t, w, Answered) // 8 numbered requests
	w.Observe(Refused, 0)
	w.Observe(Refused, 0)
	s := w.Stats()
	if s.Window != 4 || s.Cuts != 1 || s.Refusals != 2 || s.InFlight != 0 { // 8 -> 5.6, then 0.7×6 = 4.2
		t.Fatalf("two observed refusals: %+v, want window 4, 1 cut", s)
	}
	fill(t, w, 1)[0].Release(Answered) // a request of the new window, in no time
	w.Observe(Answered, 500*time.Millisecond)
	w.Observe(ObjectRefused, time.Second)
	if got := windowAt(w); got != 4.4 { // 4.2 + 0.2 × 8 × 0.5 s / 4
		t.Fatalf("window %v after an observed answer of half a second, want 4.4", got)
	}
	if s := w.Stats(); s.Window != 4 || s.ObjectRefusals != 1 || s.InFlight != 0 {
		t.Fatalf("%+v", s)
	}
}
