package retry_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/retry"
)

// justUnder1 is the largest Rand a policy can see: the top of every [lo, hi) range.
var justUnder1 = math.Nextafter(1, 0)

type waitCase struct {
	step retry.Step
	want time.Duration
	ok   bool
}

func checkWaits(t *testing.T, p retry.Policy, cases []waitCase) {
	t.Helper()
	for _, c := range cases {
		got, ok := p.Wait(c.step)
		if got != c.want || ok != c.ok {
			t.Errorf("%v.Wait(%+v) = %v, %v; want %v, %v", p, c.step, got, ok, c.want, c.ok)
		}
	}
}

const ms = time.Millisecond

func TestGCSExact(t *testing.T) {
	s := time.Second
	checkWaits(t, retry.GCS{}, []waitCase{
		// "wait 1 + random_number_milliseconds seconds, 2 + …, 4 + …": n starts at 0.
		{retry.Step{N: 0, Rand: 0}, 1 * s, true},
		{retry.Step{N: 0, Rand: 0.5}, 1*s + 500*ms, true}, // floor(0.5 * 1001) ms
		{retry.Step{N: 0, Rand: justUnder1}, 2 * s, true}, // 1000 ms is included
		{retry.Step{N: 1, Rand: 0}, 2 * s, true},
		{retry.Step{N: 2, Rand: 0.25}, 4*s + 250*ms, true},
		{retry.Step{N: 3, Rand: 0.999}, 8*s + 999*ms, true},
		{retry.Step{N: 4, Rand: justUnder1}, 17 * s, true},
		// From n = 5, 2^n s alone reaches maximum_backoff: every later retry waits 32 s.
		{retry.Step{N: 5, Rand: 0}, 32 * s, true},
		{retry.Step{N: 5, Rand: 0.7}, 32 * s, true},
		{retry.Step{N: 40, Rand: 0.3}, 32 * s, true},
		{retry.Step{N: math.MaxInt32, Rand: 0.3}, 32 * s, true}, // saturates, no overflow
		{retry.Step{N: -3, Rand: 0}, 1 * s, true},               // nonsense n counts as 0
		{retry.Step{N: 2, Rand: 7}, 5 * s, true},                // Rand outside [0,1) is clamped
		{retry.Step{N: 2, Rand: math.NaN()}, 4 * s, true},
	})
	checkWaits(t, retry.GCS{Max: 64 * s, MaxRetries: 7}, []waitCase{
		{retry.Step{N: 5, Rand: 0.5}, 32*s + 500*ms, true},
		{retry.Step{N: 6, Rand: 0}, 64 * s, true},
		{retry.Step{N: 6, Rand: 0.5}, 64 * s, true},
		{retry.Step{N: 7, Rand: 0}, 0, false}, // the 8th retry is past MaxRetries
	})
	checkWaits(t, retry.GCS{Jitter: -1, Initial: 250 * ms, Multiplier: 3}, []waitCase{
		{retry.Step{N: 0, Rand: 0.9}, 250 * ms, true},
		{retry.Step{N: 2, Rand: 0.9}, 2250 * ms, true},
	})
	if retry.Default() != retry.Policy(retry.GCS{Initial: s, Multiplier: 2, Max: 32 * s, Jitter: s}) {
		t.Errorf("Default() = %#v", retry.Default())
	}
}

// TestGCSBounds states the document's rule for waits 0…N: min(2^n s + [0, 1000] ms, max).
func TestGCSBounds(t *testing.T) {
	for _, max := range []time.Duration{32 * time.Second, 64 * time.Second} {
		p := retry.GCS{Max: max}
		for n := 0; n <= 12; n++ {
			lo, _ := p.Wait(retry.Step{N: n, Rand: 0})
			hi, _ := p.Wait(retry.Step{N: n, Rand: justUnder1})
			base := time.Duration(1<<n) * time.Second
			if lo != min(base, max) || hi != min(base+time.Second, max) {
				t.Errorf("max %v n=%d: range [%v, %v], want [%v, %v]", max, n, lo, hi, min(base, max), min(base+time.Second, max))
			}
		}
	}
}

// The seed's table of the Java client's intervals and randomized ranges (seed 002), request 1…10.
const javaSeedTable = `01      00.50          [0.25, 0.75]
02      00.75          [0.38, 1.12]
03      01.12          [0.56, 1.69]
04      01.69          [0.84, 2.53]
05      02.53          [1.27, 3.80]
06      03.80          [1.90, 5.70]
07      05.70          [2.85, 8.54]
08      08.54          [4.27, 12.81]
09      12.81          [6.41, 19.22]
10      19.22          STOP`

func TestJavaSeedTable(t *testing.T) {
	p := retry.Java{}
	var b strings.Builder
	for n := 0; n < 10; n++ {
		iv := p.Interval(n)
		rng := "STOP"
		if n < 9 {
			lo, _ := p.Wait(retry.Step{N: n, Rand: 0})
			hi, _ := p.Wait(retry.Step{N: n, Rand: justUnder1})
			rng = fmt.Sprintf("[%.2f, %.2f]", lo.Seconds(), hi.Seconds())
		}
		fmt.Fprintf(&b, "%02d      %05.2f          %s\n", n+1, iv.Seconds(), rng)
	}
	if got := strings.TrimSpace(b.String()); got != javaSeedTable {
		t.Errorf("Java table:\n%s\nwant (seed 002):\n%s", got, javaSeedTable)
	}
	// The seed is the spec: when it sits beside the repository (as in CI), check that the
	// table above is copied from it faithfully.
	if seed, err := os.ReadFile(filepath.Join("..", "..", "shared", "seeds", "002_d7e369e650637535.txt")); err == nil {
		for _, line := range strings.Split(javaSeedTable, "\n") {
			if !strings.Contains(string(seed), line) {
				t.Errorf("seed 002 has no line %q", line)
			}
		}
	}
}

func TestJavaExact(t *testing.T) {
	checkWaits(t, retry.Java{}, []waitCase{
		{retry.Step{N: 0, Rand: 0.5}, 500 * ms, true}, // the middle of the range is the interval
		{retry.Step{N: 0, Rand: 0}, 250 * ms, true},
		{retry.Step{N: 3, Rand: 0.5}, 1687500 * time.Microsecond, true},
		// The cap applies to the interval (60 s), so a randomized wait reaches 30…90 s.
		{retry.Step{N: 30, Rand: 0}, 30 * time.Second, true},
		{retry.Step{N: 30, Rand: 0.5}, 60 * time.Second, true},
		{retry.Step{N: 30, Rand: justUnder1}, 90*time.Second - 1, true},
		// The stop rule is time: a high N alone never stops it ...
		{retry.Step{N: 500, Elapsed: 15 * time.Minute, Rand: 0.5}, 60 * time.Second, true},
		// ... elapsed time beyond 15 minutes does, whatever N is.
		{retry.Step{N: 0, Elapsed: 15*time.Minute + 1, Rand: 0.5}, 0, false},
	})
	checkWaits(t, retry.Java{Randomization: -1, MaxElapsed: -1}, []waitCase{
		{retry.Step{N: 2, Rand: 0.9}, 1125 * ms, true},
		{retry.Step{N: 2, Elapsed: 100 * time.Hour}, 1125 * ms, true},
	})
}

// TestJavaStopsOnTime replays the seed's setting (max elapsed 15 s) with instant attempts and
// each wait at its interval: the policy stops when the elapsed time passes 15 s, after the 7th
// wait (0.5+0.75+…+5.70 = 16.09 s), not at a fixed count.
func TestJavaStopsOnTime(t *testing.T) {
	p := retry.Java{MaxElapsed: 15 * time.Second}
	var elapsed time.Duration
	var waits []string
	for n := 0; ; n++ {
		d, ok := p.Wait(retry.Step{N: n, Elapsed: elapsed, Rand: 0.5})
		if !ok {
			break
		}
		elapsed += d
		waits = append(waits, fmt.Sprintf("%.2f", d.Seconds()))
	}
	want := "0.50 0.75 1.12 1.69 2.53 3.80 5.70"
	if got := strings.Join(waits, " "); got != want || elapsed != 160859375*100*time.Nanosecond {
		t.Errorf("waits %s (elapsed %v), want %s (16.0859375s)", got, elapsed, want)
	}
}

func TestDriveSeed(t *testing.T) {
	// Seed 002: request 1…5 wait 2^N s + [0, 1000] ms, request 6 is STOP. (The seed's upper
	// column, 1002, 1003 …, mixes units; the Drive document's rule is 2^n s + up to 1000 ms.)
	p := retry.Drive{}
	for n := 0; n < 5; n++ {
		lo, ok1 := p.Wait(retry.Step{N: n, Rand: 0})
		hi, ok2 := p.Wait(retry.Step{N: n, Rand: justUnder1})
		want := time.Duration(1<<n) * time.Second
		if !ok1 || !ok2 || lo != want || hi != want+time.Second {
			t.Errorf("request %d: [%v, %v] %v %v, want [%v, %v]", n+1, lo, hi, ok1, ok2, want, want+time.Second)
		}
	}
	checkWaits(t, p, []waitCase{
		{retry.Step{N: 2, Rand: 0.5}, 4*time.Second + 500*ms, true},
		{retry.Step{N: 5, Rand: 0}, 0, false},
		{retry.Step{N: 6, Rand: 0}, 0, false},
	})
	checkWaits(t, retry.Drive{MaxRetries: -1}, []waitCase{{retry.Step{N: 6, Rand: 0}, 64 * time.Second, true}})
}

func TestSimpleDBSeed(t *testing.T) {
	// Seed 002: request 1…5 wait [0, 400), [0, 1600), [0, 6400), [0, 25600), [0, 102400) ms.
	his := []time.Duration{400 * ms, 1600 * ms, 6400 * ms, 25600 * ms, 102400 * ms}
	for n, hi := range his {
		checkWaits(t, retry.SimpleDB{}, []waitCase{
			{retry.Step{N: n, Rand: 0}, 0, true},
			{retry.Step{N: n, Rand: 0.5}, hi / 2, true},
			{retry.Step{N: n, Rand: justUnder1}, hi - 1, true}, // the top is excluded
		})
	}
	checkWaits(t, retry.SimpleDB{Cap: time.Second, MaxRetries: 3}, []waitCase{
		{retry.Step{N: 2, Rand: 0.5}, time.Second, true},
		{retry.Step{N: 3, Rand: 0.5}, 0, false},
	})
}

func TestCSMASeed(t *testing.T) {
	slot := 51200 * time.Nanosecond // Ethernet's 512 bit times at 10 Mb/s
	p := retry.CSMA{Slot: slot}
	checkWaits(t, p, []waitCase{
		// First retry (1 collision): k in [0, 1].
		{retry.Step{N: 0, Rand: 0.49}, 0, true},
		{retry.Step{N: 0, Rand: 0.5}, slot, true},
		{retry.Step{N: 0, Rand: justUnder1}, slot, true},
		// Second: k in [0, 3].
		{retry.Step{N: 1, Rand: justUnder1}, 3 * slot, true},
		{retry.Step{N: 1, Rand: 0.5}, 2 * slot, true},
		// Truncated at 10: whether the count is 10 or 15, k in [0, 1023].
		{retry.Step{N: 9, Rand: justUnder1}, 1023 * slot, true},
		{retry.Step{N: 14, Rand: justUnder1}, 1023 * slot, true},
		{retry.Step{N: 14, Rand: 0.5}, 512 * slot, true},
		// The 16th attempt failed: give up.
		{retry.Step{N: 15, Rand: 0.5}, 0, false},
	})
	if got, _ := p.Wait(retry.Step{N: 12, Rand: justUnder1}); got != 52377600*time.Nanosecond {
		t.Errorf("longest wait %v, want 52.3776ms", got)
	}
	checkWaits(t, retry.CSMA{}, []waitCase{{retry.Step{N: 2, Rand: 0.5}, 400 * ms, true}})
	checkWaits(t, retry.CSMA{Limit: 2, Attempts: 4}, []waitCase{
		{retry.Step{N: 2, Rand: justUnder1}, 300 * ms, true},
		{retry.Step{N: 3, Rand: 0}, 0, false},
	})
}

func TestAWSJitterExact(t *testing.T) {
	base, capd := 5*ms, 2*time.Second
	checkWaits(t, retry.Exponential{Base: base, Cap: capd}, []waitCase{
		{retry.Step{N: 0, Rand: 0.7}, 5 * ms, true},
		{retry.Step{N: 3, Rand: 0.7}, 40 * ms, true},
		{retry.Step{N: 8, Rand: 0.7}, 1280 * ms, true},
		{retry.Step{N: 9, Rand: 0.7}, 2 * time.Second, true},
		{retry.Step{N: 1000, Rand: 0.7}, 2 * time.Second, true},
	})
	checkWaits(t, retry.FullJitter{Base: base, Cap: capd}, []waitCase{
		{retry.Step{N: 0, Rand: 0.5}, 2500 * time.Microsecond, true},
		{retry.Step{N: 3, Rand: 0}, 0, true},
		{retry.Step{N: 3, Rand: 0.25}, 10 * ms, true},
		{retry.Step{N: 3, Rand: justUnder1}, 40*ms - 1, true},
		{retry.Step{N: 20, Rand: 0.5}, time.Second, true},
	})
	checkWaits(t, retry.EqualJitter{Base: base, Cap: capd}, []waitCase{
		{retry.Step{N: 3, Rand: 0}, 20 * ms, true},
		{retry.Step{N: 3, Rand: 0.5}, 30 * ms, true},
		{retry.Step{N: 3, Rand: justUnder1}, 40*ms - 1, true},
		{retry.Step{N: 20, Rand: 0}, time.Second, true},
	})
	checkWaits(t, retry.Decorrelated{Base: base, Cap: capd}, []waitCase{
		{retry.Step{N: 0, Prev: 0, Rand: 0}, 5 * ms, true},    // prev starts at base: U[5, 15) ms
		{retry.Step{N: 0, Prev: 0, Rand: 0.5}, 10 * ms, true}, // 5 + 0.5*(15-5)
		{retry.Step{N: 7, Prev: time.Second, Rand: 0.5}, 1502500 * time.Microsecond, true},
		{retry.Step{N: 7, Prev: 1500 * ms, Rand: 0.9}, 2 * time.Second, true}, // capped
		{retry.Step{N: 7, Prev: 2 * time.Second, Rand: 0}, 5 * ms, true},
	})
	checkWaits(t, retry.FullJitter{MaxRetries: 2}, []waitCase{
		{retry.Step{N: 0, Rand: 0.5}, 500 * ms, true}, // defaults: base 1 s, cap 32 s
		{retry.Step{N: 2, Rand: 0.5}, 0, false},
	})
	checkWaits(t, retry.Constant{}, []waitCase{{retry.Step{N: 9, Rand: 0.3}, time.Second, true}})
	checkWaits(t, retry.Constant{Delay: -1, MaxRetries: 1}, []waitCase{
		{retry.Step{N: 0, Rand: 0.3}, 0, true},
		{retry.Step{N: 1, Rand: 0.3}, 0, false},
	})
}

// TestDecorrelatedWalk feeds every wait back as Prev, as a Runner does, and checks each
// stays in [base, cap] and inside [base, 3*prev).
func TestDecorrelatedWalk(t *testing.T) {
	p := retry.Decorrelated{Base: 100 * ms, Cap: 20 * time.Second}
	rnd := seeded(7)
	var prev time.Duration
	for n := range 10000 {
		d, ok := p.Wait(retry.Step{N: n, Prev: prev, Rand: rnd()})
		hi := 3 * max(prev, 100*ms)
		if !ok || d < 100*ms || d > 20*time.Second || (d >= hi && d != 20*time.Second) {
			t.Fatalf("n=%d prev=%v: wait %v outside [100ms, min(20s, %v))", n, prev, d, hi)
		}
		prev = d
	}
}

func TestLimited(t *testing.T) {
	for _, c := range []struct {
		p    retry.Policy
		want bool
	}{
		{retry.GCS{}, false}, {retry.GCS{MaxRetries: 3}, true},
		{retry.Java{}, true}, {retry.Java{MaxElapsed: -1}, false},
		{retry.Drive{}, true}, {retry.Drive{MaxRetries: -1}, false},
		{retry.CSMA{}, true}, {retry.SimpleDB{}, false},
		{retry.FullJitter{}, false}, {retry.Decorrelated{MaxRetries: 1}, true},
	} {
		if got := c.p.(retry.Limiter).Limited(); got != c.want {
			t.Errorf("%v.Limited() = %v, want %v", c.p, got, c.want)
		}
	}
}
