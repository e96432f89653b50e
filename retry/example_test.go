package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
	"google.golang.org/api/googleapi"
)

// A request that fails twice with 503 and then succeeds, on a fake clock: the waits are GCS's
// 2^n s plus random_number_milliseconds (here always 500 ms).
func ExampleRunner_Do() {
	clock := retrytest.NewClock()
	r := &retry.Runner{
		Clock: clock,
		Rand:  retrytest.Fixed(0.5),
		OnRetry: func(e retry.Event) {
			fmt.Printf("retry %d/%d in %v: %v\n", e.Attempt, e.MaxAttempts, e.Wait, e.Err)
		},
	}
	calls := 0
	err := r.Do(context.Background(), func(ctx context.Context) error {
		calls++
		if calls < 3 {
			return &googleapi.Error{Code: http.StatusServiceUnavailable, Message: "Backend Error"}
		}
		return nil
	})
	fmt.Println("err:", err, "calls:", calls, "slept:", clock.Slept())
	// Output:
	// retry 1/12 in 1.5s: googleapi: Error 503: Backend Error
	// retry 2/12 in 2.5s: googleapi: Error 503: Backend Error
	// err: <nil> calls: 3 slept: 4s
}

// When the budget runs out, the error says how many attempts over how long, and still
// matches the server's error.
func ExampleError() {
	r := &retry.Runner{Clock: retrytest.NewClock(), Rand: retrytest.Fixed(0), MaxAttempts: 4}
	err := r.Do(context.Background(), func(ctx context.Context) error {
		return &googleapi.Error{Code: http.StatusTooManyRequests, Message: "rate limit"}
	})
	var ge *googleapi.Error
	fmt.Println(err)
	fmt.Println(errors.As(err, &ge), ge.Code)
	// Output:
	// gave up after 4 attempts in 7s: googleapi: Error 429: rate limit
	// true 429
}

func ExampleParse() {
	for _, spec := range []string{"gcs:max=64s", "decorrelated:base=100ms,cap=20s", "gcs:cap=20s"} {
		p, err := retry.Parse(spec)
		if err != nil {
			fmt.Println(err)
			continue
		}
		first, _ := p.Wait(retry.Step{N: 0, Rand: 0.5})
		fmt.Printf("%v  (first wait at Rand 0.5: %v)\n", p, first)
	}
	// Output:
	// gcs:initial=1s,multiplier=2,max=1m4s,jitter=1s,retries=0  (first wait at Rand 0.5: 1.5s)
	// decorrelated:base=100ms,cap=20s,retries=0  (first wait at Rand 0.5: 200ms)
	// retry: bad policy spec "gcs:cap=20s": "cap": unknown key for gcs; valid keys: initial, multiplier, max, jitter, retries
}

// A chunked upload: each acknowledged chunk resets the budget, so the transfer is bounded by
// attempts and time without progress, not in total.
func ExampleRunner_Begin() {
	clock := retrytest.NewClock()
	r := &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0), MaxAttempts: 3}
	ctx := context.Background()
	failures := map[int]int{1: 2, 3: 2} // chunk → how many times it fails first
	a := r.Begin()
	for chunk := 0; chunk < 5; {
		if failures[chunk] > 0 {
			failures[chunk]--
			if err := a.Retry(ctx, &googleapi.Error{Code: 503}); err != nil {
				fmt.Println(err)
				return
			}
			continue
		}
		chunk++
		a.Reset() // the server acknowledged progress
	}
	fmt.Println("attempts:", a.Count(), "waits:", clock.Sleeps())
	// Output:
	// attempts: 9 waits: [1s 2s 1s 2s]
}
