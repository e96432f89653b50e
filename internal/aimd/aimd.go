// Package aimd decides how many requests may be in flight to one bucket at
// once, learning the bucket's capacity from its refusals as TCP learns a
// path's: additive increase on success, multiplicative decrease on a
// refusal (429 or 503), an optional slow start up to the ceiling, and at
// most one cut per window, so a burst of refusals caused by
// one overload is one cut (the first one as deep as the share of the
// window refused).
//
// "One cut per window" is TCP NewReno's rule, by sequence number. Each
// request that takes a slot is numbered; a cut remembers the number of the
// next request to be sent, and a refusal of a request sent before it (one
// of the overload that was already answered by the cut) does not cut
// again. The increase is a rate in time, not per round trip: each answer
// adds in proportion to the time its request was in flight, read from a
// clock the tests set (Tuning.Now), so their windows are exact.
//
// A Window only says how many requests go at once. How long a refused
// request waits before it is sent again is the retry policy's business
// (package retry): a refused request gives its slot back at once, so the
// others go on at the reduced window while it waits.
package aimd

import (
	"context"
	"math"
	"sync"
	"time"
)

// Defaults of a Window's tuning.
const (
	// DefaultBeta is the share of the window kept at a cut: CUBIC's 0.7
	// rather than Reno's 0.5, as a bucket's capacity is a rate that holds,
	// not a queue to drain.
	DefaultBeta = 0.7
	// DefaultRate is the window's growth past slow start, per second of a
	// full window in flight, as a share of the window the last cut started
	// from: 0.2 grows a window cut to 0.7 back to where it was refused in
	// 1.5 s, and on past it by a fifth of it a second, faster than a
	// bucket's capacity grows (GCS doubles it over about 20 minutes; the
	// bench's model in 5 s, 15% a second). It is a rate in time, not so
	// much per round trip as TCP's: Reno-style growth of a tenth of a
	// request per round trip grew a window of 3 by over 300% a second at
	// 5 ms, met a bucket's limit every quarter of a second and had 4% of
	// the writes refused (issue 31.2). A simulation of the bench's bucket
	// (sim_test.go) chose 0.2 and Beta 0.7 among 0.1 to 0.4 and 0.6 to 0.8:
	// slower left two processes below their share after the first cut,
	// faster met the limit more often.
	DefaultRate = 0.2
	// maxTook bounds the time in flight one answer counts for the growth:
	// a request that hung for minutes says no more of the bucket's load.
	maxTook = time.Second
)

// Outcome is what became of a request that held a slot.
type Outcome int

const (
	// Answered: the bucket answered (any status but a refusal of the
	// bucket's); the window grows.
	Answered Outcome = iota
	// Refused: the bucket refused for its load (429, 503); the window is
	// cut, once per window.
	Refused
	// Neutral: no word on the bucket's load (a network error, a cancelled
	// request); the window stays.
	Neutral
	// ObjectRefused: refused for one object's rate (GCS's one write a
	// second to an object name), not the bucket's load: the window stays,
	// and the request waits its own backoff.
	ObjectRefused
)

// Window is the controller of one bucket. Its zero value is not usable:
// make it with New. Safe for concurrent use.
type Window struct {
	mu       sync.Mutex
	ceiling  float64
	window   float64 // requests allowed in flight: floor(window), at least 1
	ssthresh float64 // slow start below it
	beta     float64
	rate     float64
	now      func() time.Time
	// base is the window the growth past slow start is measured against:
	// the one the last cut started from (the initial window before any).
	base     float64
	inFlight int
	sent     uint64 // requests that took a slot
	recover  uint64 // refusals of requests numbered below it do not cut
	// cutFrom is the requests the window allowed at the last cut, and
	// cutRefused how many of them have been refused (cut).
	cutFrom    float64
	cutRefused int
	waiters    []chan struct{}
	stats      Stats
}

// Tuning adjusts a Window; zero fields mean the defaults.
type Tuning struct {
	// Initial is the first window, at most the ceiling; 0 means the
	// ceiling. Below it, slow start doubles the window every window of
	// successes up to the ceiling. The default does not ramp up: a bucket's
	// burst (GCS admits a second's worth and more) hides its capacity from
	// a slow start, which on the wire model reached -j 32 within the burst
	// all the same, and ramping up costs the first round trips of every run.
	Initial int
	Beta    float64 // the share kept at a cut, in (0, 1); DefaultBeta
	// Rate is the growth past slow start, per second that the window's
	// requests are in flight, as a share of the window the last cut
	// started from; DefaultRate.
	Rate float64
	// Now is the clock that times each request in flight; nil means
	// time.Now.
	Now func() time.Time
}

// Stats is a Window's state and history.
type Stats struct {
	Ceiling  int // the most requests in flight ever allowed
	Window   int // the requests allowed in flight now (1 to Ceiling)
	Least    int // the smallest Window so far
	InFlight int // the requests in flight now
	Refusals int // requests refused for the bucket's load
	Cuts     int // times the window was cut (at most one per window of requests)
	// ObjectRefusals counts the requests refused for one object's rate;
	// Neutral those that ended with no word on the bucket's load.
	ObjectRefusals, Neutral int
}

// New returns a Window that allows at most ceiling requests in flight (at
// least 1), starting at t.Initial.
func New(ceiling int, t Tuning) *Window {
	ceiling = max(ceiling, 1)
	if t.Initial <= 0 {
		t.Initial = ceiling
	}
	if t.Beta <= 0 || t.Beta >= 1 {
		t.Beta = DefaultBeta
	}
	if t.Rate <= 0 {
		t.Rate = DefaultRate
	}
	if t.Now == nil {
		t.Now = time.Now
	}
	w := &Window{ceiling: float64(ceiling), window: float64(min(t.Initial, ceiling)),
		ssthresh: float64(ceiling), beta: t.Beta, rate: t.Rate, now: t.Now}
	w.base = w.window
	w.stats.Least = w.allowed()
	return w
}

// Ticket is one request's slot: give it back with Release.
type Ticket struct {
	w    *Window
	seq  uint64
	sent time.Time
}

// allowed is the requests allowed in flight; with mu held.
func (w *Window) allowed() int { return max(int(math.Floor(w.window+1e-9)), 1) }

// Acquire waits for a slot, first come first served, and returns it; or
// ctx.Err() when ctx ends first.
func (w *Window) Acquire(ctx context.Context) (Ticket, error) {
	w.mu.Lock()
	if len(w.waiters) == 0 && w.inFlight < w.allowed() {
		t := w.take()
		w.mu.Unlock()
		return t, nil
	}
	ready := make(chan struct{})
	w.waiters = append(w.waiters, ready)
	w.mu.Unlock()
	select {
	case <-ready:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.numbered(), nil
	case <-ctx.Done():
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, c := range w.waiters {
			if c == ready {
				w.waiters = append(w.waiters[:i], w.waiters[i+1:]...)
				return Ticket{}, ctx.Err()
			}
		}
		// Granted as ctx ended: the slot was counted for us; pass it on.
		w.inFlight--
		w.wake()
		return Ticket{}, ctx.Err()
	}
}

// take counts a slot and numbers it; with mu held.
func (w *Window) take() Ticket {
	w.inFlight++
	return w.numbered()
}

// numbered numbers a slot already counted in inFlight; with mu held.
func (w *Window) numbered() Ticket {
	w.sent++
	return Ticket{w: w, seq: w.sent - 1, sent: w.now()}
}

// wake grants slots to the waiters, in order, while the window allows;
// with mu held.
func (w *Window) wake() {
	for len(w.waiters) > 0 && w.inFlight < w.allowed() {
		c := w.waiters[0]
		w.waiters = w.waiters[1:]
		w.inFlight++
		close(c)
	}
}

// Release gives the slot back with what became of its request. A zero
// Ticket (from a failed Acquire) is ignored.
func (t Ticket) Release(o Outcome) {
	w := t.w
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight--
	w.outcome(o, t.seq, w.now().Sub(t.sent))
}

// Observe takes the outcome of a request that held no slot (one the
// caller does not hold to the window but whose answer still tells of the
// bucket's load), in flight for took, as if it had been sent with the last
// request that took one: a refusal cuts unless a cut already answered
// that window.
func (w *Window) Observe(o Outcome, took time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq := uint64(0)
	if w.sent > 0 {
		seq = w.sent - 1
	}
	w.outcome(o, seq, took)
}

// outcome applies what became of request seq, in flight for took, and
// lets the waiters the window now allows go; with mu held.
func (w *Window) outcome(o Outcome, seq uint64, took time.Duration) {
	switch o {
	case Answered:
		w.grow(seq, took)
	case Refused:
		w.stats.Refusals++
		w.cut(seq)
	case ObjectRefused:
		w.stats.ObjectRefusals++
	default:
		w.stats.Neutral++
	}
	w.wake()
}

// grow widens the window for one answer, in flight for took: by one in
// slow start (so it doubles every window); past it by Rate × base ×
// took / the window, so that a full window grows by Rate × base a second,
// whatever the round trip. A request sent before the last cut belongs to
// the overloaded window and widens nothing.
func (w *Window) grow(seq uint64, took time.Duration) {
	if seq < w.recover {
		return
	}
	if w.window < w.ssthresh {
		w.window = min(w.window+1, w.ssthresh)
	} else {
		took = min(max(took, 0), maxTook)
		w.window += w.rate * w.base * took.Seconds() / float64(w.allowed())
	}
	w.window = min(w.window, w.ceiling)
}

// cut narrows the window to Beta of it (at least 1) for a refusal of a
// request sent since the last cut, and ends slow start. The further
// refusals of the same overload (requests sent before the cut) make no new
// cut, but deepen this one: of the cutFrom requests the window allowed,
// only cutFrom-refused were admitted, so the window is at most Beta of
// that. A window that met the bucket just past its capacity loses 30%; one
// that slow start (or a bucket's burst) let far past it, where most of a
// window is refused at once, drops to Beta of what the bucket admitted in
// one step rather than in one cut per round trip, each refused a window.
// Only the first cut deepens: the window was set blind (-j), where later
// ones met the bucket by growing slowly, and two refusals of a window of
// 3 say little of the capacity (deepening them cut a window of 3 to 1 at
// 5 ms, regrown only in seconds). The growth after a cut is measured
// against the window it started from.
func (w *Window) cut(seq uint64) {
	if seq < w.recover {
		w.cutRefused++
		if w.stats.Cuts > 1 {
			return
		}
		w.window = max(min(w.window, w.beta*(w.cutFrom-float64(w.cutRefused))), 1)
	} else {
		w.cutFrom, w.cutRefused = float64(w.allowed()), 1
		w.window = max(w.window*w.beta, 1)
		w.recover = w.sent
		w.stats.Cuts++
	}
	w.base = w.cutFrom
	w.ssthresh = w.window
	w.stats.Least = min(w.stats.Least, w.allowed())
}

// Stats returns the window's state and history.
func (w *Window) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Ceiling, s.Window, s.InFlight = int(w.ceiling), w.allowed(), w.inFlight
	return s
}

// Buckets holds one Window per bucket, made on first use. Safe for
// concurrent use.
type Buckets struct {
	ceiling int
	tuning  Tuning
	mu      sync.Mutex
	m       map[string]*Window
}

// NewBuckets returns windows of at most ceiling requests each.
func NewBuckets(ceiling int, t Tuning) *Buckets {
	return &Buckets{ceiling: ceiling, tuning: t, m: map[string]*Window{}}
}

// For returns bucket's Window.
func (b *Buckets) For(bucket string) *Window {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.m[bucket]
	if w == nil {
		w = New(b.ceiling, b.tuning)
		b.m[bucket] = w
	}
	return w
}

// Stats returns each bucket's Stats.
func (b *Buckets) Stats() map[string]Stats {
	b.mu.Lock()
	ws := make(map[string]*Window, len(b.m))
	for k, w := range b.m {
		ws[k] = w
	}
	b.mu.Unlock()
	out := make(map[string]Stats, len(ws))
	for k, w := range ws {
		out[k] = w.Stats()
	}
	return out
}
