package retry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/api/googleapi"

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

// Every attempt of one Do carries the same idempotency token; two Do calls
// carry two tokens; a token already in the context is kept.
func TestDoKeepsOneIdempotencyToken(t *testing.T) {
	r := &retry.Runner{Clock: retrytest.NewClock(), Rand: retrytest.Seeded(1)}
	var seen []string
	op := func(ctx context.Context) error {
		tok, ok := retry.IdempotencyToken(ctx)
		if !ok {
			t.Fatal("no token")
		}
		seen = append(seen, tok)
		if len(seen)%3 != 0 {
			return &googleapi.Error{Code: 503}
		}
		return nil
	}
	if err := r.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if err := r.Do(context.Background(), op); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 6 || seen[0] != seen[1] || seen[1] != seen[2] || seen[3] != seen[4] || seen[4] != seen[5] || seen[0] == seen[3] {
		t.Fatalf("tokens %q: want one per Do, the same on each attempt", seen)
	}
	if len(seen[0]) != 36 || seen[0][14] != '4' {
		t.Errorf("token %q is not a UUID v4", seen[0])
	}
	ctx := retry.WithIdempotencyToken(context.Background())
	want, _ := retry.IdempotencyToken(ctx)
	seen = nil
	r.Do(ctx, op)
	if seen[0] != want {
		t.Errorf("token %q, want the context's %q", seen[0], want)
	}
}
