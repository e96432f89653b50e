package retry_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// TestGateDelaysEveryWorker: worker A's 429 holds back worker B's next request by A's wait,
// though B never saw a 429. Each worker has its own fake clock on the same epoch, so the test
// reads exactly how long each slept.
func TestGateDelaysEveryWorker(t *testing.T) {
	var gate retry.Gate
	clockA, clockB := retrytest.NewClock(), retrytest.NewClock()
	a := &retry.Runner{Clock: clockA, Rand: retrytest.Fixed(0.5), Gate: &gate}
	b := &retry.Runner{Clock: clockB, Rand: retrytest.Fixed(0.5), Gate: &gate}
	ctx := context.Background()

	opA, _ := failing(apiErr(429), nil)
	if err := a.Do(ctx, opA); err != nil {
		t.Fatal(err)
	}
	if want := retrytest.Epoch.Add(1500 * ms); !gate.Until().Equal(want) {
		t.Fatalf("gate at %v, want %v", gate.Until(), want)
	}
	opB, callsB := failing(nil)
	if err := b.Do(ctx, opB); err != nil || *callsB != 1 {
		t.Fatal(err)
	}
	if !sameDurations(clockB.Sleeps(), secs(1.5)) {
		t.Errorf("B slept %v before its request, want [1.5s]", clockB.Sleeps())
	}

	// A non-throttle failure (500) does not push the gate.
	clockC := retrytest.NewClock()
	clockC.Advance(time.Hour)
	c := &retry.Runner{Clock: clockC, Rand: retrytest.Fixed(0.5), Gate: &gate}
	opC, _ := failing(apiErr(500), nil)
	if err := c.Do(ctx, opC); err != nil || !gate.Until().Equal(retrytest.Epoch.Add(1500*ms)) {
		t.Errorf("500 moved the gate to %v (%v)", gate.Until(), err)
	}
}

// TestGateRaisesOwnWait: a worker that fails on its own waits for the gate if that is later.
func TestGateRaisesOwnWait(t *testing.T) {
	var gate retry.Gate
	gate.Push(retrytest.Epoch.Add(30 * time.Second))
	gate.Push(retrytest.Epoch.Add(10 * time.Second)) // earlier: ignored
	clock := retrytest.NewClock()
	var waits []time.Duration
	r := &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5), Gate: &gate,
		OnRetry: func(e retry.Event) { waits = append(waits, e.Wait) }}
	a := r.Begin()
	// The gate is closed for 30 s; the first request waits for it.
	if err := a.Wait(context.Background()); err != nil || clock.Slept() != 30*time.Second {
		t.Fatalf("Wait: %v, slept %v", err, clock.Sleeps())
	}
	// A 500 at 30 s: the policy says 1.5 s, but meanwhile a peer has pushed the gate to 40 s.
	gate.Push(retrytest.Epoch.Add(40 * time.Second))
	if err := a.Retry(context.Background(), apiErr(500)); err != nil {
		t.Fatal(err)
	}
	if !sameDurations(waits, secs(10)) || !clock.Now().Equal(retrytest.Epoch.Add(40*time.Second)) {
		t.Errorf("waits %v, now %v; want [10s] and 40s", waits, clock.Now().Sub(retrytest.Epoch))
	}
}

// pushingClock is a fake clock that, during its first sleep, lets a peer push the gate.
type pushingClock struct {
	*retrytest.Clock
	once sync.Once
	push func()
}

func (c *pushingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.once.Do(c.push)
	return c.Clock.Sleep(ctx, d)
}

func TestGateWaitRereadsAfterSleep(t *testing.T) {
	var gate retry.Gate
	gate.Push(retrytest.Epoch.Add(2 * time.Second))
	clock := &pushingClock{Clock: retrytest.NewClock()}
	clock.push = func() { gate.Push(retrytest.Epoch.Add(5 * time.Second)) }
	if err := gate.Wait(context.Background(), clock); err != nil {
		t.Fatal(err)
	}
	if !sameDurations(clock.Sleeps(), secs(2, 3)) {
		t.Errorf("slept %v, want [2s 3s]", clock.Sleeps())
	}
	// An open gate and a zero Gate do not wait at all.
	var zero retry.Gate
	if err := zero.Wait(context.Background(), clock); err != nil || len(clock.Sleeps()) != 2 {
		t.Errorf("zero gate: %v, %v", err, clock.Sleeps())
	}
}

func TestGateCancelAndDeadline(t *testing.T) {
	var gate retry.Gate
	gate.Push(retrytest.Epoch.Add(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clock := retrytest.NewClock()
	if err := gate.Wait(ctx, clock); err != context.Canceled || len(clock.Sleeps()) != 0 {
		t.Errorf("cancelled Wait: %v, slept %v", err, clock.Sleeps())
	}
	// A gate closed past the runner's deadline: the runner gives up without sleeping.
	r := &retry.Runner{Clock: clock, Gate: &gate, Deadline: 10 * time.Minute}
	op, calls := failing(nil)
	err := r.Do(context.Background(), op)
	if !errors.Is(err, context.DeadlineExceeded) || *calls != 0 || len(clock.Sleeps()) != 0 {
		t.Errorf("gate past deadline: %v, %d calls, slept %v", err, *calls, clock.Sleeps())
	}
	// Real time: a cancel ends a gate wait of an hour at once. The gate is pushed an hour past
	// the real now: the one above, an hour past the fake clock's Epoch, is long open in real time,
	// and a Wait that ran before the cancel returned nil.
	var real retry.Gate
	real.Push(time.Now().Add(time.Hour))
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- real.Wait(ctx, nil) }()
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Errorf("real-time gate wait: %v", err)
		}
	case <-time.After(10 * time.Second): // safety net, never reached
		t.Fatal("gate wait not cancelled")
	}
}

// TestGateConcurrentWorkers runs 16 workers sharing a Gate and a fake clock under the race
// detector: every worker still succeeds, and the gate only ever moves forward.
func TestGateConcurrentWorkers(t *testing.T) {
	var gate retry.Gate
	clock := retrytest.NewClock()
	// No deadline: the fake clock adds up concurrent sleepers' waits (16 workers waiting on one
	// gate move it 16 times as far), so the fake time can pass the default 10 minutes though
	// every worker makes at most 3 attempts; what is tested here is the sharing, not the deadline.
	r := &retry.Runner{Clock: clock, Rand: retrytest.Seeded(3), Gate: &gate, Deadline: -1}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	var mu sync.Mutex
	var last time.Time
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, _ := failing(apiErr(429), apiErr(503), nil)
			errs <- r.Do(context.Background(), op)
			mu.Lock()
			defer mu.Unlock()
			if u := gate.Until(); u.Before(last) {
				t.Errorf("gate moved back from %v to %v", last, u)
			} else {
				last = u
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if gate.Until().IsZero() {
		t.Error("throttles never pushed the gate")
	}
}
