package upload

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/retry/retrytest"
)

// GCS's answers beyond a bucket's capacity and beyond one object's rate.
const (
	bucketRefusal = `{"error":{"code":429,"message":"You have exceeded your bucket's IO capacity. Please follow the request rate guidelines.","errors":[{"domain":"global","reason":"rateLimitExceeded","message":"You have exceeded your bucket's IO capacity. Please follow the request rate guidelines."}]}}`
	objectRefusal = `{"error":{"code":429,"message":"The object bkt/o exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.","errors":[{"domain":"global","reason":"rateLimitExceeded","message":"The object bkt/o exceeded the rate limit for object mutation operations (create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429."}]}}`
	busyRefusal   = `{"error":{"code":503,"message":"We encountered an internal error. Please try again.","errors":[{"domain":"global","reason":"backendError","message":"We encountered an internal error. Please try again."}]}}`
)

// throttle stands in front of fakegcs and refuses what refuse says to.
type throttle struct {
	next   http.Handler
	refuse func(r *http.Request) (status int, body string) // 0: pass to next
	// refused counts the refusals; written counts the writes next answered 2xx.
	refused, written atomic.Int64
	onWrite          func(r *http.Request) // told of each write next answered
	// hold, if set, is called before next serves a request and returns
	// what to call after.
	hold func(r *http.Request) (after func())
}

func (h *throttle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if code, body := h.refuse(r); code != 0 {
		h.refused.Add(1)
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
		return
	}
	if h.hold != nil {
		defer h.hold(r)()
	}
	rec := &statusRecorder{ResponseWriter: w, code: 200}
	h.next.ServeHTTP(rec, r)
	if r.Method == http.MethodPost && rec.code < 300 {
		h.written.Add(1)
		if h.onWrite != nil {
			h.onWrite(r)
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (s *statusRecorder) WriteHeader(code int) { s.code = code; s.ResponseWriter.WriteHeader(code) }

// throttled starts fakegcs behind h and returns the server and h's URL.
func throttled(t *testing.T, h *throttle) (*fakegcs.Server, string) {
	t.Helper()
	srv := newServer(t, fakegcs.Options{})
	h.next = srv
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return srv, ts.URL
}

// writeFiles makes n files under a temporary directory and returns them
// as items for gs://bkt/f<i>.
func writeFiles(t *testing.T, n int) ([]Item, [][]byte) {
	t.Helper()
	dir := t.TempDir()
	items := make([]Item, n)
	data := make([][]byte, n)
	for i := range n {
		data[i] = randBytes(1000+i, uint64(i))
		items[i] = Item{Local: writeTemp(t, dir, fmt.Sprintf("f%d", i), data[i]), Remote: URL{Bucket: testBucket, Object: fmt.Sprintf("f%d", i)}}
	}
	return items, data
}

// uploadAll uploads n files of writeFiles with c, fails the test unless
// each arrived in srv byte for byte, and returns the retries the results
// counted.
func uploadAll(t *testing.T, c *Client, srv *fakegcs.Server, n int) (retries int) {
	t.Helper()
	items, data := writeFiles(t, n)
	res, err := c.Upload(context.Background(), items, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if !r.OK() {
			t.Fatalf("%s: %v", r.Source, r.Err)
		}
		retries += r.Attempts - 1
		wantObject(t, srv, fmt.Sprintf("f%d", i), data[i])
	}
	return retries
}

// A 503, and a 429 for the bucket's load, cut the bucket's window; a 429
// for one object's mutation rate does not: only that request waits.
func TestRefusalsCutTheBucketsWindow(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		code                        int
		body                        string
		cuts, refusals, objRefusals int
		method                      string // the request refused; "" is POST
	}{
		{"bucket 429", 429, bucketRefusal, 1, 1, 0, ""},
		{"503", 503, busyRefusal, 1, 1, 0, ""},
		{"object 429", 429, objectRefusal, 0, 0, 1, ""},
		// A chunk of a started session holds no slot, but its 503 cuts.
		{"chunk 503", 503, busyRefusal, 1, 1, 0, http.MethodPut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var once atomic.Bool
			h := &throttle{refuse: func(r *http.Request) (int, string) {
				if r.Method == cmp.Or(tc.method, http.MethodPost) && once.CompareAndSwap(false, true) {
					return tc.code, tc.body
				}
				return 0, ""
			}}
			srv, url := throttled(t, h)
			clock := retrytest.NewClock()
			c := newClient(t, srv, func(o *Options) {
				o.Endpoint = url
				o.Parallelism = 8
				o.Retry = &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
				if tc.method == http.MethodPut {
					o.SmallFileThreshold = -1 // a resumable session: POST to start, PUT the chunk
				}
			})
			items, data := writeFiles(t, 1)
			res, err := c.Upload(context.Background(), items, UploadOptions{})
			if err != nil || !res[0].OK() {
				t.Fatalf("upload: %v %+v", err, res)
			}
			wantObject(t, srv, "f0", data[0])
			s := c.windows.For(testBucket).Stats()
			if s.Cuts != tc.cuts || s.Refusals != tc.refusals || s.ObjectRefusals != tc.objRefusals {
				t.Fatalf("window %+v: want %d cuts, %d refusals, %d object refusals", s, tc.cuts, tc.refusals, tc.objRefusals)
			}
			if tc.cuts == 1 && s.Least >= s.Ceiling || tc.cuts == 0 && s.Least != s.Ceiling {
				t.Fatalf("least window %d of %d: want one below the ceiling only for a cut", s.Least, s.Ceiling)
			}
			// The refused request waited the seeds' first backoff, once.
			if got := clock.Sleeps(); len(got) != 1 || got[0] != 1500*time.Millisecond {
				t.Fatalf("waits %v, want [1.5s]", got)
			}
			if res[0].Attempts != 2 {
				t.Fatalf("%d attempts, want 2", res[0].Attempts)
			}
		})
	}
}

// heldClock is a retry clock whose sleeps wait for release (or ctx): the
// test decides when a backoff ends, and sees what else happens meanwhile.
type heldClock struct {
	*retrytest.Clock
	sleeping chan time.Duration
	release  chan struct{}
}

func (c *heldClock) Sleep(ctx context.Context, d time.Duration) error {
	select {
	case c.sleeping <- d:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return c.Clock.Sleep(ctx, d)
}

// One refused request waits its own backoff while the other workers go on:
// with the refused request's wait held open, every other file of the batch
// is written; then it is sent again and the batch ends byte-exact. (With
// the old shared retry.Gate, every worker slept the refused request's wait
// before its next request: the other files were not written.)
func TestOneRefusalDoesNotStopTheOthers(t *testing.T) {
	const n = 12
	others := make(chan struct{}, n)
	var first atomic.Bool
	h := &throttle{
		refuse: func(r *http.Request) (int, string) {
			if r.Method == http.MethodPost && first.CompareAndSwap(false, true) {
				return 429, bucketRefusal
			}
			return 0, ""
		},
		onWrite: func(*http.Request) { others <- struct{}{} },
	}
	srv, url := throttled(t, h)
	clock := &heldClock{Clock: retrytest.NewClock(), sleeping: make(chan time.Duration, 1), release: make(chan struct{})}
	c := newClient(t, srv, func(o *Options) {
		o.Endpoint = url
		o.Parallelism = 4
		o.Retry = &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
	})
	items, data := writeFiles(t, n)
	type out struct {
		res []*Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := c.Upload(context.Background(), items, UploadOptions{})
		done <- out{res, err}
	}()
	if d := <-clock.sleeping; d != 1500*time.Millisecond {
		t.Fatalf("the refused request waits %v, want the seeds' first 1.5s", d)
	}
	// The refused request is in its backoff: the n-1 others must all be
	// written before it ends. A worker that waited for it would never
	// write, so a bounded wait here is the failure, not the test's pace.
	for i := range n - 1 {
		select {
		case <-others:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of the other %d files were written while one request waited its backoff", i, n-1)
		}
	}
	close(clock.release)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	for i, r := range o.res {
		if !r.OK() {
			t.Fatalf("%s: %v", r.Source, r.Err)
		}
		wantObject(t, srv, fmt.Sprintf("f%d", i), data[i])
	}
	if got := clock.Sleeps(); len(got) != 1 || h.refused.Load() != 1 {
		t.Fatalf("waits %v, refusals %d: want one wait for the one refusal", got, h.refused.Load())
	}
}

// A batch against a bucket that admits only capacity requests at once (and
// refuses the rest with 429) ends byte-exact, and the window keeps the
// refusals few: a request is refused only while the window is above the
// capacity, and each refusal since the last cut cuts it. Each refused
// request waited the seeds' backoff for its retry number.
func TestBatchHoldsBucketCapacity(t *testing.T) {
	const n, capacity, parallelism = 200, 3, 16
	var inFlight atomic.Int64
	var mu sync.Mutex
	most := int64(0)
	h := &throttle{refuse: func(r *http.Request) (int, string) {
		if r.Method != http.MethodPost {
			return 0, ""
		}
		if inFlight.Add(1) > capacity {
			inFlight.Add(-1)
			return 429, bucketRefusal
		}
		return 0, ""
	}}
	// Admitted writes take a moment, as on a real link, so that requests
	// overlap; the assertions hold whatever the moment is.
	h.hold = func(r *http.Request) func() {
		if r.Method != http.MethodPost {
			return func() {}
		}
		mu.Lock()
		most = max(most, inFlight.Load())
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		return func() { inFlight.Add(-1) }
	}
	srv, url := throttled(t, h)
	clock := retrytest.NewClock()
	c := newClient(t, srv, func(o *Options) {
		o.Endpoint = url
		o.Parallelism = parallelism
		o.Retry = &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
	})
	retries := uploadAll(t, c, srv, n)
	refused := int(h.refused.Load())
	s := c.windows.For(testBucket).Stats()
	t.Logf("%d refusals, %d cuts, window %d (least %d), %d admitted at once at most", refused, s.Cuts, s.Window, s.Least, most)
	// At 16 at once, 13 of every 16 requests would be refused; the window
	// starts at 16 and the first overload (at most 16 refused) cuts it to
	// 0.7 of what was admitted, so the bucket refuses a few more, not the
	// batch.
	if refused > 16+n/10 {
		t.Fatalf("%d refusals for %d files at a capacity of %d: the window did not hold it", refused, n, capacity)
	}
	if refused != s.Refusals || retries != refused || s.Cuts == 0 && refused > 0 {
		t.Fatalf("refused %d, window counted %d (%d cuts), results retried %d", refused, s.Refusals, s.Cuts, retries)
	}
	// Every wait is the seeds' wait for its retry number: 1.5 s, 2.5 s, 4.5 s…
	seeds := map[time.Duration]bool{}
	for k := range 6 {
		seeds[time.Duration(1<<k)*time.Second+500*time.Millisecond] = true
	}
	sleeps := clock.Sleeps()
	if len(sleeps) != refused {
		t.Fatalf("%d waits for %d refusals", len(sleeps), refused)
	}
	for _, d := range sleeps {
		if !seeds[d] {
			t.Fatalf("a wait of %v is none of the seeds' (waits %v)", d, sleeps)
		}
	}
	if s.InFlight != 0 || s.Window > parallelism {
		t.Fatalf("window %+v after the batch", s)
	}
}

// A batch against fakegcs's own model of a bucket's capacity (Limits: 100
// writes a second, a burst of 10, 429 beyond) ends byte-exact, each refused
// request waiting the seeds' backoff, with the refusals bounded. Time is
// the retry's fake clock, which fakegcs's token bucket reads too: it moves
// only while a refused request waits, and each wait (1.5 s or more) refills
// the bucket's burst. The first overload (16 in flight, 10 admitted) costs
// 6; then the window, cut at each burst's end and never grown (no time
// passes in flight), loses what it has in flight past the burst: 7, 4, 3,
// 2, 1 at most, then about one refusal per burst of 10 writes, 16 + n/5 in
// all at most. At 16 in flight whatever the bucket said, each burst of 10
// would cost 6 refusals: 6n/10.
func TestBatchAtFakegcsLimits(t *testing.T) {
	const n, parallelism = 120, 16
	clock := retrytest.NewClock()
	srv := newServer(t, fakegcs.Options{Now: clock.Now, Limits: fakegcs.Limits{WriteRate: 100, WriteBurst: 10}})
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = parallelism
		o.Retry = &retry.Runner{Clock: clock, Rand: retrytest.Fixed(0.5)}
	})
	retries := uploadAll(t, c, srv, n)
	refused := srv.Stats().Refused[fakegcs.LimitBucketWrites]
	s := c.windows.For(testBucket).Stats()
	t.Logf("%d refusals, %d cuts, window %d (least %d)", refused, s.Cuts, s.Window, s.Least)
	if refused != s.Refusals || retries != refused || refused == 0 {
		t.Fatalf("fakegcs refused %d, the window counted %d, the results retried %d", refused, s.Refusals, retries)
	}
	if most := parallelism + n/5; refused > most {
		t.Fatalf("%d refusals for %d writes at a burst of 10: want at most %d (the first overloads', then about one per burst)", refused, n, most)
	}
	seeds := map[time.Duration]bool{}
	for k := range 6 {
		seeds[time.Duration(1<<k)*time.Second+500*time.Millisecond] = true
	}
	for _, d := range clock.Sleeps() {
		if !seeds[d] {
			t.Fatalf("a wait of %v is none of the seeds' (waits %v)", d, clock.Sleeps())
		}
	}
	if len(clock.Sleeps()) != refused {
		t.Fatalf("%d waits for %d refusals", len(clock.Sleeps()), refused)
	}
}
