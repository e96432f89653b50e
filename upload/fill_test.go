package upload

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

const mib = 1 << 20

// TestComponentPlanFollowsStreams: by default a composite upload has a
// component for each stream of the ceiling (-j), each of MinPartSize to
// DefaultComponentSize, at most 32, in whole rounds of the streams; a
// ComponentSize set is the least size, as before. Before issue 31.3,
// 256 MiB had 8 components at any -j; before the whole rounds, 8 at -j 5
// and 6 ("256 MiB at -j 5: 8 components of 32 MiB, want 10 of 25 MiB").
func TestComponentPlanFollowsStreams(t *testing.T) {
	for _, tc := range []struct {
		size      int64
		j         int
		component int64 // Options.ComponentSize
		per, n    int64
	}{
		{256 * mib, 8, 0, 32 * mib, 8},
		{256 * mib, 16, 0, 16 * mib, 16},
		{256 * mib, 32, 0, 8 * mib, 32},
		{256 * mib, 64, 0, 8 * mib, 32},        // no part below MinPartSize
		{128 * mib, 8, 0, 16 * mib, 8},         // was 4 of 32 MiB
		{100 * mib, 1, 0, 25 * mib, 4},         // one stream: four rounds of 25 MiB
		{256 * mib, 5, 0, 26843546, 10},        // two whole rounds of 5, not 8 of 32 MiB (3 streams idle in the second)
		{256 * mib, 6, 0, 22369622, 12},        // two whole rounds of 6
		{256 * mib, 4, 0, 32 * mib, 8},         // two whole rounds of 4, as before
		{1024 * mib, 5, 0, 35791395, 30},       // six rounds of 5: 30, within compose's 32
		{10240 * mib, 48, 0, 320 * mib, 32},    // more streams than compose takes: 32 components
		{1024 * mib, 8, 0, 32 * mib, 32},       // as before
		{1024 * mib, 32, 0, 32 * mib, 32},      // one wave of 32
		{4096 * mib, 8, 0, 128 * mib, 32},      // never more than 32 (compose's limit)
		{256 * mib, 32, 32 * mib, 32 * mib, 8}, // --component-size: the least, as before
		{20 * mib, 8, 0, 8 * mib, 3},
	} {
		o, err := checkOptions(Options{Parallelism: tc.j, ComponentSize: tc.component})
		if err != nil {
			t.Fatal(err)
		}
		c := &Client{opts: o}
		if per, n := componentSize(tc.size, c.componentLeast(tc.size)); per != tc.per || n != tc.n {
			t.Errorf("%d MiB at -j %d, component size %d: %d components of %d MiB, want %d of %d MiB",
				tc.size/mib, tc.j, tc.component, n, per/mib, tc.n, tc.per/mib)
		}
	}
}

// TestSliceCountFollowsStreams: by default a download has a slice for each
// stream of the ceiling, each of at least MinPartSize, at most
// maxAutoSlices; MaxSlices set is the count, as before.
func TestSliceCountFollowsStreams(t *testing.T) {
	for _, tc := range []struct {
		size      int64
		j, max, n int
	}{
		{256 * mib, 8, 0, 8},
		{256 * mib, 16, 0, 16},
		{256 * mib, 32, 0, 32},
		{256 * mib, 64, 0, 32}, // 8 MiB each at least
		{1024 * mib, 128, 0, maxAutoSlices},
		{128 * mib, 32, 0, 16},
		{256 * mib, 1, 0, 1}, // one stream: no slices
		{256 * mib, 32, 8, 8},
		{256 * mib, 1, 8, 8}, // MaxSlices set: one after another, as before
	} {
		o, err := checkOptions(Options{Parallelism: tc.j, MaxSlices: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		c := &Client{opts: o}
		if n := c.sliceCount(tc.size); n != tc.n {
			t.Errorf("%d MiB at -j %d, max slices %d: %d slices, want %d", tc.size/mib, tc.j, tc.max, n, tc.n)
		}
		if sl := c.sliceable(tc.size, ""); sl != (tc.n > 1) {
			t.Errorf("%d MiB at -j %d, max slices %d: sliceable %v", tc.size/mib, tc.j, tc.max, sl)
		}
	}
}

// fillOpts are the options of the wide transfers below: -j 12, 4 MiB
// chunks, large-file thresholds low enough for 96 MiB, components and
// slices at their defaults (following the streams).
func fillOpts(stateDir string, mod func(*Options)) func(*Options) {
	return func(o *Options) {
		o.Parallelism, o.ChunkSize, o.StateDir = 12, 4*mib, stateDir
		o.ParallelUpload, o.ParallelThreshold, o.SliceThreshold = ParallelOn, mib, mib
		if mod != nil {
			mod(o)
		}
	}
}

// TestWideUploadResumes: 96 MiB at -j 12 goes up as 12 components of
// 8 MiB (3 of 32 MiB before issue 31.3); cut short after its first chunks,
// a rerun continues it, never more than 12 PUTs at once (the bound on
// memory: streams × chunk size), and the object is byte-exact, its
// components gone.
func TestWideUploadResumes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(96*mib, 31)
	src := writeTemp(t, t.TempDir(), "wide.bin", data)
	dst, stateDir := URL{testBucket, "wide.bin"}, t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, fillOpts(stateDir, func(o *Options) {
		o.OnEvent = func(e resumable.Event) {
			if e.Kind == resumable.EventChunk && e.Persisted > 0 {
				cancel() // the record with this chunk is saved before the event goes out
			}
		}
	}))
	r, err := c.UploadFile(ctx, src, dst, UploadOptions{})
	if !errors.Is(err, context.Canceled) || r.Status != StatusInterrupted || !r.Saved {
		t.Fatalf("interrupted run: %s, saved %v, %v", r.Status, r.Saved, err)
	}
	ss, _ := c.Sessions()
	if len(ss) != 1 || ss[0].Components != 12 || ss[0].Offset <= 0 {
		t.Fatalf("saved %+v; want 12 components, some persisted", ss)
	}
	puts, most := countRequests(srv, http.MethodPut)
	c = newClient(t, srv, fillOpts(stateDir, func(o *Options) { o.HTTPClient = &http.Client{Transport: puts} }))
	r, err = c.UploadFile(context.Background(), src, dst, UploadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := most.Load(); m > 12 || m < 2 {
		t.Errorf("%d PUTs at once, want 2 to 12 (the budget)", m)
	}
	wantObject(t, srv, "wide.bin", data)
	wantNoComponents(t, srv)
	// The server's offsets are the truth: they may be past the record's.
	if r.Status != StatusResumed || r.ResumedFrom < ss[0].Offset || r.Note != "composite of 12 components" {
		t.Errorf("rerun %s from %d, %q; want resumed from %d or more, composite of 12 components", r.Status, r.ResumedFrom, r.Note, ss[0].Offset)
	}
}

// TestWideDownloadResumes: 96 MiB at -j 12 comes down as 12 slices (8
// before issue 31.3), never more than 12 GETs at once; cut short, a rerun
// continues every slice and the file is byte-exact.
func TestWideDownloadResumes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(96*mib, 32)
	srv.PutObject(testBucket, "wide", data)
	stall := holdGets(srv, 2*mib)
	stateDir, dst := t.TempDir(), filepath.Join(t.TempDir(), "wide")
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, fillOpts(stateDir, func(o *Options) {
		o.Progress = func(p Progress) {
			if p.Done >= 12*mib {
				cancel()
			}
		}
	}))
	if r, err := c.Download(ctx, URL{testBucket, "wide"}, dst, DownloadOptions{}); r.Status != StatusInterrupted {
		t.Fatalf("stopped download: %s (%v), want interrupted", r.Status, err)
	}
	stall.Remove()
	getsServed(t, srv)
	if rec := onlyRecord(t, stateDir); len(rec.Download.Slices) != 12 {
		t.Fatalf("%d slices saved, want 12", len(rec.Download.Slices))
	}
	srv.ResetStats()
	gets, most := countRequests(srv, http.MethodGet)
	c = newClient(t, srv, fillOpts(stateDir, func(o *Options) { o.HTTPClient = &http.Client{Transport: gets} }))
	r, err := c.Download(context.Background(), URL{testBucket, "wide"}, dst, DownloadOptions{})
	if err != nil || r.Status != StatusResumed || r.ResumedFrom < 12*mib {
		t.Fatalf("rerun: %s from %d (%v)", r.Status, r.ResumedFrom, err)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Fatalf("downloaded %d bytes, not the object's %d", len(got), len(data))
	}
	if m := most.Load(); m > 12 || m < 2 {
		t.Errorf("%d GETs at once, want 2 to 12 (the budget)", m)
	}
	if n := len(getRanges(t, srv)); n != 12 {
		t.Errorf("rerun made %d GETs, want one for each of 12 slices", n)
	}
}

// countRequests is a transport to srv that counts its requests of method
// in flight, from their start to the close of their response's body; most
// is the most at once.
func countRequests(srv *fakegcs.Server, method string) (rt http.RoundTripper, most *atomic.Int32) {
	var mu sync.Mutex
	var now int32
	most = new(atomic.Int32)
	done := func() { mu.Lock(); now--; mu.Unlock() }
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != method {
			return srv.Client().Transport.RoundTrip(req)
		}
		mu.Lock()
		now++
		most.Store(max(most.Load(), now))
		mu.Unlock()
		resp, err := srv.Client().Transport.RoundTrip(req)
		if err != nil {
			done()
			return resp, err
		}
		resp.Body = &onClose{ReadCloser: resp.Body, f: done}
		return resp, nil
	}), most
}
