package retry

import (
	"fmt"
	"time"
)

// Error is the final error after retries ran out. Unwrap returns both Last and Ctx, so
// errors.Is(err, context.DeadlineExceeded) and errors.As(err, &*googleapi.Error) both work.
//
// Attempts and Elapsed count from [Runner.Begin] or the last [Attempts.Reset]: for a transfer
// that makes progress they describe the stretch without progress that ended it.
type Error struct {
	Attempts int
	Elapsed  time.Duration
	Last     error
	Ctx      error // ctx.Err() or context.DeadlineExceeded when the deadline ended it; nil if the count did
}

// Error reads "gave up after 5 attempts in 31.2s: <last cause>", with the context's error in
// parentheses when that is what ended it.
func (e *Error) Error() string {
	noun := "attempts"
	if e.Attempts == 1 {
		noun = "attempt"
	}
	s := fmt.Sprintf("gave up after %d %s in %v", e.Attempts, noun, roundElapsed(e.Elapsed))
	switch {
	case e.Ctx != nil && e.Last != nil:
		return fmt.Sprintf("%s (%v): %v", s, e.Ctx, e.Last)
	case e.Ctx != nil:
		return fmt.Sprintf("%s: %v", s, e.Ctx)
	case e.Last != nil:
		return fmt.Sprintf("%s: %v", s, e.Last)
	}
	return s
}

// Unwrap returns the causes that are set: Last, then Ctx.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Last, e.Ctx} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// roundElapsed keeps a message readable: tenths of a second from 1 s, milliseconds below.
func roundElapsed(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
