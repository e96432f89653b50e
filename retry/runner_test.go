package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
	"google.golang.org/api/googleapi"
)

// apiErr is the error a GCS call returns for an HTTP status, with optional headers.
func apiErr(code int, header ...string) *googleapi.Error {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &googleapi.Error{Code: code, Message: http.StatusText(code), Header: h}
}

// failing returns an op that fails with errs in turn (the last one repeating; nil is a
// success) and a pointer to its call count.
func failing(errs ...error) (func(context.Context) error, *int) {
	calls := 0
	return func(context.Context) error {
		err := errs[min(calls, len(errs)-1)]
		calls++
		return err
	}, &calls
}

// fakeRunner is a Runner on a fake clock with every random number 0.5, so GCS waits
// 1.5 s, 2.5 s, 4.5 s, 8.5 s, 16.5 s, 32 s, 32 s …
func fakeRunner() (*retry.Runner, *retrytest.Clock) {
	c := retrytest.NewClock()
	return &retry.Runner{Clock: c, Rand: retrytest.Fixed(0.5)}, c
}

func secs(vs ...float64) []time.Duration {
	out := make([]time.Duration, len(vs))
	for i, v := range vs {
		out[i] = time.Duration(v * float64(time.Second))
	}
	return out
}

func sameDurations(a, b []time.Duration) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func TestMaxAttemptsMakesExactlyThatManyCalls(t *testing.T) {
	for _, m := range []int{1, 2, 3, 7} {
		r, clock := fakeRunner()
		r.MaxAttempts = m
		op, calls := failing(apiErr(503))
		err := r.Do(context.Background(), op)
		var re *retry.Error
		if !errors.As(err, &re) || *calls != m || re.Attempts != m || re.Ctx != nil {
			t.Fatalf("m=%d: %d calls, err %#v", m, *calls, err)
		}
		if len(clock.Sleeps()) != m-1 {
			t.Errorf("m=%d: %d sleeps, want %d", m, len(clock.Sleeps()), m-1)
		}
	}
	r, clock := fakeRunner()
	r.MaxAttempts = 3
	op, _ := failing(apiErr(503))
	err := r.Do(context.Background(), op)
	want := "gave up after 3 attempts in 4s: googleapi: Error 503: Service Unavailable"
	if err.Error() != want || !sameDurations(clock.Sleeps(), secs(1.5, 2.5)) {
		t.Errorf("err %q, sleeps %v; want %q, [1.5s 2.5s]", err, clock.Sleeps(), want)
	}
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 503 || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.As/Is on %v: %v", err, ge)
	}
}

// TestDefaultBudgets: 12 attempts for a policy without a limit of its own; the policy's own
// rule otherwise (Drive 6 attempts, CSMA/CD 16, Java its elapsed time).
func TestDefaultBudgets(t *testing.T) {
	cases := []struct {
		p        retry.Policy
		deadline time.Duration
		calls    int
		ctx      error
	}{
		{nil, 0, 12, nil},
		{retry.GCS{MaxRetries: 3}, 0, 4, nil},
		{retry.Drive{}, 0, 6, nil},
		{retry.CSMA{}, 0, 16, nil},
		{retry.FullJitter{}, 0, 12, nil},
		// Java's intervals at Rand 0.5 sum past 15 minutes after 25 waits (elapsed 937.4 s):
		// with no deadline its time rule stops it at the 26th attempt ...
		{retry.Java{}, -1, 26, nil},
		// ... and the default 10-minute deadline comes first: 0.5+…+60+60 s passes 600 s
		// at the 20th wait, which is not started.
		{retry.Java{}, 0, 20, context.DeadlineExceeded},
	}
	for _, c := range cases {
		r, _ := fakeRunner()
		r.Policy, r.Deadline = c.p, c.deadline
		op, calls := failing(apiErr(500))
		err := r.Do(context.Background(), op)
		var re *retry.Error
		if !errors.As(err, &re) || *calls != c.calls || re.Attempts != c.calls || re.Ctx != c.ctx {
			t.Errorf("%v deadline %v: %d calls, %v; want %d calls, ctx %v", c.p, c.deadline, *calls, err, c.calls, c.ctx)
		}
	}
}

func TestDeadlineSleepNotStarted(t *testing.T) {
	r, clock := fakeRunner()
	r.Deadline = 10 * time.Second
	r.Rand = retrytest.Fixed(0) // waits 1, 2, 4, 8 s
	op, calls := failing(apiErr(502))
	err := r.Do(context.Background(), op)
	// 1+2+4 = 7 s slept; the next wait (8 s) would end at 15 s, past 10 s: not started.
	if *calls != 4 || !sameDurations(clock.Sleeps(), secs(1, 2, 4)) {
		t.Errorf("%d calls, sleeps %v; want 4 calls, [1s 2s 4s]", *calls, clock.Sleeps())
	}
	var ge *googleapi.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ge) || ge.Code != 502 {
		t.Errorf("err %v: want both DeadlineExceeded and the 502", err)
	}
	want := "gave up after 4 attempts in 7s (context deadline exceeded): googleapi: Error 502: Bad Gateway"
	if err.Error() != want {
		t.Errorf("err %q\nwant %q", err, want)
	}
}

// TestDeadlinePassedDuringAttempt: slow attempts use up the deadline without any sleep.
func TestDeadlinePassedDuringAttempt(t *testing.T) {
	r, clock := fakeRunner()
	r.Deadline = time.Minute
	calls := 0
	err := r.Do(context.Background(), func(context.Context) error {
		calls++
		clock.Advance(25 * time.Second) // the request itself takes 25 s
		return apiErr(500)
	})
	// 25 s, sleep 1.5, 25 s (51.5), sleep 2.5 would end at 54 s: allowed; 25 s → 79 s ≥ 60: stop.
	var re *retry.Error
	if !errors.As(err, &re) || calls != 3 || re.Ctx != context.DeadlineExceeded || re.Elapsed != 79*time.Second {
		t.Errorf("%d calls, err %#v", calls, err)
	}
}

// blockingClock's Sleep blocks until ctx ends, telling started when it begins.
type blockingClock struct {
	started chan time.Duration
}

func (blockingClock) Now() time.Time { return retrytest.Epoch }
func (c blockingClock) Sleep(ctx context.Context, d time.Duration) error {
	c.started <- d
	<-ctx.Done()
	return ctx.Err()
}

func TestCancelDuringSleepReturnsAtOnce(t *testing.T) {
	clock := blockingClock{started: make(chan time.Duration, 1)}
	r := &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
	ctx, cancel := context.WithCancel(context.Background())
	op, calls := failing(apiErr(503))
	done := make(chan error, 1)
	go func() { done <- r.Do(ctx, op) }()
	if d := <-clock.started; d != 1500*time.Millisecond {
		t.Errorf("sleep of %v, want 1.5s", d)
	}
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second): // a safety net for a broken runner, never reached
		t.Fatal("Do did not return after cancel")
	}
	var re *retry.Error
	if !errors.As(err, &re) || *calls != 1 || re.Ctx != context.Canceled || !errors.Is(err, context.Canceled) {
		t.Errorf("%d calls, err %v", *calls, err)
	}
}

// TestRealClockSleepCancel: with the real clock, an hour's wait ends when the context does.
func TestRealClockSleepCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan struct{})
	r := &retry.Runner{
		Policy:   retry.Constant{Delay: time.Hour},
		Deadline: 2 * time.Hour,
		OnRetry:  func(retry.Event) { close(waiting) }, // called just before the sleep
	}
	op, _ := failing(apiErr(503))
	done := make(chan error, 1)
	go func() { done <- r.Do(ctx, op) }()
	<-waiting
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a safety net for a broken runner, never reached
		t.Fatal("an hour's sleep was not cut short by cancel")
	}
}
