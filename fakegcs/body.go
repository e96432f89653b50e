package fakegcs

import (
	"io"
	"time"
)

// faultBody wraps a request body: it counts the bytes read and applies the
// faults that act part-way through a body (cut after AfterBytes, stall
// after AfterBytes, throttle).
type faultBody struct {
	rc       io.ReadCloser
	x        *exchange
	n        int64 // bytes read so far
	cutAt    int64 // >0: reading stops with errFaultCut here
	stallAt  int64 // >0: a stall happens here, once
	throttle *throttle
}

func newFaultBody(x *exchange) *faultBody {
	b := &faultBody{rc: x.r.Body, x: x}
	f := x.fault
	if f == nil {
		return b
	}
	switch f.Kind {
	case KindReset, KindStatus:
		b.cutAt = f.AfterBytes
	case KindStall:
		b.stallAt = f.AfterBytes
	case KindThrottle:
		b.throttle = newThrottle(f.BytesPerSecond)
	}
	return b
}

func (b *faultBody) Read(p []byte) (int, error) {
	if b.cutAt > 0 {
		if b.n >= b.cutAt {
			return 0, errFaultCut
		}
		p = p[:min(int64(len(p)), b.cutAt-b.n)]
	}
	if b.stallAt > 0 {
		if b.n >= b.stallAt {
			b.stallAt = 0
			b.x.s.sleep(b.x.r.Context(), b.x.fault.Delay)
		} else {
			p = p[:min(int64(len(p)), b.stallAt-b.n)]
		}
	}
	if b.throttle != nil {
		p = p[:min(len(p), b.throttle.step())]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if sess := b.x.ri.session; sess != nil && n > 0 {
		sess.received.Add(int64(n))
	}
	if b.throttle != nil && n > 0 && !b.throttle.wait(b.x, int64(n)) {
		return n, errConnReset
	}
	return n, err
}

func (b *faultBody) Close() error { return b.rc.Close() }

// throttle paces a byte stream to a rate: after n bytes it waits until
// n/rate seconds have passed since the first byte.
type throttle struct {
	rate  int64 // bytes per second
	start time.Time
	n     int64
}

func newThrottle(rate int64) *throttle { return &throttle{rate: rate} }

// step is the most bytes to move at once: a twentieth of a second's worth,
// so the pace is smooth and a kill lands between steps.
func (t *throttle) step() int {
	return int(max(t.rate/20, 1))
}

// wait accounts n bytes and sleeps until the pace allows more; false when
// the server closed or the client left meanwhile.
func (t *throttle) wait(x *exchange, n int64) bool {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	t.n += n
	due := t.start.Add(time.Duration(float64(t.n) / float64(t.rate) * float64(time.Second)))
	return x.s.sleep(x.r.Context(), time.Until(due))
}
