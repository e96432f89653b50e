package resumable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// ErrStalled is matched (errors.Is) by a [StallError].
var ErrStalled = errors.New("resumable: transfer stalled")

// StallError reports an attempt abandoned by the stall watchdog: no bytes
// moved for Idle. It is a timeout (it implements net.Error), so the default
// retry classification retries it; the upload then queries the server's
// offset and continues from there.
type StallError struct {
	Op   string        // the step that stalled: "chunk", "status", "download", …
	Idle time.Duration // how long nothing moved
}

func (e *StallError) Error() string {
	return fmt.Sprintf("resumable: %s stalled: no bytes moved for %v", e.Op, e.Idle)
}

func (e *StallError) Is(target error) bool { return target == ErrStalled }

// Timeout and Temporary make StallError a net.Error that reports a timeout.
func (e *StallError) Timeout() bool   { return true }
func (e *StallError) Temporary() bool { return true }

// watchdog cancels one attempt's context when no bytes have moved for
// timeout. Time spent reading the source or writing the destination (between
// pause and resume) does not count: a slow disk is not a stalled network.
// A nil *watchdog is disabled; all its methods are no-ops.
type watchdog struct {
	timeout time.Duration
	clock   retry.TimerClock
	parent  context.Context
	cancel  context.CancelFunc

	mu      sync.Mutex
	last    time.Time // when bytes last moved
	paused  bool
	fired   bool
	stopped bool
	stopT   func() bool // cancels the pending check
}

// startWatchdog returns a context for one attempt, cancelled when the attempt
// stalls, and the watchdog, which the caller must stop. timeout <= 0 disables it.
func startWatchdog(ctx context.Context, timeout time.Duration, clock retry.TimerClock) (context.Context, *watchdog) {
	if timeout <= 0 {
		return ctx, nil
	}
	attempt, cancel := context.WithCancel(ctx)
	w := &watchdog{timeout: timeout, clock: clock, parent: ctx, cancel: cancel, last: clock.Now()}
	w.mu.Lock()
	w.stopT = clock.AfterFunc(timeout, w.check)
	w.mu.Unlock()
	return attempt, w
}

// check runs when the timer fires: cancel if idle long enough, else re-arm
// for the remaining time.
func (w *watchdog) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	idle := w.clock.Now().Sub(w.last)
	switch {
	case w.paused:
		w.stopT = w.clock.AfterFunc(w.timeout, w.check)
	case idle >= w.timeout:
		w.fired = true
		w.cancel()
	default:
		w.stopT = w.clock.AfterFunc(w.timeout-idle, w.check)
	}
}

// moved records progress: bytes just moved.
func (w *watchdog) moved() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.last = w.clock.Now()
	w.mu.Unlock()
}

// pause stops the idle clock while local I/O runs; resume restarts it.
func (w *watchdog) pause() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.paused = true
	w.mu.Unlock()
}

func (w *watchdog) resume() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.paused, w.last = false, w.clock.Now()
	w.mu.Unlock()
}

// stop ends the watchdog and releases its context. It returns a
// *StallError for op if the watchdog cancelled the attempt (and the caller's
// context is still live), else err.
func (w *watchdog) stop(op string, err error) error {
	if w == nil {
		return err
	}
	w.mu.Lock()
	w.stopped = true
	fired := w.fired
	stopT := w.stopT
	w.mu.Unlock()
	stopT()
	w.cancel()
	if fired && err != nil && w.parent.Err() == nil {
		return &StallError{Op: op, Idle: w.timeout}
	}
	return err
}
