package fakegcs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"

	"github.com/gcsput/gcsput/fakegcs"
)

// manualClock is Options.Now for the limits: it moves only when the test
// moves it.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func newManualClock() *manualClock { return &manualClock{t: time.Unix(1_700_000_000, 0)} }

func (c *manualClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func limitServer(t *testing.T, l fakegcs.Limits) (*fakegcs.Server, *manualClock) {
	t.Helper()
	clock := newManualClock()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Limits: l, Now: clock.now})
	return srv, clock
}

func insert(t *testing.T, srv *fakegcs.Server, name string) reply {
	t.Helper()
	return do(t, srv, "POST", "/upload/storage/v1/b/bkt/o?uploadType=media&name="+name, []byte("data"))
}

// wantRefused checks r is GCS's answer beyond a limit: status, reason,
// domain and message, in the JSON error shape.
func wantRefused(t *testing.T, r reply, status int, reason, domain, msg string) {
	t.Helper()
	e, err := parseAPIError(r.body)
	if err != nil || r.status != status || e.Error.Code != status || e.Error.Message != msg || len(e.Error.Errors) != 1 ||
		e.Error.Errors[0].Reason != reason || e.Error.Errors[0].Domain != domain || e.Error.Errors[0].Message != msg {
		t.Fatalf("got %d %s (%v)\nwant %d %s/%s %q", r.status, r.body, err, status, domain, reason, msg)
	}
}

const capacityMsg = "You have exceeded your bucket's IO capacity. Please follow the request rate and access distribution " +
	"guidelines at https://cloud.google.com/storage/docs/conformance in order to avoid temporary limits on your bucket."

// A bucket's write capacity admits its burst at once, then one write per
// 1/rate, and refuses the rest with GCS's 429; reads are not writes.
func TestLimitBucketWrites(t *testing.T) {
	srv, clock := limitServer(t, fakegcs.Limits{WriteRate: 10, WriteBurst: 3})
	for i := range 3 {
		if r := insert(t, srv, fmt.Sprint("o", i)); r.status != 200 {
			t.Fatalf("write %d of the burst: %d %s", i, r.status, r.body)
		}
	}
	wantRefused(t, insert(t, srv, "o3"), 429, "rateLimitExceeded", "usageLimits", capacityMsg)
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o0", nil); r.status != 200 {
		t.Fatalf("a read: %d %s", r.status, r.body)
	}
	if r := do(t, srv, "DELETE", "/storage/v1/b/bkt/o/o0", nil); r.status != 429 {
		t.Fatalf("a delete beyond the capacity: %d, want 429", r.status)
	}
	clock.add(100 * time.Millisecond) // one token
	if r := insert(t, srv, "o3"); r.status != 200 {
		t.Fatalf("after 1/rate: %d %s", r.status, r.body)
	}
	wantRefused(t, insert(t, srv, "o4"), 429, "rateLimitExceeded", "usageLimits", capacityMsg)
	st := srv.Stats()
	if st.Refused[fakegcs.LimitBucketWrites] != 3 || st.Refused[fakegcs.LimitBucketReads] != 0 || st.Capacity["bkt"].Writes != 10 {
		t.Errorf("refused %v, capacity %v; want 3 writes refused at 10/s", st.Refused, st.Capacity)
	}
	if n := len(srv.InsertCounts("bkt")); n != 4 {
		t.Errorf("%d objects inserted, want 4", n)
	}
}

// With Status 503 a bucket beyond its capacity answers as GCS does while it
// redistributes its load.
func TestLimitBucket503(t *testing.T) {
	srv, _ := limitServer(t, fakegcs.Limits{WriteRate: 1, Status: 503})
	insert(t, srv, "a")
	wantRefused(t, insert(t, srv, "b"), 503, "backendError", "global", "We encountered an internal error. Please try again.")
	if _, err := fakegcs.New(fakegcs.Options{Limits: fakegcs.Limits{WriteRate: 1, Status: 500}}); err == nil ||
		!strings.Contains(err.Error(), "want 429 or 503") {
		t.Errorf("status 500: %v", err)
	}
}

// Reads (metadata, media, listings, XML) spend the read capacity only.
func TestLimitBucketReads(t *testing.T) {
	srv, clock := limitServer(t, fakegcs.Limits{ReadRate: 2, ReadBurst: 4})
	insert(t, srv, "o")
	for i, path := range []string{"/storage/v1/b/bkt/o/o", "/storage/v1/b/bkt/o/o?alt=media", "/storage/v1/b/bkt/o", "/bkt/o"} {
		if r := do(t, srv, "GET", path, nil); r.status != 200 {
			t.Fatalf("read %d (%s): %d %s", i, path, r.status, r.body)
		}
	}
	wantRefused(t, do(t, srv, "GET", "/storage/v1/b/bkt/o", nil), 429, "rateLimitExceeded", "usageLimits", capacityMsg)
	if r := do(t, srv, "GET", "/bkt/o", nil); r.status != 429 || !strings.Contains(r.body, "<Code>SlowDown</Code>") {
		t.Errorf("XML read beyond the capacity: %d %s", r.status, r.body)
	}
	clock.add(500 * time.Millisecond)
	if r := do(t, srv, "GET", "/storage/v1/b/bkt/o/o", nil); r.status != 200 {
		t.Fatalf("after 1/rate: %d", r.status)
	}
	if r := insert(t, srv, "p"); r.status != 200 {
		t.Errorf("a write: %d", r.status)
	}
	if st := srv.Stats(); st.Refused[fakegcs.LimitBucketReads] != 2 || st.Refused[fakegcs.LimitBucketWrites] != 0 {
		t.Errorf("refused %v, want 2 reads", st.Refused)
	}
}

// A bucket kept near its capacity grows it by 2^(1/20) per busy window of
// Doubling/20, so 20 busy windows double it; windows offered less than
// 80% of the capacity leave it as it is.
func TestLimitGrowth(t *testing.T) {
	for _, c := range []struct {
		name  string
		share float64 // of the capacity offered each window; 0: until one is refused
		want  float64
	}{{"at capacity", 0, 200}, {"80%", 0.8, 200}, {"70%", 0.7, 100}} {
		t.Run(c.name, func(t *testing.T) {
			// 100 writes/s at first, windows of 100 ms.
			srv, clock := limitServer(t, fakegcs.Limits{WriteRate: 100, Doubling: 2 * time.Second})
			for w := range 20 {
				offerWindow(t, srv, fmt.Sprint("w", w), c.share, 0.1)
				clock.add(100 * time.Millisecond)
			}
			insert(t, srv, "last") // judges the 20th window
			if got := srv.Stats().Capacity["bkt"].Writes; math.Abs(got-c.want) > 1e-6 {
				t.Fatalf("capacity %v after 20 windows, want %v", got, c.want)
			}
			clock.add(time.Hour) // idle: it keeps what it reached
			insert(t, srv, "later")
			if got := srv.Stats().Capacity["bkt"].Writes; math.Abs(got-c.want) > 1e-6 {
				t.Fatalf("capacity %v after an idle hour, want %v", got, c.want)
			}
		})
	}
}

// offerWindow offers one window's writes: share of the capacity's worth
// in a window of secs, or with share 0, writes until one is refused.
func offerWindow(t *testing.T, srv *fakegcs.Server, prefix string, share, secs float64) {
	t.Helper()
	if r := insert(t, srv, prefix+"-first"); r.status != 200 { // judges the window before
		t.Fatalf("%s first write: %d", prefix, r.status)
	}
	n := math.MaxInt
	if share > 0 {
		n = int(math.Ceil(share*srv.Stats().Capacity["bkt"].Writes*secs)) - 1
	}
	for i := 0; i < n; i++ {
		if r := insert(t, srv, fmt.Sprint(prefix, "-", i)); r.status != 200 {
			if share > 0 {
				t.Fatalf("%s write %d of %d: %d", prefix, i, n, r.status)
			}
			return
		}
	}
}

// The burst grows with the capacity: a grown bucket admits more at once.
func TestLimitGrowthBurst(t *testing.T) {
	srv, clock := limitServer(t, fakegcs.Limits{WriteRate: 10, WriteBurst: 10, Doubling: 20 * time.Second})
	for w := range 20 { // windows of 1 s, at the capacity
		offerWindow(t, srv, fmt.Sprint("w", w), 0, 1)
		clock.add(time.Second)
	}
	clock.add(10 * time.Second) // refill the grown bucket
	admitted := 0
	for i := range 30 {
		if insert(t, srv, fmt.Sprint("b", i)).status == 200 {
			admitted++
		}
	}
	if admitted != 20 {
		t.Errorf("%d writes admitted at once, want the doubled burst, 20", admitted)
	}
}

const objectMsg = "The object bkt/%s exceeded the rate limit for object mutation operations (create, update, and delete). " +
	"Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429."

// One object name takes one write per ObjectInterval: an overwrite, a
// delete, a patch or a compose onto it sooner gets GCS's 429; other names
// are not held back. A resumable upload counts when it creates the object
// (its final chunk), not when its session starts.
func TestLimitObjectWrites(t *testing.T) {
	srv, clock := limitServer(t, fakegcs.Limits{ObjectInterval: time.Second})
	if r := insert(t, srv, "o"); r.status != 200 {
		t.Fatal(r.status)
	}
	clock.add(999 * time.Millisecond)
	wantRefused(t, insert(t, srv, "o"), 429, "rateLimitExceeded", "usageLimits", fmt.Sprintf(objectMsg, "o"))
	wantRefused(t, do(t, srv, "DELETE", "/storage/v1/b/bkt/o/o", nil), 429, "rateLimitExceeded", "usageLimits", fmt.Sprintf(objectMsg, "o"))
	wantRefused(t, do(t, srv, "PATCH", "/storage/v1/b/bkt/o/o", []byte(`{"contentType":"text/plain"}`)), 429, "rateLimitExceeded", "usageLimits", fmt.Sprintf(objectMsg, "o"))
	if r := insert(t, srv, "p"); r.status != 200 {
		t.Fatalf("another name: %d", r.status)
	}
	clock.add(time.Millisecond)
	if r := do(t, srv, "PATCH", "/storage/v1/b/bkt/o/o", []byte(`{"contentType":"text/plain"}`)); r.status != 200 {
		t.Fatalf("a second later: %d %s", r.status, r.body)
	}
	compose := []byte(`{"sourceObjects":[{"name":"p"}]}`)
	wantRefused(t, do(t, srv, "POST", "/storage/v1/b/bkt/o/o/compose", compose), 429, "rateLimitExceeded", "usageLimits", fmt.Sprintf(objectMsg, "o"))

	uri := initiate(t, srv, "o") // the session's start is no write to o
	wantRefused(t, do(t, srv, "PUT", uri, []byte("data"), "Content-Range: bytes 0-3/4"), 429, "rateLimitExceeded", "usageLimits", fmt.Sprintf(objectMsg, "o"))
	clock.add(time.Second)
	if r := do(t, srv, "PUT", uri, []byte("data"), "Content-Range: bytes 0-3/4"); r.status != 200 {
		t.Fatalf("the final chunk again a second later: %d %s", r.status, r.body)
	}
	if got := srv.Stats().Refused[fakegcs.LimitObjectWrites]; got != 5 {
		t.Errorf("%d refused by the per-object limit, want 5", got)
	}
}

// The control API reads and replaces the limits; a misspelt or impossible
// limit is refused, not ignored; the stats show the refusals.
func TestLimitsControlAPI(t *testing.T) {
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	r := do(t, srv, "PUT", "/_fakegcs/limits", []byte(`{"writeRate":1,"writeBurst":1,"doubling":"2s","objectInterval":1,"linkRate":1000000}`))
	want := fakegcs.Limits{WriteRate: 1, WriteBurst: 1, Doubling: 2 * time.Second, ObjectInterval: time.Second, LinkRate: 1e6}
	if r.status != 200 || srv.Limits() != want {
		t.Fatalf("PUT: %d %s; limits %+v", r.status, r.body, srv.Limits())
	}
	if r := do(t, srv, "GET", "/_fakegcs/limits", nil); !strings.Contains(r.body, `"doubling":"2s"`) || !strings.Contains(r.body, `"objectInterval":"1s"`) {
		t.Errorf("GET: %s", r.body)
	}
	for _, bad := range []string{`{"writeRte":1}`, `{"status":500}`, `{"readRate":-1}`} {
		if r := do(t, srv, "PUT", "/_fakegcs/limits", []byte(bad)); r.status != 400 {
			t.Errorf("PUT %s: %d %s, want 400", bad, r.status, r.body)
		}
	}
	if srv.Limits() != want {
		t.Errorf("a refused PUT changed the limits: %+v", srv.Limits())
	}
	insert(t, srv, "a")
	insert(t, srv, "b")
	var st fakegcs.Stats
	if err := json.Unmarshal([]byte(do(t, srv, "GET", "/_fakegcs/stats", nil).body), &st); err != nil || st.Refused[fakegcs.LimitBucketWrites] != 1 {
		t.Errorf("stats: %+v (%v)", st.Refused, err)
	}
	if r := do(t, srv, "PUT", "/_fakegcs/limits", []byte(`{}`)); r.status != 200 || insert(t, srv, "b").status != 200 {
		t.Errorf("no limits: %d", r.status)
	}
}

// The official client meets a bucket's 429 and retries until the bucket
// admits it: the object arrives whole.
func TestLimitOfficialClientRetries(t *testing.T) {
	clock := newManualClock()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Now: clock.now,
		Limits: fakegcs.Limits{WriteRate: 1, WriteBurst: 1}})
	c := newClient(t, srv)
	insert(t, srv, "first") // spends the burst
	var once sync.Once
	data := randBytes(1000, 7)
	obj := c.Bucket("bkt").Object("o").Retryer(storage.WithBackoff(gax.Backoff{Initial: time.Millisecond, Max: time.Millisecond}),
		storage.WithPolicy(storage.RetryAlways))
	w := obj.NewWriter(context.Background())
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go waitRefused(srv, done, func() { once.Do(func() { clock.add(time.Second) }) })
	if err := w.Close(); err != nil {
		t.Fatalf("upload: %v", err)
	}
	got := read(t, c, "bkt", "o", 0, -1)
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want the %d written", len(got), len(data))
	}
	if n := srv.Stats().Refused[fakegcs.LimitBucketWrites]; n < 1 {
		t.Errorf("no 429 was sent")
	}
}

// waitRefused calls fn once the server has refused a write (the clock
// then moves a second, and the client's retry is admitted), or returns
// when done closes.
func waitRefused(srv *fakegcs.Server, done <-chan struct{}, fn func()) {
	for srv.Stats().Refused[fakegcs.LimitBucketWrites] == 0 {
		select {
		case <-done:
			return
		case <-time.After(time.Millisecond): // polls for the event; no result depends on how long
		}
	}
	fn()
}

// A rewrite that takes several calls writes its destination name once: its
// later calls, which carry the rewriteToken, are not refused by the
// per-object limit; a new rewrite onto the same name within the interval is.
func TestLimitObjectWritesRewriteCalls(t *testing.T) {
	clock := newManualClock()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20, Now: clock.now,
		Limits: fakegcs.Limits{ObjectInterval: time.Second}})
	if _, err := srv.PutObject("bkt", "src", randBytes(3<<20, 9)); err != nil {
		t.Fatal(err)
	}
	status, rr, body := rewriteCall(t, srv, "", nil)
	for calls := 1; status == 200 && !rr.Done && calls < 5; calls++ {
		status, rr, body = rewriteCall(t, srv, tokenParam(rr.RewriteToken)[1:], nil)
	}
	if status != 200 || !rr.Done || rr.TotalBytesRewritten != 3<<20 {
		t.Fatalf("rewrite in calls of 1 MiB: %d %s", status, body)
	}
	r := do(t, srv, "POST", "/storage/v1/b/bkt/o/src/rewriteTo/b/dst/o/out", nil)
	wantRefused(t, r, 429, "rateLimitExceeded", "usageLimits", "The object dst/out exceeded the rate limit for object mutation operations "+
		"(create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.")
}
