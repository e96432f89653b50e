package fakegcs

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// virtualClock is a capped connection's time in a test: a sleep returns at
// once and moves the clock on by its duration, so slept is the time the
// connection would have waited for its bytes at the cap.
type virtualClock struct {
	mu    sync.Mutex
	t     time.Time
	slept time.Duration
}

func (c *virtualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *virtualClock) sleep(d time.Duration, _, _ <-chan struct{}) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > 0 {
		c.t = c.t.Add(d)
		c.slept += d
	}
	return true
}

func (c *virtualClock) total() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}

// At 1,000,000 B/s a byte costs exactly 1 µs, so the bucket's arithmetic is
// exact: it starts full (a twentieth of a second's bytes), a refill of
// 50,000 bytes takes 50 ms, and an idle spell refills it to its depth only.
func TestPacerRefill(t *testing.T) {
	clock := &virtualClock{t: time.Unix(0, 0)}
	p := newPacer(1_000_000, clock, nil, nil)
	steps := []struct {
		idle  time.Duration // the connection does nothing this long first
		n     int
		slept time.Duration // the clock's total afterwards
	}{
		{0, 50_000, 0},                     // the full bucket
		{0, 50_000, 50 * time.Millisecond}, // one refill
		{0, 1, 50*time.Millisecond + time.Microsecond},
		{time.Hour, 50_000, 50*time.Millisecond + time.Microsecond}, // an hour refills 50,000, not 3.6e9
		{0, 20_000, 70*time.Millisecond + time.Microsecond},
	}
	if p.burst != 50_000 {
		t.Fatalf("burst %d, want 50000", p.burst)
	}
	for i, s := range steps {
		clock.t = clock.t.Add(s.idle)
		if !p.take(s.n) || clock.total() != s.slept {
			t.Fatalf("step %d: slept %v, want %v", i, clock.total(), s.slept)
		}
	}
	for _, c := range []struct{ rate, burst int64 }{{1, 1}, {19, 1}, {2000, 100}, {50 << 20, 256 << 10}} {
		if b := capBurst(c.rate); int64(b) != c.burst {
			t.Errorf("capBurst(%d) = %d, want %d", c.rate, b, c.burst)
		}
	}
}

// capServer starts a server capped at 1,000,000 B/s whose connections each
// get a virtualClock, returned in accept order by clocks.
func capServer(t *testing.T) (s *Server, clocks func() []*virtualClock) {
	var mu sync.Mutex
	var all []*virtualClock
	s, err := newServer(Options{Buckets: []string{"bkt"}, CapRate: 1_000_000}, func() capClock {
		mu.Lock()
		defer mu.Unlock()
		c := &virtualClock{t: time.Unix(0, 0)}
		all = append(all, c)
		return c
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, func() []*virtualClock {
		mu.Lock()
		defer mu.Unlock()
		return append([]*virtualClock(nil), all...)
	}
}

// Two connections moving N bytes at once, one downloading and one
// uploading, each wait N/rate (less the bucket's 50 ms, plus ~1 µs per
// header byte): each gets the whole cap, together twice it. A second
// request kept alive on the first connection shares that connection's
// rate. Over TCP and over the in-memory pipes.
func TestCapPerConnection(t *testing.T) {
	const n = 2_000_000 // 2 s at the cap
	for _, mode := range []string{"tcp", "in-memory"} {
		t.Run(mode, func(t *testing.T) {
			s, clocks := capServer(t)
			data := bytes.Repeat([]byte("x"), n)
			if _, err := s.PutObject("bkt", "o", data); err != nil {
				t.Fatal(err)
			}
			base := s.Client().Transport.(*http.Transport)
			if mode == "in-memory" {
				base = s.InMemoryClient().Transport.(*http.Transport)
			}
			down, up := base.Clone(), base.Clone() // a connection each
			var wg sync.WaitGroup
			wg.Go(func() { capRequest(t, down, "GET", s.URL()+"/bkt/o", nil, n) })
			wg.Go(func() {
				capRequest(t, up, "POST", s.URL()+"/upload/storage/v1/b/bkt/o?uploadType=media&name=up", data, -1)
			})
			wg.Wait()
			within := func(got, lo time.Duration) bool { return got >= lo && got <= lo+2*time.Millisecond }
			cs := clocks()
			if len(cs) != 2 || !within(cs[0].total(), (n-50_000)*time.Microsecond) || !within(cs[1].total(), (n-50_000)*time.Microsecond) {
				t.Fatalf("%d connections, waits %v; want 2 of %v plus their headers", len(cs), totals(cs), (n-50_000)*time.Microsecond)
			}
			capRequest(t, down, "GET", s.URL()+"/bkt/o", nil, n)
			cs = clocks()
			waits := totals(cs)
			if len(cs) != 2 || max(waits[0], waits[1]) < (2*n-50_000)*time.Microsecond {
				t.Errorf("kept alive: %d connections, waits %v; want one of at least %v", len(cs), waits, (2*n-50_000)*time.Microsecond)
			}
		})
	}
}

func totals(cs []*virtualClock) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		out[i] = c.total()
	}
	return out
}

// capRequest sends one request through tr and checks its answer is a 2xx
// (with want body bytes, unless want < 0).
func capRequest(t *testing.T, tr http.RoundTripper, method, url string, body []byte, want int) {
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	defer res.Body.Close()
	got, err := io.Copy(io.Discard, res.Body)
	if err != nil || res.StatusCode/100 != 2 || (want >= 0 && got != int64(want)) {
		t.Errorf("%s %s: %d, %d bytes, %v", method, url, res.StatusCode, got, err)
	}
}

// blockingClock never lets time pass: once a connection has spent its
// bucket it waits until the connection or the server closes.
type blockingClock struct{ waiting chan<- struct{} }

func (blockingClock) now() time.Time { return time.Unix(0, 0) }

func (c blockingClock) sleep(d time.Duration, stop1, stop2 <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	select {
	case c.waiting <- struct{}{}:
	default:
	}
	select {
	case <-stop1:
	case <-stop2:
	}
	return false
}

// Close ends a capped connection's wait: the server stops at once and the
// client sees its request fail.
func TestCapCloseEndsWaits(t *testing.T) {
	waiting := make(chan struct{}, 1)
	s, err := newServer(Options{Buckets: []string{"bkt"}, CapRate: 1000}, func() capClock { return blockingClock{waiting} })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutObject("bkt", "o", bytes.Repeat([]byte("x"), 10_000)); err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	go func() {
		res, err := s.Client().Get(s.URL() + "/bkt/o")
		if err == nil {
			_, err = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		failed <- err
	}()
	<-waiting
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-failed; err == nil {
		t.Fatal("a request cut by Close succeeded")
	}
}

func TestCapRateNegative(t *testing.T) {
	if _, err := New(Options{CapRate: -1}); err == nil || err.Error() != "fakegcs: negative CapRate -1" {
		t.Fatalf("New: %v", err)
	}
}

// Capped connections still reset with an RST (the fault unwraps TLS and the
// cap down to the socket or pipe) and still serve, over TCP, TLS (HTTP/1.1:
// over HTTP/2 a reset is a stream's) and the in-memory pipes. The cap is
// high enough not to slow the test.
func TestCapKeepsResets(t *testing.T) {
	for _, mode := range []string{"tcp", "tls", "in-memory"} {
		t.Run(mode, func(t *testing.T) {
			s := NewTest(t, Options{Buckets: []string{"bkt"}, CapRate: 1 << 30, TLS: mode == "tls", HTTP1Only: true})
			if _, err := s.PutObject("bkt", "o", []byte("hello")); err != nil {
				t.Fatal(err)
			}
			hc := s.Client()
			if mode == "in-memory" {
				hc = s.InMemoryClient()
			}
			s.Inject(Fault{Op: "storage.objects.get", Kind: KindReset})
			// A fresh connection, so that net/http cannot retry the GET unseen.
			hc = &http.Client{Transport: hc.Transport.(*http.Transport).Clone()}
			if _, err := hc.Get(s.URL() + "/bkt/o"); !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("reset: %v, want ECONNRESET", err)
			}
			capRequest(t, hc.Transport, "GET", s.URL()+"/bkt/o", nil, 5)
		})
	}
}
