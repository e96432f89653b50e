package upload_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/upload"
)

// Sync and PlanSync ask the bucket first, as CopyAll does: a bucket that
// does not exist is one ErrRefused error naming it, before any listing or
// transfer, whichever side it is on.
func TestSyncPreflightMissingBucket(t *testing.T) {
	srv, c := opsClient(t)
	ctx := context.Background()
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a": "alpha", "sub/b": "bravo"})
	remote, err := upload.ParseSide("gs://nosuchbkt/p")
	if err != nil {
		t.Fatal(err)
	}
	want := "gs://nosuchbkt: bucket does not exist (check its name, or 'gcsput ls gs://nosuchbkt'); nothing was transferred"
	for _, tt := range []struct {
		name     string
		src, dst upload.Side
		plan     bool
	}{
		{"upload", upload.LocalSide(dir), remote, false},
		{"download", remote, upload.LocalSide(t.TempDir()), false},
		{"dry run", upload.LocalSide(dir), remote, true},
	} {
		var rep any
		if tt.plan {
			p, perr := c.PlanSync(ctx, tt.src, tt.dst, upload.SyncOptions{Delete: true})
			rep, err = p, perr
			if p == nil {
				rep = nil
			}
		} else {
			r, serr := c.Sync(ctx, tt.src, tt.dst, upload.SyncOptions{Delete: true})
			rep, err = r, serr
			if r == nil {
				rep = nil
			}
		}
		if !errors.Is(err, upload.ErrRefused) || err.Error() != want || rep != nil {
			t.Errorf("%s: %v, %v; want nil and ErrRefused %q", tt.name, rep, err, want)
		}
	}
	if n := srv.Count("storage.objects.list"); n != 0 {
		t.Errorf("%d listings of a bucket that does not exist; want none", n)
	}
}

// When the bucket cannot be asked (testIamPermissions fails) and it refuses
// every upload (403), an upload sync stops at its first refusal: the error
// matches ErrBatchStopped and says why, the failures in flight after it are
// marked ErrBatchStopped, and the rest are not tried.
func TestSyncStopsAtFirstRefusal(t *testing.T) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"dst"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403, Times: -1},
		{Op: "storage.buckets.testIamPermissions", Kind: fakegcs.KindStatus, Status: 403},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	var failed, alike int
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, NoState: true,
		Parallelism: 4, OnResult: func(r *upload.Result) {
			mu.Lock()
			defer mu.Unlock()
			if r.Status == upload.StatusFailed {
				failed++
				if errors.Is(r.Err, upload.ErrBatchStopped) {
					alike++
				}
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("f%03d", i)] = "data"
	}
	tree(t, dir, files)
	dst, _ := upload.ParseSide("gs://dst/p")
	rep, err := c.Sync(context.Background(), upload.LocalSide(dir), dst, upload.SyncOptions{})
	if !errors.Is(err, upload.ErrBatchStopped) || !strings.HasPrefix(err.Error(), "gs://dst: these credentials may not write there (403: ") ||
		!strings.HasSuffix(err.Error(), "; nothing more was started") {
		t.Errorf("Sync: %v; want ErrBatchStopped saying the credentials may not write there", err)
	}
	if rep == nil {
		t.Fatal("no report")
	}
	mu.Lock()
	defer mu.Unlock()
	if failed == 0 || alike != failed-1 {
		t.Errorf("%d failures, %d marked ErrBatchStopped; want all but the first marked", failed, alike)
	}
	if n := srv.Count("storage.objects.insert"); n == 0 || n > 8 {
		t.Errorf("%d uploads tried; want the first ones in flight (at most 2 × Parallelism), not all 100", n)
	}
}

// An upload sync puts its whole plan in BatchProgress's totals before the
// first byte, as CopyAll counts its walk: the first report of a transfer
// already knows every file and byte the sync will send, not only those
// started so far.
func TestSyncCountsItsPlanAhead(t *testing.T) {
	srv, err := fakegcs.New(fakegcs.Options{Buckets: []string{"dst"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	var reports []upload.BatchProgress
	c, err := upload.New(context.Background(), upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, NoState: true,
		Parallelism: 1, BatchProgress: func(b upload.BatchProgress) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, b)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a": "alpha", "b": "bravo!", "c/d": "charlie-delta"})
	dst, _ := upload.ParseSide("gs://dst/p")
	if _, err := c.Sync(context.Background(), upload.LocalSide(dir), dst, upload.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) == 0 {
		t.Fatal("no BatchProgress report")
	}
	first, last := reports[0], reports[len(reports)-1]
	if first.Files != 3 || first.Bytes != 24 || last.Files != 3 || last.Bytes != 24 || last.FilesDone != 3 {
		t.Errorf("first report %d files, %d bytes; last %d files (%d done), %d bytes; want 3 files, 24 bytes from the first to the last",
			first.Files, first.Bytes, last.Files, last.FilesDone, last.Bytes)
	}
}
