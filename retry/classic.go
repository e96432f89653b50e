package retry

import (
	"math"
	"time"
)

// SimpleDB is the backoff of Amazon's SimpleDB article:
//
//	wait(n) = U[0, 1) * Base * Multiplier^n,  n = Step.N + 1
//
// n starts at 1, as in the seed's table: the first retry waits [0, 400 ms), then [0, 1.6 s),
// [0, 6.4 s), [0, 25.6 s), [0, 102.4 s). There is no cap unless Cap is set.
type SimpleDB struct {
	// Base is the 100 ms of the formula. 0 means 100 ms.
	Base time.Duration
	// Multiplier is the growth per retry. 0 means 4.
	Multiplier float64
	// Cap is the longest wait. 0 means none.
	Cap time.Duration
	// MaxRetries stops the policy after that many retries. 0 means no limit of its own.
	MaxRetries int
}

func (p SimpleDB) resolved() SimpleDB {
	return SimpleDB{
		Base:       orDur(p.Base, 100*time.Millisecond),
		Multiplier: orMult(p.Multiplier, 4),
		Cap:        max(p.Cap, 0),
		MaxRetries: max(p.MaxRetries, 0),
	}
}

// Wait implements [Policy].
func (p SimpleDB) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	if !retriesLeft(s.N, p.MaxRetries) {
		return 0, false
	}
	hi := grow(p.Base, p.Multiplier, max(s.N, 0)+1)
	return capAt(uniform(0, hi, s.Rand), p.Cap), true
}

// Limited implements [Limiter].
func (p SimpleDB) Limited() bool { return p.MaxRetries > 0 }

// CSMA is Ethernet's (CSMA/CD) truncated binary exponential backoff:
//
//	c       = Step.N + 1               (collisions so far: the first retry follows collision 1)
//	k       = uniform integer in [0, 2^min(c, Limit) - 1]
//	wait(n) = k * Slot
//
// so the first retry picks k from [0, 1], the second from [0, 3], the tenth and every later one
// from [0, 1023] (the seed: "whether the failure count is 10 or 16, pick from [0, 1023]"). After
// Attempts failed attempts the policy gives up: with the default 16, Wait returns ok=false for
// Step.N = 15, so a Runner makes exactly 16 attempts.
type CSMA struct {
	// Slot is the unit of wait. 0 means 100 ms: Ethernet's slot is 51.2 µs (512 bit times at
	// 10 Mb/s), which is far too short between HTTP requests, so the default is about one
	// request's round trip instead.
	Slot time.Duration
	// Limit is the collision count after which the range stops growing. 0 means 10.
	Limit int
	// Attempts is the number of attempts after which the policy gives up. 0 means 16.
	Attempts int
}

func (p CSMA) resolved() CSMA {
	return CSMA{
		Slot:     orDur(p.Slot, 100*time.Millisecond),
		Limit:    min(orDur(p.Limit, 10), 62),
		Attempts: orDur(p.Attempts, 16),
	}
}

// Wait implements [Policy].
func (p CSMA) Wait(s Step) (time.Duration, bool) {
	p = p.resolved()
	c := max(s.N, 0) + 1
	if p.Attempts > 0 && c >= p.Attempts {
		return 0, false
	}
	slots := math.Exp2(float64(min(c, p.Limit))) // 2^min(c, Limit) choices: k in [0, slots-1]
	k := math.Floor(unit(s.Rand) * slots)
	return mulSat(p.Slot, k), true
}

// Limited implements [Limiter]: CSMA/CD always gives up after Attempts.
func (p CSMA) Limited() bool { return p.Attempts >= 0 }
