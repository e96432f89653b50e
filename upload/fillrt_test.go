package upload

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// componentPUTs counts, per component, the requests that carried its bytes.
func componentPUTs(log []fakegcs.Request) map[string]int {
	n := map[string]int{}
	for _, q := range log {
		if isComponentName(q.Object) && q.Method == "PUT" && q.BytesIn > 0 {
			n[q.Object]++
		}
	}
	return n
}

// At the default chunk size a component goes up from the file in one
// request: the file needs no chunk buffer, and each chunk past the first
// cost its stream a round trip waiting for the 308 (on a 60 ms link, 60 ms
// of every component's 1.7 s). An explicit ChunkSize keeps its meaning.
func TestComponentInOneRequest(t *testing.T) {
	ctx := context.Background()
	per := int64(DefaultChunkSize + 256<<10) // more than one default chunk
	data := randBytes(int(2*per), 71)
	for _, tc := range []struct {
		name  string
		chunk int
		want  int // requests per component
	}{{"default", 0, 1}, {"explicit 16MiB", DefaultChunkSize, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			c := newClient(t, srv, composeOpts(per, nil, func(o *Options) {
				o.ChunkSize, o.ParallelUpload, o.Parallelism = tc.chunk, ParallelOn, 2
			}))
			src := writeTemp(t, t.TempDir(), "f.bin", data)
			r, err := c.UploadFile(ctx, src, URL{testBucket, "o"}, UploadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wantObject(t, srv, "o", data)
			if !strings.Contains(r.Note, "composite of 2 components") {
				t.Fatalf("note %q", r.Note)
			}
			puts := componentPUTs(srv.Log())
			if len(puts) != 2 {
				t.Fatalf("requests per component %v; want 2 components", puts)
			}
			for name, n := range puts {
				if n != tc.want {
					t.Errorf("%s: %d requests with bytes; want %d", name, n, tc.want)
				}
			}
		})
	}
}

// The bucket's settings (ParallelAuto) are read while the components'
// sessions start, not before: one after the other they cost a large
// upload two round trips more. The bucket's GET is held here until a
// session has been started; read first, it would wait for ever (the test
// fails after 10 s instead). No component sends a byte before the
// verdict: into a bucket that refuses composing (NEARLINE), every session
// started is cancelled, none carried a byte, and the file goes up whole,
// with the warning once.
func TestBucketCheckOverlapsSessions(t *testing.T) {
	ctx := context.Background()
	data := randBytes(4*256<<10, 72)
	for _, class := range []string{"", "NEARLINE"} {
		t.Run("class "+class, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			if class != "" {
				if _, err := srv.Client().Transport.RoundTrip(mustReq(t, srv, class)); err != nil {
					t.Fatal(err)
				}
			}
			started := make(chan struct{})
			var once sync.Once
			rt := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				switch {
				case req.Method == "POST" && req.URL.Query().Get("uploadType") == "resumable":
					resp, err := srv.Client().Transport.RoundTrip(req)
					once.Do(func() { close(started) })
					return resp, err
				case req.Method == "GET" && strings.HasSuffix(req.URL.Path, "/b/"+testBucket):
					select {
					case <-started:
					case <-time.After(10 * time.Second):
						return nil, errors.New("test: the bucket's settings were read before any session started")
					}
				}
				return srv.Client().Transport.RoundTrip(req)
			})
			var w warnings
			c := newClient(t, srv, composeOpts(256<<10, &w, func(o *Options) {
				o.HTTPClient, o.Parallelism = &http.Client{Transport: rt}, 4
			}))
			src := writeTemp(t, t.TempDir(), "f.bin", data)
			r, err := c.UploadFile(ctx, src, URL{testBucket, "o"}, UploadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			attrs := wantObject(t, srv, "o", data)
			wantNoComponents(t, srv)
			initiated, cancelled := 0, 0
			for _, q := range srv.Log() {
				switch {
				case isComponentName(q.Object) && q.Phase == fakegcs.PhaseInitiate && q.Status == 200:
					initiated++
				case q.Phase == fakegcs.PhaseCancel:
					cancelled++
				}
			}
			puts := componentPUTs(srv.Log())
			if class == "" {
				if attrs.ComponentCount != 4 || r.Note != "composite of 4 components" || len(puts) != 4 || initiated != 4 || cancelled != 0 {
					t.Errorf("%d components, note %q, %d sessions, %d cancelled, bytes to %v; want composed of 4",
						attrs.ComponentCount, r.Note, initiated, cancelled, puts)
				}
				if got := w.all(); len(got) != 1 || got[0] != notice {
					t.Errorf("warnings %q; want the notice once", got)
				}
				return
			}
			if attrs.ComponentCount != 0 || initiated == 0 || cancelled != initiated || len(puts) != 0 {
				t.Errorf("%d components, %d sessions started, %d cancelled, bytes to %v; want the file whole, every session cancelled, no component byte",
					attrs.ComponentCount, initiated, cancelled, puts)
			}
			if got := w.all(); len(got) != 1 || !strings.Contains(got[0], "uploaded whole, not as composite objects: its default storage class is NEARLINE") {
				t.Errorf("warnings %q; want the reason once", got)
			}
		})
	}
}

// mustReq is a request that sets the test bucket's default storage class.
func mustReq(t *testing.T, srv *fakegcs.Server, class string) *http.Request {
	req, err := http.NewRequest("PATCH", srv.URL()+"/storage/v1/b/"+testBucket, strings.NewReader(`{"storageClass":"`+class+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// A composite upload at the default chunk size (one request per
// component) of 12 components, killed at -j 6 once one is done (so at
// most 6 are, the others in flight or not started), continues at -j 3:
// the saved plan runs on the 3 streams it has now (never more than 3 PUTs
// at once), no finished component is sent again, and the object is
// byte-exact, its components gone.
func TestUploadResumesOnFewerStreams(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(96*mib, 73)
	src := writeTemp(t, t.TempDir(), "wide.bin", data)
	dst, stateDir := URL{testBucket, "wide.bin"}, t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, fillOpts(stateDir, func(o *Options) {
		o.ChunkSize, o.Parallelism, o.ComponentSize = 0, 6, 8*mib
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventFinished && e.Part > 0 {
				cancel() // its final answer is in: the component is recorded done, cancelled or not
			}
		}
	}))
	r, err := c.UploadFile(ctx, src, dst, UploadOptions{})
	if !errors.Is(err, context.Canceled) || r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted run: %s, saved %v, %v", r.Status, r.Saved, err)
	}
	rec := onlyRecord(t, stateDir)
	var done []string
	for _, comp := range rec.Upload.Components {
		if comp.Done() {
			done = append(done, comp.Name)
		}
	}
	if len(rec.Upload.Components) != 12 || len(done) == 0 || len(done) > 6 {
		t.Fatalf("saved %d components, %d done; want 12, 1 to 6 done", len(rec.Upload.Components), len(done))
	}
	srv.ResetStats()
	puts, most := countRequests(srv, http.MethodPut)
	c = newClient(t, srv, fillOpts(stateDir, func(o *Options) {
		o.ChunkSize, o.Parallelism, o.ComponentSize, o.HTTPClient = 0, 3, 8*mib, &http.Client{Transport: puts}
	}))
	r, err = c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > 3 || m < 2 {
		t.Errorf("%d PUTs at once, want 2 to 3 (the budget now)", m)
	}
	wantObject(t, srv, "wide.bin", data)
	wantNoComponents(t, srv)
	sent := sentTo(srv.Log())
	for _, name := range done {
		if sent[name] != 0 {
			t.Errorf("finished component %s sent again: %d bytes", name, sent[name])
		}
	}
	if r.Status != StatusResumed || r.ResumedFrom < int64(len(done))*8*mib || r.Note != "composite of 12 components" {
		t.Errorf("rerun %s from %d, %q; want resumed from %d or more, composite of 12 components", r.Status, r.ResumedFrom, r.Note, len(done)*8*mib)
	}
}
