package retry_test

import (
	"testing"

	"github.com/gcsput/gcsput/retry"
)

// Budget is the count an OnRetry's Event.MaxAttempts carries: MaxAttempts,
// else the policy's own rule (0: no count), else DefaultMaxAttempts; a
// negative MaxAttempts is no count.
func TestRunnerBudget(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    *retry.Runner
		want int
	}{
		{"nil runner", nil, retry.DefaultMaxAttempts},
		{"zero runner", &retry.Runner{}, retry.DefaultMaxAttempts},
		{"explicit", &retry.Runner{MaxAttempts: 3, Policy: retry.Drive{MaxRetries: 5}}, 3},
		{"policy with its own stop rule", &retry.Runner{Policy: retry.Drive{MaxRetries: 5}}, 0},
		{"policy without one", &retry.Runner{Policy: retry.Exponential{}}, retry.DefaultMaxAttempts},
		{"no count", &retry.Runner{MaxAttempts: -1}, 0},
	} {
		if got := tt.r.Budget(); got != tt.want {
			t.Errorf("%s: Budget() = %d, want %d", tt.name, got, tt.want)
		}
	}
}
