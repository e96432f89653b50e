package retry_test

import (
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/internal/simulate"
)

// TestContentionSimulation replays the AWS blog's experiment ("Exponential Backoff And
// Jitter") with this package's policies: N clients (50 and 100) contend for one optimistic-
// concurrency record, messages take |Normal(10 ms, 2 ms)|, backoff base 5 ms and cap 2 s,
// averaged over 100 runs. It asserts the blog's findings at both N:
//
//   - every jittered policy needs far fewer calls and far less time than exponential without
//     jitter (at most 2/3 of its calls, at most 1/5 of its time);
//   - equal jitter does slightly more work than full jitter (0–10% more calls) and takes much
//     longer (at least 25% more time);
//   - decorrelated jitter finishes sooner than full jitter but with more calls.
//
// `go run ./retry/internal/cmd/backoffsim` prints the same table.
func TestContentionSimulation(t *testing.T) {
	cfg := simulate.Config{Runs: 100, Seed: 1}
	for _, n := range []int{50, 100} {
		cfg.Clients = n
		r := map[string]simulate.Result{}
		for _, p := range simulate.Blog()[1:] { // all but "No backoff", which the blog's claims do not involve
			r[p.Name] = simulate.Run(cfg, p)
			t.Logf("N=%d %-20s calls %6.0f  time %v", n, p.Name, r[p.Name].Calls, r[p.Name].Time.Round(time.Millisecond))
		}
		expo, full, equal, decor := r["Exponential"], r["Full jitter"], r["Equal jitter"], r["Decorrelated jitter"]
		for _, j := range []simulate.Result{full, equal, decor} {
			if j.Calls > expo.Calls*2/3 || j.Time > expo.Time/5 {
				t.Errorf("N=%d: %s (%.0f calls, %v) is not far below exponential (%.0f calls, %v)",
					n, j.Policy, j.Calls, j.Time, expo.Calls, expo.Time)
			}
		}
		if equal.Calls <= full.Calls || equal.Calls > full.Calls*1.10 {
			t.Errorf("N=%d: equal jitter %.0f calls, full %.0f: want slightly more", n, equal.Calls, full.Calls)
		}
		if equal.Time < full.Time*5/4 {
			t.Errorf("N=%d: equal jitter takes %v, full %v: want much longer", n, equal.Time, full.Time)
		}
		if decor.Time >= full.Time || decor.Calls <= full.Calls {
			t.Errorf("N=%d: decorrelated (%.0f calls, %v) vs full (%.0f calls, %v): want sooner, with more calls",
				n, decor.Calls, decor.Time, full.Calls, full.Time)
		}
	}
}

// TestSimulationModel checks the model itself on cases with a known answer.
func TestSimulationModel(t *testing.T) {
	none := simulate.Named{Name: "none", Policy: retry.Constant{Delay: -1}}
	// One client: one write, four messages of about 10 ms each.
	one := simulate.Run(simulate.Config{Clients: 1, Runs: 100, Seed: 9}, none)
	if one.Calls != 1 || one.Time < 38*ms || one.Time > 42*ms {
		t.Errorf("1 client: %.2f calls in %v; want 1 call in 40±2 ms", one.Calls, one.Time)
	}
	// Two clients: both read version 0, one write wins, the loser reads again and wins alone.
	two := simulate.Run(simulate.Config{Clients: 2, Runs: 100, Seed: 9}, none)
	if two.Calls != 3 {
		t.Errorf("2 clients: %.2f calls per run, want exactly 3", two.Calls)
	}
	// The policies see the blog's numbering: the first backoff is N = 1, Prev is what the
	// policy returned last, and Rand is in [0, 1).
	rec := &recorder{p: retry.Decorrelated{Base: 5 * ms, Cap: 2 * time.Second}}
	simulate.Run(simulate.Config{Clients: 1 + 1, Runs: 1, Seed: 9}, simulate.Named{Name: "rec", Policy: rec})
	if len(rec.steps) != 1 || rec.steps[0].N != 1 || rec.steps[0].Prev != 0 || rec.steps[0].Rand < 0 || rec.steps[0].Rand >= 1 {
		t.Errorf("steps %+v, want one step with N=1, Prev=0", rec.steps)
	}
	rec = &recorder{p: retry.FullJitter{Base: 5 * ms, Cap: 2 * time.Second}}
	simulate.Run(simulate.Config{Clients: 20, Runs: 1, Seed: 9}, simulate.Named{Name: "rec", Policy: rec})
	last := map[int]time.Duration{}
	for _, s := range rec.steps {
		if s.N < 1 || s.Rand < 0 || s.Rand >= 1 {
			t.Fatalf("bad step %+v", s)
		}
		if s.N > 1 && s.Prev == 0 && last[s.N-1] == 0 {
			t.Fatalf("step %+v without a previous wait", s)
		}
		last[s.N] = s.Prev
	}
}

// recorder is a Policy that records the Steps it is given.
type recorder struct {
	p     retry.Policy
	steps []retry.Step
}

func (r *recorder) Wait(s retry.Step) (time.Duration, bool) {
	r.steps = append(r.steps, s)
	return r.p.Wait(s)
}
