package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
	"google.golang.org/api/googleapi"
)

func TestNonRetryableMakesOneCall(t *testing.T) {
	notFound := apiErr(404)
	cases := []struct {
		name string
		err  error
	}{
		{"404", notFound},
		{"wrapped 404", fmt.Errorf("get object: %w", notFound)},
		{"permanent 503", retry.Permanent(apiErr(503))},
		{"wrapped permanent 503", fmt.Errorf("finalize: %w", retry.Permanent(apiErr(503)))},
		{"plain error", errors.New("checksum mismatch")},
		{"context.Canceled from below", fmt.Errorf("read: %w", context.Canceled)},
	}
	for _, c := range cases {
		r, clock := fakeRunner()
		op, calls := failing(c.err)
		err := r.Do(context.Background(), op)
		if err != c.err || *calls != 1 || len(clock.Sleeps()) != 0 {
			t.Errorf("%s: %d calls, %d sleeps, err %v; want 1 call, err returned as is", c.name, *calls, len(clock.Sleeps()), err)
		}
	}
	// errors.As still reaches the 503 inside Permanent.
	var ge *googleapi.Error
	if err := retry.Permanent(apiErr(503)); !errors.As(err, &ge) || ge.Code != 503 || !retry.IsPermanent(err) {
		t.Errorf("Permanent hides its cause: %v", err)
	}
	if retry.Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
}

// TestCustomClassifier: Drive's 403 rateLimitExceeded is a caller's rule, not the default.
func TestCustomClassifier(t *testing.T) {
	rateLimited := &googleapi.Error{Code: 403, Errors: []googleapi.ErrorItem{{Reason: "rateLimitExceeded"}}}
	r, _ := fakeRunner()
	r.Retryable = func(err error) bool {
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == 403 && len(ge.Errors) > 0 && ge.Errors[0].Reason == "rateLimitExceeded" {
			return true
		}
		return retry.IsRetryable(err)
	}
	op, calls := failing(rateLimited, rateLimited, nil)
	if err := r.Do(context.Background(), op); err != nil || *calls != 3 {
		t.Errorf("custom rule: %d calls, %v; want 3 calls, success", *calls, err)
	}
	// A Permanent error is never retried, whatever the classifier says.
	r.Retryable = func(error) bool { return true }
	op, calls = failing(retry.Permanent(rateLimited))
	if err := r.Do(context.Background(), op); *calls != 1 || !retry.IsPermanent(err) {
		t.Errorf("permanent under a yes-man classifier: %d calls, %v", *calls, err)
	}
}

func TestContextDoneBeforeOrDuringOp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, _ := fakeRunner()
	op, calls := failing(nil)
	err := r.Do(ctx, op)
	if *calls != 0 || !errors.Is(err, context.Canceled) || err.Error() != "gave up after 0 attempts in 0s: context canceled" {
		t.Errorf("cancelled before Do: %d calls, %v", *calls, err)
	}
	// The op fails because the caller cancelled while it ran: no retry, both causes kept.
	ctx, cancel = context.WithCancel(context.Background())
	r, _ = fakeRunner()
	calls2 := 0
	err = r.Do(ctx, func(context.Context) error { calls2++; cancel(); return apiErr(503) })
	var ge *googleapi.Error
	if calls2 != 1 || !errors.Is(err, context.Canceled) || !errors.As(err, &ge) {
		t.Errorf("cancelled during op: %d calls, %v", calls2, err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := retrytest.Epoch
	date := func(d time.Duration) string { return now.Add(d).UTC().Format(http.TimeFormat) }
	cases := []struct {
		name    string
		header  string
		ceiling time.Duration
		want    time.Duration // the first wait; the policy alone gives 1.5 s
	}{
		{"none", "", 0, 1500 * ms},
		{"seconds", "7", 0, 7 * time.Second},
		{"seconds below the policy's wait", "1", 0, 1500 * ms},
		{"HTTP date", date(20 * time.Second), 0, 20 * time.Second},
		{"HTTP date in the past", date(-time.Hour), 0, 1500 * ms},
		{"invalid", "soon", 0, 1500 * ms},
		{"negative seconds", "-5", 0, 1500 * ms},
		{"above the ceiling", "120", 30 * time.Second, 30 * time.Second},
		{"above the default ceiling (5 min)", "3600", 0, 5 * time.Minute},
		{"ignored", "120", -1, 1500 * ms},
	}
	for _, c := range cases {
		r, clock := fakeRunner()
		r.MaxRetryAfter = c.ceiling
		var events []retry.Event
		r.OnRetry = func(e retry.Event) { events = append(events, e) }
		op, _ := failing(apiErr(429, "Retry-After", c.header), nil)
		if err := r.Do(context.Background(), op); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !sameDurations(clock.Sleeps(), []time.Duration{c.want}) || len(events) != 1 || events[0].Wait != c.want {
			t.Errorf("%s: slept %v, event %+v; want %v", c.name, clock.Sleeps(), events, c.want)
		}
	}
}

// TestRetryAfterNeverPastDeadline: a server asking for more time than is left ends the
// retries at once, without sleeping.
func TestRetryAfterNeverPastDeadline(t *testing.T) {
	r, clock := fakeRunner()
	r.Deadline = time.Minute
	op, calls := failing(apiErr(503, "Retry-After", "90"))
	err := r.Do(context.Background(), op)
	if *calls != 1 || len(clock.Sleeps()) != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%d calls, sleeps %v, err %v", *calls, clock.Sleeps(), err)
	}
}

func TestOnRetryEvents(t *testing.T) {
	r, _ := fakeRunner()
	r.MaxAttempts = 4
	var lines []string
	r.OnRetry = func(e retry.Event) {
		lines = append(lines, fmt.Sprintf("retry %d/%d in %v: %v", e.Attempt, e.MaxAttempts, e.Wait, e.Err))
	}
	op, _ := failing(apiErr(503), apiErr(500), errors.New("read tcp: connection reset by peer"), nil)
	if err := r.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"retry 1/4 in 1.5s: googleapi: Error 503: Service Unavailable",
		"retry 2/4 in 2.5s: googleapi: Error 500: Internal Server Error",
		"retry 3/4 in 4.5s: read tcp: connection reset by peer",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestResetOnProgress: a transfer that keeps making progress is bounded by "MaxAttempts
// without progress" and a deadline that restarts, not by a total.
func TestResetOnProgress(t *testing.T) {
	r, clock := fakeRunner()
	r.MaxAttempts, r.Deadline = 4, 10*time.Second
	ctx := context.Background()
	a := r.Begin()
	// 20 chunks, each failing 3 times before it goes through: 60 failures, 80 attempts,
	// 170 s of sleeping, far beyond 4 attempts and 10 s in total.
	for chunk := 0; chunk < 20; chunk++ {
		for fail := 0; fail < 3; fail++ {
			if err := a.Retry(ctx, apiErr(503)); err != nil {
				t.Fatalf("chunk %d failure %d: %v", chunk, fail, err)
			}
		}
		a.Reset()
	}
	if a.Count() != 80 || clock.Slept() != 170*time.Second {
		t.Errorf("Count %d, slept %v; want 80, 170s", a.Count(), clock.Slept())
	}
	// n restarts on Reset: every stretch slept 1.5, 2.5, 4.5 s.
	if got := clock.Sleeps()[57:]; !sameDurations(got, secs(1.5, 2.5, 4.5)) {
		t.Errorf("last stretch slept %v", got)
	}
	// Without progress the 4th failed attempt ends it, counting from the last Reset.
	var err error
	for err == nil {
		err = a.Retry(ctx, apiErr(503))
	}
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 4 || re.Elapsed != 8500*ms || a.Count() != 84 {
		t.Errorf("final %#v, Count %d", err, a.Count())
	}
	if a.Retry(ctx, nil) != nil || a.Count() != 84 {
		t.Error("Retry(ctx, nil) must do nothing")
	}
}

// TestRetryAfterResetDeadline: the deadline counts from the last Reset.
func TestRetryAfterResetDeadline(t *testing.T) {
	r, clock := fakeRunner()
	r.Deadline = 10 * time.Second
	a := r.Begin()
	clock.Advance(9 * time.Second)
	a.Reset()
	clock.Advance(9 * time.Second) // 18 s since Begin, 9 s since Reset
	ctx := context.Background()
	if err := a.Retry(ctx, apiErr(500)); err != nil { // 1.5 s wait ends at 10.5 s: not allowed
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("unexpected %v", err)
		}
	} else {
		t.Fatalf("a wait ending past the deadline was started (slept %v)", clock.Sleeps())
	}
	r.Deadline = 11 * time.Second
	a = r.Begin()
	clock.Advance(20 * time.Second)
	a.Reset()
	clock.Advance(9 * time.Second)
	if err := a.Retry(ctx, apiErr(500)); err != nil {
		t.Errorf("9 s + 1.5 s is within 11 s of the Reset: %v", err)
	}
}

// TestDefaultRand: a nil Rand uses math/rand/v2; the waits stay inside GCS's bounds.
func TestDefaultRand(t *testing.T) {
	clock := retrytest.NewClock()
	r := &retry.Runner{Clock: clock, MaxAttempts: 6}
	op, _ := failing(apiErr(500))
	_ = r.Do(context.Background(), op)
	for n, d := range clock.Sleeps() {
		lo := time.Duration(1<<n) * time.Second
		if d < lo || d > lo+time.Second {
			t.Errorf("wait %d = %v, outside [%v, %v]", n, d, lo, lo+time.Second)
		}
	}
	// The package-level Do on the real clock: a success makes one call and no wait.
	op, calls := failing(nil)
	if err := retry.Do(context.Background(), nil, op); err != nil || *calls != 1 {
		t.Errorf("Do: %v, %d calls", err, *calls)
	}
	var none *retry.Runner // a nil *Runner is the zero Runner
	if err := none.Do(context.Background(), op); err != nil || *calls != 2 {
		t.Errorf("nil Runner: %v, %d calls", err, *calls)
	}
}

func TestErrorText(t *testing.T) {
	cases := []struct {
		e    retry.Error
		want string
	}{
		{retry.Error{Attempts: 5, Elapsed: 31234 * ms, Last: errors.New("503")}, "gave up after 5 attempts in 31.2s: 503"},
		{retry.Error{Attempts: 1, Elapsed: 1234567, Last: errors.New("x")}, "gave up after 1 attempt in 1ms: x"},
		{retry.Error{Attempts: 2, Elapsed: 10 * time.Minute, Last: errors.New("x"), Ctx: context.DeadlineExceeded},
			"gave up after 2 attempts in 10m0s (context deadline exceeded): x"},
		{retry.Error{}, "gave up after 0 attempts in 0s"},
	}
	for _, c := range cases {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
	last := errors.New("last")
	e := &retry.Error{Last: last, Ctx: context.Canceled}
	if u := e.Unwrap(); len(u) != 2 || u[0] != last || u[1] != context.Canceled {
		t.Errorf("Unwrap = %v", u)
	}
	if u := (&retry.Error{Last: last}).Unwrap(); len(u) != 1 {
		t.Errorf("Unwrap without Ctx = %v", u)
	}
}
