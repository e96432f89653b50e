package retrytest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

var _ retry.TimerClock = (*retrytest.Clock)(nil)

func TestClock(t *testing.T) {
	var c retrytest.Clock // the zero value starts at Epoch
	if !c.Now().Equal(retrytest.Epoch) {
		t.Fatalf("zero Clock at %v", c.Now())
	}
	ctx := context.Background()
	if err := c.Sleep(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Second)
	if err := c.Sleep(ctx, -time.Second); err != nil { // recorded, but time never runs back
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := c.Sleep(cancelled, time.Hour); err != context.Canceled {
		t.Errorf("cancelled Sleep = %v", err)
	}
	if got := c.Now().Sub(retrytest.Epoch); got != 4*time.Second {
		t.Errorf("now at +%v, want +4s", got)
	}
	if got := c.Sleeps(); len(got) != 2 || got[0] != 3*time.Second || got[1] != -time.Second || c.Slept() != 2*time.Second {
		t.Errorf("Sleeps %v, Slept %v", got, c.Slept())
	}
}

func TestFixedAndSeeded(t *testing.T) {
	f := retrytest.Fixed(0.1, 0.2)
	if a, b, c := f(), f(), f(); a != 0.1 || b != 0.2 || c != 0.2 {
		t.Errorf("Fixed gave %v %v %v", a, b, c)
	}
	if retrytest.Fixed()() != 0 {
		t.Error("empty Fixed must give 0")
	}
	s1, s2 := retrytest.Seeded(5), retrytest.Seeded(5)
	for range 100 {
		a, b := s1(), s2()
		if a != b || a < 0 || a >= 1 {
			t.Fatalf("Seeded: %v vs %v", a, b)
		}
	}
}

// AfterFunc calls run, in due order, when Sleep or Advance moves the time
// past them; a stopped one never runs.
func TestClockAfterFunc(t *testing.T) {
	c := retrytest.NewClock()
	var got []string
	c.AfterFunc(30*time.Millisecond, func() { got = append(got, "30ms") })
	stop := c.AfterFunc(20*time.Millisecond, func() { got = append(got, "20ms (stopped)") })
	c.AfterFunc(10*time.Millisecond, func() {
		got = append(got, "10ms")
		c.AfterFunc(5*time.Millisecond, func() { got = append(got, "10ms+5ms") })
	})
	if !stop() || stop() {
		t.Fatal("stop: want true once, then false")
	}
	c.Advance(9 * time.Millisecond)
	if len(got) != 0 {
		t.Fatalf("fired early: %q", got)
	}
	c.Sleep(context.Background(), 25*time.Millisecond)
	if want := []string{"10ms", "10ms+5ms", "30ms"}; !slices.Equal(got, want) {
		t.Fatalf("fired %q, want %q", got, want)
	}
}
