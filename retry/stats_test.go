package retry_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// seeded returns a fixed-seed random source, so every run draws the same numbers.
func seeded(seed uint64) func() float64 {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)).Float64
}

// dist is the distribution a policy's formula gives for one Step: waits in [lo, hi] with the
// given mean and standard deviation.
type dist struct {
	lo, hi     time.Duration
	mean, sd   float64 // in nanoseconds
	hiIncluded bool    // a discrete top that draws can hit exactly
}

func uniformDist(lo, hi time.Duration) dist {
	w := float64(hi - lo)
	return dist{lo: lo, hi: hi, mean: float64(lo) + w/2, sd: w / math.Sqrt(12)}
}

// discreteDist is k*unit + off for k uniform in [0, n-1].
func discreteDist(off, unit time.Duration, n int) dist {
	m := float64(n)
	return dist{
		lo: off, hi: off + time.Duration(n-1)*unit,
		mean: float64(off) + float64(unit)*(m-1)/2, sd: float64(unit) * math.Sqrt((m*m-1)/12),
		hiIncluded: true,
	}
}

// TestJitterStatistics draws 10,000 waits per jittered policy with a fixed seed and checks the
// formula's bounds: every draw inside [lo, hi], the smallest and largest within 0.2% of the
// range of the ends (a miss has odds below e^-20), the mean within 4 standard errors.
func TestJitterStatistics(t *testing.T) {
	s := time.Second
	cases := []struct {
		name string
		p    retry.Policy
		step retry.Step
		d    dist
	}{
		{"gcs n=3", retry.GCS{}, retry.Step{N: 3}, discreteDist(8*s, ms, 1001)},
		{"gcs n=6 capped", retry.GCS{}, retry.Step{N: 6}, dist{lo: 32 * s, hi: 32 * s, mean: float64(32 * s)}},
		{"java n=4", retry.Java{}, retry.Step{N: 4}, uniformDist(1265625*time.Microsecond, 3796875*time.Microsecond)},
		{"java n=20 (interval capped)", retry.Java{}, retry.Step{N: 20}, uniformDist(30*s, 90*s)},
		{"drive n=2", retry.Drive{}, retry.Step{N: 2}, discreteDist(4*s, ms, 1001)},
		{"simpledb n=2", retry.SimpleDB{}, retry.Step{N: 2}, uniformDist(0, 6400*ms)},
		{"csma n=9", retry.CSMA{}, retry.Step{N: 9}, discreteDist(0, 100*ms, 1024)},
		{"csma n=2", retry.CSMA{}, retry.Step{N: 2}, discreteDist(0, 100*ms, 8)},
		{"full n=4", retry.FullJitter{Base: 100 * ms, Cap: 20 * s}, retry.Step{N: 4}, uniformDist(0, 1600*ms)},
		{"equal n=4", retry.EqualJitter{Base: 100 * ms, Cap: 20 * s}, retry.Step{N: 4}, uniformDist(800*ms, 1600*ms)},
		{"decorrelated prev=400ms", retry.Decorrelated{Base: 100 * ms, Cap: 20 * s}, retry.Step{N: 4, Prev: 400 * ms}, uniformDist(100*ms, 1200*ms)},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rnd := seeded(uint64(i + 1))
			const draws = 10000
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			var sum float64
			for range draws {
				st := c.step
				st.Rand = rnd()
				d, ok := c.p.Wait(st)
				if !ok {
					t.Fatalf("Wait(%+v) stopped", st)
				}
				lo, hi = min(lo, d), max(hi, d)
				sum += float64(d)
			}
			mean := sum / draws
			slack := time.Duration(0.002 * float64(c.d.hi-c.d.lo))
			if lo < c.d.lo || lo > c.d.lo+slack {
				t.Errorf("min %v, want in [%v, %v]", lo, c.d.lo, c.d.lo+slack)
			}
			top := c.d.hi
			if !c.d.hiIncluded && c.d.hi > c.d.lo {
				top-- // a half-open range: the top itself is never drawn
			}
			if hi > top || hi < c.d.hi-slack {
				t.Errorf("max %v, want in [%v, %v]", hi, c.d.hi-slack, top)
			}
			if tol := 4 * c.d.sd / math.Sqrt(draws); math.Abs(mean-c.d.mean) > tol {
				t.Errorf("mean %v, want %v ± %v", time.Duration(mean), time.Duration(c.d.mean), time.Duration(tol))
			}
			t.Logf("min %v max %v mean %v (formula: [%v, %v], mean %v)", lo, hi, time.Duration(mean), c.d.lo, c.d.hi, time.Duration(c.d.mean))
		})
	}
}
