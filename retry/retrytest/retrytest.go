// Package retrytest provides a fake clock and fixed random sources for testing code that uses
// package retry, so tests are exact and never sleep for real.
//
//	clock := retrytest.NewClock()
//	r := retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
//	// … run; then clock.Sleeps() lists every wait, and clock.Now() has moved by their sum.
package retrytest

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Epoch is where a Clock's time starts: a fixed instant, so times in tests are reproducible.
var Epoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// Clock is a fake retry.TimerClock whose Sleep returns at once after moving Now forward by
// the wait. Functions given to AfterFunc run, on the goroutine that moves the time, once
// Sleep or Advance has moved it past their due time. The zero value starts at Epoch. It is
// safe for concurrent use, but concurrent sleepers add up their waits (time is a single
// counter, not a scheduler).
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	timers []*timer
}

type timer struct {
	due  time.Time
	f    func()
	done bool
}

// AfterFunc calls f once the time has moved d past now; stop cancels it.
func (c *Clock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	t := &timer{due: c.nowLocked().Add(d), f: f}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.done
		t.done = true
		return was
	}
}

// advanceTo moves the time to target, stopping at each timer due on the way
// to run it (outside the lock: it may set new timers, which run too if due
// before target), as real time would.
func (c *Clock) advanceTo(target time.Time) {
	for {
		c.mu.Lock()
		var due *timer
		for _, t := range c.timers {
			if !t.done && !t.due.After(target) && (due == nil || t.due.Before(due.due)) {
				due = t
			}
		}
		if due == nil {
			c.timers = slicesDeleteDone(c.timers)
			if target.After(c.nowLocked()) {
				c.now = target
			}
			c.mu.Unlock()
			return
		}
		due.done = true
		if due.due.After(c.nowLocked()) {
			c.now = due.due
		}
		c.mu.Unlock()
		due.f()
	}
}

func slicesDeleteDone(ts []*timer) []*timer {
	out := ts[:0]
	for _, t := range ts {
		if !t.done {
			out = append(out, t)
		}
	}
	return out
}

// NewClock returns a Clock at Epoch.
func NewClock() *Clock { return &Clock{now: Epoch} }

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked()
}

func (c *Clock) nowLocked() time.Time {
	if c.now.IsZero() {
		c.now = Epoch
	}
	return c.now
}

// Sleep records d and advances the time by it, or returns ctx.Err() without either when ctx
// has ended, as a real sleep that was cancelled would.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	target := c.nowLocked().Add(max(d, 0))
	c.mu.Unlock()
	c.advanceTo(target)
	return nil
}

// Advance moves the time forward by d, as the work between sleeps would.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.nowLocked().Add(d)
	c.mu.Unlock()
	c.advanceTo(target)
}

// Sleeps returns a copy of every wait passed to Sleep, in order.
func (c *Clock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Slept returns the sum of the waits passed to Sleep.
func (c *Clock) Slept() time.Duration {
	var sum time.Duration
	for _, d := range c.Sleeps() {
		sum += d
	}
	return sum
}

// Fixed returns a random source that yields vs in order and then repeats the last one
// (0 if vs is empty). Safe for concurrent use.
func Fixed(vs ...float64) func() float64 {
	var mu sync.Mutex
	i := 0
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		if len(vs) == 0 {
			return 0
		}
		v := vs[min(i, len(vs)-1)]
		i++
		return v
	}
}

// Seeded returns a deterministic random source in [0, 1) seeded with seed. Safe for
// concurrent use.
func Seeded(seed uint64) func() float64 {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return r.Float64()
	}
}
