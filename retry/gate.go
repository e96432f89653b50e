package retry

import (
	"context"
	"sync"
	"time"
)

// Gate is shared back-pressure: a retryable 429/503 seen by one runner delays the next attempt of
// every runner sharing the Gate. The zero value is ready to use.
//
// A Gate holds one "not before" time. A [Runner] whose attempt fails with a throttle error
// ([IsThrottle]) pushes it to the end of the wait it is about to sleep; every runner sharing the
// Gate waits for it before its next attempt ([Runner.Do] before every attempt, [Attempts.Retry]
// after its own wait, [Attempts.Wait] when the caller asks). So 32 parallel uploads to a
// throttled bucket pause together instead of each learning of the 429 on its own. Share one Gate
// per bucket (or per project, whatever the server throttles by). Safe for concurrent use.
type Gate struct {
	mu    sync.Mutex
	until time.Time
}

// Push moves the gate's not-before time to t, unless it is already later.
func (g *Gate) Push(t time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.until) {
		g.until = t
	}
}

// Until returns the gate's not-before time; the zero time if it was never pushed.
func (g *Gate) Until() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

// Wait sleeps on c (nil: real time) until the gate's not-before time has passed, reading it
// again after every sleep because another worker may have pushed it further meanwhile. It
// returns ctx.Err() at once when ctx ends.
func (g *Gate) Wait(ctx context.Context, c Clock) error {
	if c == nil {
		c = realClock{}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d := g.remaining(c.Now())
		if d <= 0 {
			return nil
		}
		if err := c.Sleep(ctx, d); err != nil {
			return err
		}
	}
}

// remaining is how long after now the gate stays closed; 0 or less when open.
func (g *Gate) remaining(now time.Time) time.Duration {
	if g == nil {
		return 0
	}
	u := g.Until()
	if u.IsZero() {
		return 0
	}
	return u.Sub(now)
}
