package aimd

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// bucketSim is fakegcs's model of a bucket's write capacity (fakegcs/limits.go),
// on a simulated clock: a token bucket of rate a second and burst deep,
// whose rate and burst grow by 2^(1/20) for every window of doubling/20 in
// which the requests offered reached 80% of the rate.
type bucketSim struct {
	rate, burst, tokens float64
	last                time.Duration
	doubling            time.Duration
	winStart            time.Duration
	offered             int
	rateSum             float64 // ∫ rate dt, in requests
}

func (b *bucketSim) admit(now time.Duration) bool {
	b.rateSum += b.rate * (now - b.last).Seconds()
	b.tokens = min(b.burst, b.tokens+b.rate*(now-b.last).Seconds())
	b.last = now
	if b.doubling > 0 {
		win := b.doubling / 20
		for now-b.winStart >= win {
			if float64(b.offered) >= 0.8*b.rate*win.Seconds() {
				f := math.Pow(2, 1.0/20)
				b.rate, b.burst = b.rate*f, b.burst*f
			}
			b.winStart += win
			b.offered = 0
		}
		b.offered++
	}
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	return false
}

// simResult is what a simulated batch measured.
type simResult struct {
	secs, share float64 // the batch's time; its files a second over the bucket's mean rate
	refused     int
	least       int // the smallest window
}

// simClient is one process: its window, its workers (-j) and its files.
type simClient struct {
	w       *Window
	j       int
	files   int
	active  []*simReq // files begun: in flight, in backoff, or waiting for a slot
	waiting []*simReq // ready to send, first come first served
	begun   int
	done    int
	r       simResult
	rng     *rand.Rand // the round trips' jitter
}

type simReq struct {
	c        *simClient
	tk       Ticket
	at       time.Duration // when it is answered, or its backoff ends
	admitted bool
	tries    int
	inFlight bool
}

// send begins files while a worker is free and sends what the window
// lets go, each admitted (or not) by b at half the round trip.
func (c *simClient) send(now time.Duration, b *bucketSim, rtt time.Duration) {
	for c.begun < c.files && len(c.active) < c.j {
		q := &simReq{c: c}
		c.active = append(c.active, q)
		c.waiting = append(c.waiting, q)
		c.begun++
	}
	for len(c.waiting) > 0 {
		tk, ok := tryAcquire(c.w)
		if !ok {
			return
		}
		q := c.waiting[0]
		c.waiting = c.waiting[1:]
		// Each round trip differs, by up to a fifth either way, as on a
		// real link; the admission is in its middle.
		d := time.Duration(float64(rtt) * (0.8 + 0.4*c.rng.Float64()))
		q.tk, q.inFlight, q.at = tk, true, now+d
		q.admitted = b.admit(now + d/2)
	}
}

// simulate sends each client's files, one write each, through its window,
// at most j files at once (the workers of -j), each request answered rtt
// after it is sent and admitted by b at half of it; a refused file waits
// the seeds' backoff (1.5 s, 2.5 s, 4.5 s…: the gcs policy at a jitter of
// half) and goes again. Time is simulated: now is the clock the windows
// read. It returns the clients' results and theirs together.
func simulate(cs []*simClient, now *time.Duration, b *bucketSim, rtt time.Duration) simResult {
	var all simResult
	files := 0
	for _, c := range cs {
		files += c.files
	}
	for {
		var next *simReq
		for _, c := range cs {
			c.send(*now, b, rtt)
			for _, q := range c.active {
				if (q.inFlight || q.at > 0) && (next == nil || q.at < next.at) {
					next = q
				}
			}
		}
		if next == nil {
			break // every file written
		}
		*now = next.at
		c := next.c
		switch {
		case !next.inFlight: // its backoff ended
			next.at = 0
			c.waiting = append(c.waiting, next)
		case next.admitted:
			next.inFlight = false
			next.tk.Release(Answered)
			c.done++
			for i, q := range c.active {
				if q == next {
					c.active = append(c.active[:i], c.active[i+1:]...)
					break
				}
			}
			if c.done == c.files {
				c.r.secs = now.Seconds()
			}
		default:
			next.inFlight = false
			next.tk.Release(Refused)
			c.r.refused++
			all.refused++
			next.at = *now + time.Duration(1<<next.tries)*time.Second + 500*time.Millisecond
			next.tries++
		}
	}
	mean := b.rateSum / b.last.Seconds()
	all.secs = now.Seconds()
	all.share = float64(files) / all.secs / mean
	all.least = math.MaxInt
	for _, c := range cs {
		c.r.least = c.w.Stats().Least
		c.r.share = float64(c.files) / c.r.secs / (mean / float64(len(cs)))
		all.least = min(all.least, c.r.least)
	}
	return all
}

// simCase is one simulated batch of issue 31's capacity scenario: 2,000
// writes into a bucket of 300 a second with a second's burst (growing:
// doubling every 5 s of load), at -j and a round trip of rtt (what a
// request of cmd/gcsbench's 5 ms and 20 ms links took, TLS and all);
// procs processes at once share the files and the bucket.
type simCase struct {
	name     string
	j        int
	rtt      time.Duration
	doubling time.Duration
	procs    int
	// least is the share of the capacity the batch must reach: issue 31's
	// targets, or, where -j is below the capacity (8 at 25 ms is 320 a
	// second, against a growing bucket's mean of about 390; 8 at 31 ms is
	// 256), none: then the window must stay at the ceiling.
	least float64
}

var simCases = []simCase{
	{"5ms -j 8", 8, 8 * time.Millisecond, 0, 1, 0.9},
	{"5ms -j 32", 32, 8 * time.Millisecond, 0, 1, 0.9},
	{"20ms -j 8", 8, 25 * time.Millisecond, 0, 1, 0.9},
	{"20ms -j 32", 32, 25 * time.Millisecond, 0, 1, 0.9},
	{"growing 20ms -j 8", 8, 25 * time.Millisecond, 5 * time.Second, 1, 0},
	{"growing 20ms -j 32", 32, 25 * time.Millisecond, 5 * time.Second, 1, 0.85},
	{"5ms 2 × -j 8", 8, 8 * time.Millisecond, 0, 2, 0.9},
	{"20ms 2 × -j 8", 8, 25 * time.Millisecond, 0, 2, 0.9},
}

// simTuning is the default tuning on the simulated clock now.
func simTuning(now *time.Duration) Tuning {
	t0 := time.Unix(0, 0)
	return Tuning{Now: func() time.Time { return t0.Add(*now) }}
}

// runSim runs c with the windows' default tuning; rtt stretches c's.
func runSim(c simCase, rtt time.Duration) (simResult, []*simClient) {
	var now time.Duration
	b := &bucketSim{rate: 300, burst: 300, tokens: 300, doubling: c.doubling}
	cs := make([]*simClient, c.procs)
	for i := range cs {
		cs[i] = &simClient{w: New(c.j, simTuning(&now)), j: c.j, files: 2000 / c.procs, rng: rand.New(rand.NewPCG(uint64(i), 31))}
	}
	return simulate(cs, &now, b, rtt), cs
}

// Issue 31's capacity targets, on a simulated bucket and clock: each batch
// reaches its share of the capacity with at most 20 refusals per 1,000
// writes, at the scenario's round trip and at one a quarter longer; two
// processes on one bucket each get at least 0.8 of a fair share. When the
// window grew by a tenth of a request per round trip (over 300% a second
// at 5 ms) and every cut deepened, 5 ms at -j 32 had 32 and 27.5 per
// 1,000 refused, and two processes at 5 ms 23.5 and 21, as the bench
// measured (40 and 24).
func TestSimulatedCapacity(t *testing.T) {
	for _, c := range simCases {
		for _, rtt := range []time.Duration{c.rtt, c.rtt * 5 / 4} {
			r, cs := runSim(c, rtt)
			per1000 := 1000 * float64(r.refused) / 2000
			t.Logf("%-20s at %v: %.2fs, %.2f× capacity, %d refused (%.1f per 1,000), least window %d",
				c.name, rtt, r.secs, r.share, r.refused, per1000, r.least)
			least := c.least
			if float64(c.j*c.procs)/rtt.Seconds() < 300 {
				least = 0 // -j's rate is below the capacity: the ceiling is the bound
			}
			if r.share < least || per1000 > 20 {
				t.Errorf("%s at %v: %.2f× capacity with %.1f per 1,000 refused; want ≥ %.2f×, ≤ 20", c.name, rtt, r.share, per1000, least)
			}
			if least == 0 && (r.refused != 0 || r.least != c.j) {
				t.Errorf("%s at %v: %d refused, least window %d: -j below the capacity, want no refusal and no cut", c.name, rtt, r.refused, r.least)
			}
			for i, cl := range cs {
				if c.procs > 1 && cl.r.share < 0.8 {
					t.Errorf("%s at %v: process %d reached %.2f× a fair share, want ≥ 0.8", c.name, rtt, i+1, cl.r.share)
				}
			}
		}
	}
}
