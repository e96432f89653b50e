package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// The budgets a zero Runner uses.
const (
	DefaultMaxAttempts   = 12               // attempts, the first included, when the policy has no limit of its own
	DefaultDeadline      = 10 * time.Minute // from Begin or the last Reset
	DefaultMaxRetryAfter = 5 * time.Minute  // the longest Retry-After honoured
)

// Event is passed to Runner.OnRetry before each wait.
type Event struct {
	Attempt int           // the attempt that just failed, 1-based, counted from Begin or the last Reset
	Wait    time.Duration // the wait about to be slept (after the Retry-After adjustment)
	Err     error         // the cause

	// MaxAttempts is the attempt budget Attempt counts against, 0 when only the policy's own
	// rule and the deadline limit it; for a log line such as "retry 3/12 in 4.2s: …".
	MaxAttempts int
}

// Runner retries an operation under a [Policy], bounded by an attempt count and a deadline.
// Its zero value is ready to use: GCS's policy, 12 attempts, 10 minutes, the [IsRetryable]
// classifier, real time. A Runner is not changed by use, so one Runner may serve many
// goroutines at once (its Rand and OnRetry must then be safe for concurrent use).
type Runner struct {
	// Policy computes each wait. nil means [Default]: GCS truncated exponential, max 32 s.
	Policy Policy
	// MaxAttempts is the number of attempts allowed, the first included, between Begin (or a
	// Reset) and giving up. 0 means the policy's own limit when it has one ([Limiter]; Drive's
	// 5 retries, CSMA/CD's 16 attempts, Java's max elapsed time), else 12. Negative means no
	// count limit: only the deadline and the policy stop the retries.
	MaxAttempts int
	// Deadline is the time allowed from Begin (or the last Reset). A wait that would end past it
	// is not started; the runner gives up at once with an [Error] whose Ctx is
	// context.DeadlineExceeded. It bounds the retrying, not one attempt in flight: give the
	// operation its own timeout for that. 0 means 10 minutes; negative means none.
	Deadline time.Duration
	// Retryable says whether an error is worth another attempt. nil means [IsRetryable].
	// Errors marked [Permanent] and a done context are never retried, whatever it says.
	Retryable func(error) bool
	// OnRetry, if set, is called before each wait with the attempt, the wait and the cause.
	OnRetry func(Event)
	// MaxRetryAfter is the ceiling on a server's Retry-After, which otherwise sets a floor
	// under the policy's wait. 0 means 5 minutes; negative means ignore Retry-After.
	MaxRetryAfter time.Duration
	// Clock is the time seam for tests. nil means real time.
	Clock Clock
	// Rand returns numbers uniform in [0, 1) for the policy's Step.Rand.
	// nil means math/rand/v2's Float64.
	Rand func() float64
}

// Do calls op until it succeeds, returns a non-retryable error, or the budget ends.
//
// A non-retryable error is returned as op gave it. When the budget ends — the attempt count,
// the policy's stop rule, the deadline or ctx — the result is an [*Error] that wraps the last
// cause and, for the deadline or ctx, the context error.
func (r *Runner) Do(ctx context.Context, op func(ctx context.Context) error) error {
	ctx = WithIdempotencyToken(ctx) // one operation: the same token on every attempt
	a := r.Begin()
	for {
		if err := a.Wait(ctx); err != nil {
			return err
		}
		err := op(ctx)
		if err == nil {
			return nil
		}
		if err = a.Retry(ctx, err); err != nil {
			return err
		}
	}
}

// Do is a Runner{Policy: p}.Do: the default budgets with policy p (nil: [Default]).
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	return (&Runner{Policy: p}).Do(ctx, op)
}

// Begin starts the retry state of one operation, for loops that make progress (chunked uploads):
//
//	a := r.Begin()
//	for {
//		err := step()
//		if err == nil {
//			// …
//			a.Reset()
//			continue
//		}
//		if err = a.Retry(ctx, err); err != nil {
//			return err
//		}
//	}
//
// An Attempts belongs to one goroutine.
func (r *Runner) Begin() *Attempts {
	if r == nil {
		r = &Runner{} // a nil *Runner behaves as the zero Runner
	}
	a := &Attempts{
		policy:    r.Policy,
		retryable: r.Retryable,
		onRetry:   r.OnRetry,
		clock:     r.Clock,
		rand:      r.Rand,
		max:       r.Budget(),
		deadline:  orDur(r.Deadline, DefaultDeadline),
		raCeiling: keepNone(r.MaxRetryAfter, DefaultMaxRetryAfter),
	}
	if a.policy == nil {
		a.policy = Default()
	}
	if a.retryable == nil {
		a.retryable = IsRetryable
	}
	if a.clock == nil {
		a.clock = realClock{}
	}
	if a.rand == nil {
		a.rand = rand.Float64
	}
	a.start = a.clock.Now()
	return a
}

// Budget is the attempt count the runner allows, the first included, as
// Event.MaxAttempts carries it ("retry 3/12"): MaxAttempts when set, else 0
// when the policy has a stop rule of its own ([Limiter]), else
// [DefaultMaxAttempts]. 0 means no count: only the policy's rule and the
// deadline stop the retries.
func (r *Runner) Budget() int {
	if r == nil {
		return DefaultMaxAttempts
	}
	if r.MaxAttempts != 0 {
		return max(r.MaxAttempts, 0)
	}
	if l, ok := r.Policy.(Limiter); ok && l.Limited() {
		return 0
	}
	return DefaultMaxAttempts
}

// Attempts is the retry state of one operation: see [Runner.Begin].
type Attempts struct {
	policy    Policy
	retryable func(error) bool
	onRetry   func(Event)
	clock     Clock
	rand      func() float64
	max       int           // attempts allowed since start; 0: no count limit
	deadline  time.Duration // from start; 0: none
	raCeiling time.Duration // negative: ignore Retry-After

	count int           // attempts since Begin
	n     int           // failed attempts since start
	prev  time.Duration // the policy's previous wait since start
	start time.Time     // Begin or the last Reset
	last  error
}

// Count returns the attempts made since Begin (not reset by Reset): each Retry records the
// failed attempt it is given and each Reset the attempt that made progress.
func (a *Attempts) Count() int { return a.count }

// Reset records progress: the retry count, the policy's n and the deadline restart.
func (a *Attempts) Reset() {
	a.count++
	a.n, a.prev, a.last = 0, 0, nil
	a.start = a.clock.Now()
}

// Retry records a failed attempt and decides: nil means it has waited and the caller should try
// again. Otherwise it returns the final error: err itself when it is not retryable, or an
// [*Error] when the attempt count, the policy's stop rule, the deadline or ctx ended the
// retries. The wait is the policy's, raised to the server's Retry-After (at most
// MaxRetryAfter); a wait that would end past the deadline is not started. Only this
// operation waits: other operations on the same Runner go on (how many requests go at once
// to a throttled bucket is the caller's to adapt, as package upload does).
// Retry(ctx, nil) returns nil at once.
func (a *Attempts) Retry(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	a.count++
	a.n++
	a.last = err
	if ctx.Err() != nil {
		return a.fail(ctx.Err())
	}
	if !errors.Is(err, ErrNoProgress) && (!a.retryable(err) || IsPermanent(err)) {
		return err
	}
	if a.max > 0 && a.n >= a.max {
		return a.fail(nil)
	}
	now := a.clock.Now()
	elapsed := now.Sub(a.start)
	if a.deadline > 0 && elapsed >= a.deadline {
		return a.fail(context.DeadlineExceeded)
	}
	d, ok := a.policy.Wait(Step{N: a.n - 1, Prev: a.prev, Elapsed: elapsed, Rand: a.rand()})
	if !ok {
		return a.fail(nil)
	}
	a.prev = d
	wait := a.adjust(d, err, now)
	if a.deadline > 0 && wait > a.deadline-elapsed { // (not elapsed+wait: a wait may be huge)
		return a.fail(context.DeadlineExceeded)
	}
	if a.onRetry != nil {
		a.onRetry(Event{Attempt: a.n, Wait: wait, Err: err, MaxAttempts: a.max})
	}
	if err := a.clock.Sleep(ctx, wait); err != nil {
		return a.fail(ctxErr(ctx, err))
	}
	return nil
}

// adjust raises the policy's wait d to the server's Retry-After (capped by MaxRetryAfter).
func (a *Attempts) adjust(d time.Duration, err error, now time.Time) time.Duration {
	wait := d
	if a.raCeiling >= 0 {
		if ra, ok := retryAfter(err, now); ok {
			wait = max(wait, min(ra, a.raCeiling))
		}
	}
	return wait
}

// Wait returns nil, or the final error when ctx has ended: Do calls it before every
// attempt, and a loop built on Begin may, so that an ended context is not sent again.
func (a *Attempts) Wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return a.fail(err)
	}
	return nil
}

// fail builds the final error; ctxErr is nil when the count or the policy ended the retries.
func (a *Attempts) fail(ctxErr error) error {
	return &Error{Attempts: a.n, Elapsed: a.clock.Now().Sub(a.start), Last: a.last, Ctx: ctxErr}
}

// ctxErr prefers the context's own error to what a Clock's Sleep returned.
func ctxErr(ctx context.Context, sleepErr error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return sleepErr
}
