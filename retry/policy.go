package retry

import (
	"math"
	"time"
)

// Step is what a Policy computes one wait from: pure inputs, so tests pass exact values.
type Step struct {
	N       int           // retry number: 0 for the wait before the first retry
	Prev    time.Duration // the wait this policy returned for the previous retry; 0 before the first
	Elapsed time.Duration // time since the first attempt or the last Attempts.Reset
	Rand    float64       // uniform in [0, 1): the only randomness a policy sees
}

// Policy computes the wait before a retry. ok=false: the policy's own stop rule says give up
// (Drive's 5 retries, CSMA/CD's 16 attempts, Java's max elapsed time).
//
// A Policy must be a pure function of its Step: the same Step gives the same wait. All the
// policies in this package are small value types whose zero value is the documented default.
type Policy interface {
	Wait(s Step) (d time.Duration, ok bool)
}

// Limiter is implemented by policies that can have a stop rule of their own. When Limited
// reports true and [Runner.MaxAttempts] is 0, the runner relies on the policy's rule (and its
// Deadline) instead of its default of 12 attempts.
type Limiter interface {
	Limited() bool
}

// Default returns the policy Google asks every Cloud Storage client to use: truncated
// exponential backoff, 1 s, 2 s, 4 s … plus up to 1000 ms of jitter, capped at 32 s.
func Default() Policy { return GCS{}.resolved() }

// forever is the longest wait a policy returns; formulas saturate here instead of overflowing.
const forever = time.Duration(math.MaxInt64)

// grow returns base * mult^n, saturating at forever. n < 0 counts as 0.
func grow(base time.Duration, mult float64, n int) time.Duration {
	return mulSat(base, math.Pow(mult, float64(max(n, 0))))
}

// mulSat returns d*f truncated to a whole nanosecond, saturating at forever (and at 0 below).
func mulSat(d time.Duration, f float64) time.Duration {
	v := float64(d) * f
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case v >= float64(forever):
		return forever
	}
	return time.Duration(v)
}

// addSat returns a+b for non-negative a and b, saturating at forever.
func addSat(a, b time.Duration) time.Duration {
	if a > forever-b {
		return forever
	}
	return a + b
}

// capAt returns min(d, limit); limit <= 0 means no limit.
func capAt(d, limit time.Duration) time.Duration {
	if limit > 0 && d > limit {
		return limit
	}
	return d
}

// unit clamps a random number into [0, 1), so a bad random source cannot produce a wait
// outside the formula's range.
func unit(r float64) float64 {
	switch {
	case r > 0 && r < 1:
		return r
	case r >= 1:
		return math.Nextafter(1, 0)
	}
	return 0 // r <= 0 or NaN
}

// uniform returns a wait uniform in [lo, hi) for Rand r.
func uniform(lo, hi time.Duration, r float64) time.Duration {
	if hi <= lo {
		return lo
	}
	return addSat(lo, mulSat(hi-lo, unit(r)))
}

// wholeMillis returns Google's random_number_milliseconds: a whole number of milliseconds
// uniform in [0, j] (both ends included, as the GCS and Drive documents say "up to 1000 ms").
// A j under 1 ms is drawn continuously from [0, j).
func wholeMillis(j time.Duration, r float64) time.Duration {
	if j <= 0 {
		return 0
	}
	ms := int64(j / time.Millisecond)
	if ms == 0 {
		return mulSat(j, unit(r))
	}
	k := int64(unit(r) * float64(ms+1))
	return min(time.Duration(k)*time.Millisecond, j)
}

// retriesLeft reports whether retry number n (0-based) is allowed under a limit of max
// retries; max <= 0 means no limit.
func retriesLeft(n, max int) bool {
	return max <= 0 || n < max
}

// orDur returns v (a duration or a count), or def when v is 0. A negative v means "none" and returns 0.
func orDur[T time.Duration | int](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// orMult returns a multiplier v, or def when v is not positive (a multiplier of 0 or less
// would make every wait after the first zero, which no policy means).
func orMult(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return def
}
