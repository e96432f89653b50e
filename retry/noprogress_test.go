package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// ErrNoProgress costs an attempt and a policy wait even under a classifier
// that retries nothing, and ends in the attempt budget like any failure.
func TestNoProgressAlwaysCounts(t *testing.T) {
	clk := retrytest.NewClock()
	r := &retry.Runner{MaxAttempts: 4, Clock: clk, Rand: retrytest.Fixed(0), Retryable: func(error) bool { return false }}
	calls := 0
	err := r.Do(context.Background(), func(context.Context) error {
		calls++
		return fmt.Errorf("%w: chunk at 0 kept nothing", retry.ErrNoProgress)
	})
	var re *retry.Error
	if !errors.As(err, &re) || re.Attempts != 4 || !errors.Is(err, retry.ErrNoProgress) || calls != 4 {
		t.Fatalf("err %v after %d calls, want a budget error after 4 attempts", err, calls)
	}
	if got := clk.Sleeps(); len(got) != 3 || got[0] != time.Second || got[2] != 4*time.Second {
		t.Fatalf("waits %v, want 1 s, 2 s, 4 s", got)
	}
	// Marked permanent by a caller, it is still not retried.
	if err := r.Do(context.Background(), func(context.Context) error { return retry.Permanent(errors.New("x")) }); err == nil || errors.As(err, &re) && re.Attempts > 1 {
		t.Fatalf("a permanent error was retried: %v", err)
	}
}
