package ratewin

import (
	"testing"
	"time"
)

// The burst of the first second is left out; then the rate is the window's, and the
// window forgets what is older than Span.
func TestWindow(t *testing.T) {
	var w Window
	now := time.Unix(1000, 0)
	w.Add(now, 0) // nothing done yet: the warm-up has not begun
	w.Add(now, 1)
	now = now.Add(100 * time.Millisecond)
	w.Add(now, 8<<20) // the kernel's buffers: not a rate
	if r := w.PerSecond(); r != 0 {
		t.Fatalf("rate in the warm-up %.0f, want 0", r)
	}
	sum := int64(8 << 20)
	for range 8 {
		now = now.Add(500 * time.Millisecond)
		sum += 1 << 19
		w.Add(now, sum)
	}
	if r := w.PerSecond(); r != 1<<20 {
		t.Fatalf("rate %.0f B/s, want %d", r, 1<<20)
	}
	w.Add(now.Add(10*time.Millisecond), sum+100<<20) // within SampleStep: not sampled
	if r := w.PerSecond(); r != 1<<20 {
		t.Fatalf("rate after an update within a tick %.0f B/s, want %d", r, 1<<20)
	}
	for range 12 { // 6 s at 4 MiB/s: the 1 MiB/s samples leave the window
		now = now.Add(500 * time.Millisecond)
		sum += 2 << 20
		w.Add(now, sum)
	}
	if r := w.PerSecond(); r != 4<<20 {
		t.Fatalf("rate after the window moved %.0f B/s, want %d", r, 4<<20)
	}
}
