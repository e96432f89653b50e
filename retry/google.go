package retry

import (
	"math"
	"time"
)

// GCS is Google Cloud Storage's truncated exponential backoff, the package's default:
//
//	wait(n) = min(Initial * Multiplier^n + random_number_milliseconds, Max)
//
// n starts at 0, so with the defaults the first retry waits 1–2 s, the second 2–3 s, the third
// 4–5 s, and from n = 5 on every retry waits Max (32 s). random_number_milliseconds is a whole
// number of milliseconds uniform in [0, Jitter], drawn anew for every retry from [Step.Rand].
// Google's document lets a client keep retrying at Max "until a maximum number of retries";
// GCS itself never stops, so the [Runner]'s MaxAttempts and Deadline end it unless MaxRetries
// is set.
type GCS struct {
	// Initial is the 2^0 term: the first retry waits Initial plus the jitter. 0 means 1 s.
	Initial time.Duration
	// Multiplier is the growth per retry. 0 means 2.
	Multiplier float64
	// Max is Google's maximum_backoff, the cap on the whole wait (jitter included).
	// 0 means 32 s; 64 s is the other value Google's document names.
	Max time.Duration
	// Jitter is the largest random_number_milliseconds. 0 means 1 s; negative means none.
	Jitter time.Duration
	// MaxRetries stops the policy after that many retries. 0 means no limit of its own.
	MaxRetries int
}

func (p GCS) resolved() GCS {
	return GCS{
		Initial:    orDur(p.Initial, time.Second),
		Multiplier: orMult(p.Multiplier, 2),
		Max:        orDur(p.Max, 32*time.Second),
		Jitter:     keepNone(p.Jitter, time.Second),
		MaxRetries: max(p.MaxRetries, 0),
	}
}

// Wait implements [Policy].
func (p GCS) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if !retriesLeft(s.N, p.MaxRetries) {
		return 0, false
	}
	d := addSat(grow(p.Initial, p.Multiplier, s.N), wholeMillis(p.Jitter, s.Rand))
	return capAt(d, p.Max), true
}

// Limited implements [Limiter]: a GCS policy stops on its own only when MaxRetries is set.
func (p GCS) Limited() bool { return p.MaxRetries > 0 }

// Java is the Google HTTP Client Library for Java's ExponentialBackOff:
//
//	interval(n) = min(Initial * Multiplier^n, MaxInterval)
//	wait(n)     = interval(n) * U[1 - Randomization, 1 + Randomization)
//
// n starts at 0, so with the defaults the intervals are 0.50, 0.75, 1.12, 1.69, 2.53, 3.80,
// 5.70, 8.54, 12.81, 19.22 s … and the first wait is in [0.25, 0.75). MaxInterval caps the
// interval, not the wait, so a randomized wait can reach 1.5 × 60 s = 90 s. The stop rule is a
// time rule, not a count: once [Step.Elapsed] (time since the first attempt or the last
// [Attempts.Reset]) exceeds MaxElapsed, Wait returns ok=false. Java multiplies whole
// milliseconds; this formula is exact, which is what the seed's table shows.
type Java struct {
	// Initial is the first interval. 0 means 500 ms.
	Initial time.Duration
	// Multiplier is the interval's growth per retry. 0 means 1.5.
	Multiplier float64
	// Randomization is the factor r of U[1-r, 1+r). 0 means 0.5; negative means none;
	// values above 1 count as 1, so a wait is never negative.
	Randomization float64
	// MaxInterval caps the interval before randomization. 0 means 60 s.
	MaxInterval time.Duration
	// MaxElapsed is the time after which the policy says stop. 0 means 15 minutes;
	// negative means never (the Runner's Deadline still applies).
	MaxElapsed time.Duration
}

func (p Java) resolved() Java {
	return Java{
		Initial:       orDur(p.Initial, 500*time.Millisecond),
		Multiplier:    orMult(p.Multiplier, 1.5),
		Randomization: keepNoneNum(min(p.Randomization, 1), 0.5),
		MaxInterval:   orDur(p.MaxInterval, 60*time.Second),
		MaxElapsed:    keepNone(p.MaxElapsed, 15*time.Minute),
	}
}

// Interval returns the n-th interval before randomization (n from 0).
func (p Java) Interval(n int) time.Duration {
	p = p.resolved()
	return capAt(grow(p.Initial, p.Multiplier, n), p.MaxInterval)
}

// Wait implements [Policy].
func (p Java) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if p.MaxElapsed >= 0 && s.Elapsed > p.MaxElapsed {
		return 0, false
	}
	iv := p.Interval(s.N)
	r := max(p.Randomization, 0)
	lo, hi := mulSat(iv, 1-r), mulSat(iv, 1+r)
	return uniform(lo, hi, s.Rand), true
}

// Limited implements [Limiter]: Java's max elapsed time is its own stop rule.
func (p Java) Limited() bool { return p.MaxElapsed >= 0 }

// Drive is the Google Drive API's documented exponential backoff:
//
//	wait(n) = Initial * Multiplier^n + random_number_milliseconds
//
// n starts at 0: the waits are 1, 2, 4, 8 and 16 s plus up to 1000 ms, and the sixth would-be
// retry is a stop (Wait returns ok=false for n >= MaxRetries). There is no cap.
type Drive struct {
	// Initial is the 2^0 term. 0 means 1 s.
	Initial time.Duration
	// Multiplier is the growth per retry. 0 means 2.
	Multiplier float64
	// Jitter is the largest random_number_milliseconds. 0 means 1 s; negative means none.
	Jitter time.Duration
	// MaxRetries is the number of retries allowed. 0 means 5; negative means no limit.
	MaxRetries int
}

// resolved takes GCS's defaults for the terms the two policies share.
func (p Drive) resolved() Drive {
	g := GCS{Initial: p.Initial, Multiplier: p.Multiplier, Jitter: p.Jitter}.resolved()
	return Drive{Initial: g.Initial, Multiplier: g.Multiplier, Jitter: g.Jitter, MaxRetries: keepNone(p.MaxRetries, 5)}
}

// Wait implements [Policy]: GCS's formula without its cap, stopped by Drive's own retry limit.
func (p Drive) Wait(s Step) (time.Duration, bool) {
	if !retriesLeft(s.N, keepNone(p.MaxRetries, 5)) {
		return 0, false
	}
	return GCS{Initial: p.Initial, Multiplier: p.Multiplier, Jitter: p.Jitter, Max: math.MaxInt64}.Wait(s)
}

// Limited implements [Limiter]: Drive stops after MaxRetries unless that is negative.
func (p Drive) Limited() bool { return p.MaxRetries >= 0 }

// keepNone resolves a duration or count whose 0 means def and whose negative means "none"; unlike
// orDur it keeps the negative, so that a resolved value still says "none" rather than 0
// (which would mean the default again).
func keepNone[T time.Duration | int](v, def T) T {
	if v == 0 {
		return def
	}
	return max(v, -1)
}

// keepNoneNum is keepNone for a factor.
func keepNoneNum(v, def float64) float64 {
	if v == 0 || v != v { // NaN means default too
		return def
	}
	return max(v, -1)
}
