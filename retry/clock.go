package retry

import (
	"context"
	"time"
)

// Clock is the time seam. nil in a Runner means real time.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error // returns ctx.Err() at once when ctx ends
}

// realClock is the Clock a nil Runner.Clock stands for.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends, whichever is first; a timer, not time.Sleep, so that a
// cancelled context ends the wait at once.
func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
