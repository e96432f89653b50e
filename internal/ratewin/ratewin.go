// Package ratewin measures a transfer's rate over a moving window, for a progress
// line: the rate the server allows now, not the average since the start.
package ratewin

import "time"

// Window measures a rate over the last Span, from samples of a running byte count
// taken as progress is reported; the zero Window is ready. The Warmup after the first
// byte is left out: kernel buffers take megabytes at once then, which is not the rate
// the server allows. Times are inputs, so a test drives it with a fake clock.
type Window struct {
	first   time.Time
	samples []sample
}

type sample struct {
	at  time.Time
	sum int64
}

// The window's span, the warm-up left out, and the least time between two samples.
const (
	Span       = 5 * time.Second
	Warmup     = time.Second
	SampleStep = 100 * time.Millisecond
)

// Add records that sum bytes were done at now.
func (w *Window) Add(now time.Time, sum int64) {
	if w.first.IsZero() {
		if sum == 0 {
			return
		}
		w.first = now
	}
	if now.Sub(w.first) < Warmup {
		return
	}
	if n := len(w.samples); n > 0 && now.Sub(w.samples[n-1].at) < SampleStep {
		return // one sample per tick: a burst of updates (small files) does not grow the window
	}
	w.samples = append(w.samples, sample{now, sum})
	for len(w.samples) > 2 && now.Sub(w.samples[1].at) >= Span {
		w.samples = w.samples[1:]
	}
}

// PerSecond is the rate over the window in bytes per second, 0 until it spans half a
// second.
func (w *Window) PerSecond() float64 {
	if len(w.samples) < 2 {
		return 0
	}
	a, b := w.samples[0], w.samples[len(w.samples)-1]
	if dt := b.at.Sub(a.at).Seconds(); dt >= 0.5 {
		return float64(b.sum-a.sum) / dt
	}
	return 0
}
