package retry

import "time"

// The AWS family, from Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog,
// 2015) and seed 004:
//
//	expo(n)      = min(Cap, Base * Multiplier^n)
//	Exponential  = expo(n)
//	FullJitter   = U[0, expo(n))
//	EqualJitter  = expo(n)/2 + U[0, expo(n)/2)
//	Decorrelated = min(Cap, U[Base, 3 * prev)),  prev = Step.Prev, or Base before the first retry
//
// n starts at 0 (Step.N), so the first retry of Exponential waits Base. The blog's simulator
// counts from 1; its experiment is reproduced in this package's tests by passing N = 1 for the
// first backoff. The defaults (Base 1 s, Cap 32 s) are GCS's scale, so switching from the
// default policy changes the shape of the jitter, not the order of magnitude of the waits.

// Exponential is capped exponential backoff without jitter: min(Cap, Base * Multiplier^n),
// n from 0. Every client that failed together retries together; it is here to compare with.
type Exponential struct {
	Base       time.Duration // the first wait; 0 means 1 s
	Multiplier float64       // growth per retry; 0 means 2
	Cap        time.Duration // the longest wait; 0 means 32 s
	MaxRetries int           // stop after that many retries; 0 means no limit of its own
}

func (p Exponential) resolved() Exponential {
	return Exponential{
		Base:       orDur(p.Base, time.Second),
		Multiplier: orMult(p.Multiplier, 2),
		Cap:        orDur(p.Cap, 32*time.Second),
		MaxRetries: max(p.MaxRetries, 0),
	}
}

func (p Exponential) expo(n int) time.Duration {
	return capAt(grow(p.Base, p.Multiplier, n), p.Cap)
}

// Wait implements [Policy].
func (p Exponential) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if !retriesLeft(s.N, p.MaxRetries) {
		return 0, false
	}
	return p.expo(s.N), true
}

// Limited implements [Limiter].
func (p Exponential) Limited() bool { return p.MaxRetries > 0 }

// FullJitter waits U[0, expo(n)): the least work for a contended server in the blog's
// experiment. Fields as in [Exponential].
type FullJitter Exponential

// Wait implements [Policy].
func (p FullJitter) Wait(s Step) (time.Duration, bool) {
	e := Exponential(p).resolved()
	if !retriesLeft(s.N, e.MaxRetries) {
		return 0, false
	}
	return uniform(0, e.expo(s.N), s.Rand), true
}

// Limited implements [Limiter].
func (p FullJitter) Limited() bool { return p.MaxRetries > 0 }

// EqualJitter waits expo(n)/2 + U[0, expo(n)/2): never less than half the exponential wait.
// Fields as in [Exponential].
type EqualJitter Exponential

// Wait implements [Policy].
func (p EqualJitter) Wait(s Step) (time.Duration, bool) {
	e := Exponential(p).resolved()
	if !retriesLeft(s.N, e.MaxRetries) {
		return 0, false
	}
	half := e.expo(s.N) / 2
	return uniform(half, 2*half, s.Rand), true
}

// Limited implements [Limiter].
func (p EqualJitter) Limited() bool { return p.MaxRetries > 0 }

// Decorrelated waits min(Cap, U[Base, 3*prev)), where prev is the wait it returned for the
// previous retry ([Step.Prev]) or Base before the first. It ignores n: the first retry waits
// U[Base, 3*Base).
type Decorrelated struct {
	Base       time.Duration // the shortest wait, and prev before the first retry; 0 means 1 s
	Cap        time.Duration // the longest wait; 0 means 32 s
	MaxRetries int           // stop after that many retries; 0 means no limit of its own
}

func (p Decorrelated) resolved() Decorrelated {
	return Decorrelated{
		Base:       orDur(p.Base, time.Second),
		Cap:        orDur(p.Cap, 32*time.Second),
		MaxRetries: max(p.MaxRetries, 0),
	}
}

// Wait implements [Policy].
func (p Decorrelated) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if !retriesLeft(s.N, p.MaxRetries) {
		return 0, false
	}
	prev := s.Prev
	if prev <= 0 {
		prev = p.Base
	}
	return capAt(uniform(p.Base, mulSat(prev, 3), s.Rand), p.Cap), true
}

// Limited implements [Limiter].
func (p Decorrelated) Limited() bool { return p.MaxRetries > 0 }

// Constant waits Delay before every retry (spec key "wait"). It is here for tests and for
// servers that say exactly when to come back; it does nothing against contention.
type Constant struct {
	// Delay is the wait before every retry. 0 means 1 s; negative means retry at once.
	Delay time.Duration
	// MaxRetries stops the policy after that many retries. 0 means no limit of its own.
	MaxRetries int
}

func (p Constant) resolved() Constant {
	return Constant{Delay: keepNone(p.Delay, time.Second), MaxRetries: max(p.MaxRetries, 0)}
}

// Wait implements [Policy].
func (p Constant) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if !retriesLeft(s.N, p.MaxRetries) {
		return 0, false
	}
	return max(p.Delay, 0), true
}

// Limited implements [Limiter].
func (p Constant) Limited() bool { return p.MaxRetries > 0 }
