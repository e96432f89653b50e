package upload

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// smallTree writes n files of size bytes under a new directory.
func smallTree(t *testing.T, n, size int) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, "f"+itoa(int64(i))), randBytes(size, uint64(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A batch counts its tree while its preflight request is in flight, not
// after the answer: the bucket's round trips and the walk overlap, and the
// first file starts once both are done. The test holds the preflight
// (testIamPermissions) until BatchProgress has counted every file; counted
// after the answer, as before, the count never comes and the request ends
// with the call's deadline.
func TestCopyAllCountsDuringPreflight(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := smallTree(t, 5, 100)
	counted := make(chan struct{})
	var once sync.Once
	var heldUntilCounted bool
	c := newClient(t, srv, func(o *Options) {
		o.BatchProgress = func(b BatchProgress) {
			if b.Files == 5 && b.Bytes == 500 {
				once.Do(func() { close(counted) })
			}
		}
		o.HTTPClient = &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if strings.HasSuffix(req.URL.Path, "/iam/testPermissions") {
				select {
				case <-counted:
					heldUntilCounted = true
				case <-req.Context().Done():
					return nil, req.Context().Err()
				}
			}
			return srv.Client().Transport.RoundTrip(req)
		})}
	})
	// The deadline only ends the old order's wait; the new one never meets it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CopyAll(ctx, []string{dir + "/"}, "gs://"+testBucket+"/p/", CopyAllOptions{Recursive: true})
	if err != nil || !heldUntilCounted {
		t.Fatalf("CopyAll: %v (preflight held until the tree was counted: %v); want the tree counted while preflight was in flight", err, heldUntilCounted)
	}
	if len(res) != 5 || srv.Count("storage.objects.insert") != 5 {
		t.Errorf("%d results, %d inserts; want 5 of each", len(res), srv.Count("storage.objects.insert"))
	}
}

// A batch that preflight refuses takes back what its count told the meter,
// and stops the walk: the Client's next batch counts from zero.
func TestCopyAllRefusedCountsNothing(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := smallTree(t, 4, 10)
	var mu sync.Mutex
	var last BatchProgress
	c := newClient(t, srv, func(o *Options) {
		o.BatchProgress = func(b BatchProgress) {
			mu.Lock()
			defer mu.Unlock()
			last = b
		}
	})
	ctx := context.Background()
	_, err := c.CopyAll(ctx, []string{dir + "/"}, "gs://no-such-bucket/p/", CopyAllOptions{Recursive: true})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "bucket does not exist") {
		t.Fatalf("CopyAll into a missing bucket: %v; want ErrRefused saying it does not exist", err)
	}
	mu.Lock()
	if last.Files != 0 || last.Bytes != 0 {
		t.Errorf("after the refusal the meter holds %d files, %d bytes; want 0, 0", last.Files, last.Bytes)
	}
	mu.Unlock()
	if _, err := c.CopyAll(ctx, []string{dir + "/"}, "gs://"+testBucket+"/p/", CopyAllOptions{Recursive: true}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if last.Files != 4 || last.FilesDone != 4 || last.Bytes != 40 || last.BytesDone != 40 {
		t.Errorf("the next batch ends at %d/%d files, %d/%d bytes; want 4/4 and 40/40", last.FilesDone, last.Files, last.BytesDone, last.Bytes)
	}
}
