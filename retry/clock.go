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

// A TimerClock is a Clock that can also call a function once a duration has passed: what a
// watchdog needs (see resumable.Options.Clock). AfterFunc returns a function that cancels
// the call and reports whether it did, as time.Timer.Stop does.
type TimerClock interface {
	Clock
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// RealClock is real time, the Clock a nil Runner.Clock stands for.
var RealClock TimerClock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

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
