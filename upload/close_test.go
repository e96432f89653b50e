package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// openFDs counts the process's open file descriptors (-1 where /proc is
// not there to say).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// settles waits until ok holds; it fails t if ok still does not after a
// generous bound (closed connections' goroutines exit asynchronously).
func settles(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !ok(); {
		if time.Now().After(end) {
			t.Fatalf("%s: never settled", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Close closes the keep-alive connections of the transport New made: 50
// New/UploadFile/Close cycles leave no goroutine or descriptor behind (they
// held 3 → 153 goroutines and 11 → 111 descriptors until the 90 s idle
// timeout).
func TestCloseReleasesConnections(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	src := writeTemp(t, t.TempDir(), "f.bin", []byte("one small file"))
	cycle := func(i int) {
		c, err := New(context.Background(), Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}, Retry: testRetry()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.UploadFile(context.Background(), src, URL{testBucket, fmt.Sprintf("f%d", i)}, UploadOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	cycle(-1) // package-level state (the storage client's, net/http's) is made once
	g0, fd0 := runtime.NumGoroutine(), openFDs()
	for i := range 50 {
		cycle(i)
	}
	const slack = 4
	var g, fd int
	settles(t, "goroutines and descriptors", func() bool {
		g, fd = runtime.NumGoroutine(), openFDs()
		return g <= g0+slack && fd <= fd0+slack
	})
	t.Logf("goroutines %d → %d, descriptors %d → %d", g0, g, fd0, fd)
}

// Concurrent Close calls are safe: one closes, the others wait for it and
// return the same result.
func TestCloseConcurrentCalls(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	if _, err := c.Stat(context.Background(), URL{testBucket, "missing"}); err == nil {
		t.Fatal("Stat of a missing object succeeded")
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close #%d: %v", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after Close: %v", err)
	}
}

// After Close every method fails with an error matching ErrClosed, and no
// request is made.
func TestMethodsAfterCloseReturnErrClosed(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "o", []byte("object"))
	c := newClient(t, srv, nil)
	it := c.List(context.Background(), testBucket, "", "") // made before Close, used after
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Log())
	ctx, dir := context.Background(), t.TempDir()
	src := writeTemp(t, dir, "f.bin", []byte("data"))
	u := URL{testBucket, "o"}
	items := []Item{{Local: src, Remote: u}}
	calls := map[string]func() error{
		"UploadFile":   func() error { _, err := c.UploadFile(ctx, src, u, UploadOptions{}); return err },
		"UploadReader": func() error { _, err := c.UploadReader(ctx, bytes.NewReader(nil), u, UploadOptions{}); return err },
		"Upload":       func() error { _, err := c.Upload(ctx, items, UploadOptions{}); return err },
		"UploadDir":    func() error { _, err := c.UploadDir(ctx, dir, u, UploadOptions{}); return err },
		"UploadSeq": func() error {
			return c.UploadSeq(ctx, func(yield func(Item) bool) { yield(items[0]) }, UploadOptions{})
		},
		"Download":        func() error { _, err := c.Download(ctx, u, filepath.Join(dir, "d"), DownloadOptions{}); return err },
		"DownloadObjects": func() error { _, err := c.DownloadObjects(ctx, items, DownloadOptions{}); return err },
		"DownloadPrefix":  func() error { _, err := c.DownloadPrefix(ctx, u, dir, DownloadOptions{}); return err },
		"DownloadWriter":  func() error { _, err := c.DownloadWriter(ctx, u, &bytes.Buffer{}, DownloadOptions{}); return err },
		"Resume":          func() error { _, err := c.Resume(ctx); return err },
		"Stat":            func() error { _, err := c.Stat(ctx, u); return err },
		"Update": func() error {
			_, err := c.Update(ctx, u, storage.ObjectAttrsToUpdate{ContentType: "text/plain"}, UpdateOptions{})
			return err
		},
		"Delete":     func() error { return c.Delete(ctx, u, DeleteOptions{}) },
		"Compose":    func() error { _, err := c.Compose(ctx, u, u); return err },
		"ReadRange":  func() error { _, err := c.ReadRange(ctx, u, 0, 1, &bytes.Buffer{}); return err },
		"GCSessions": func() error { _, err := c.GCSessions(ctx, testBucket); return err },
		"Copy":       func() error { _, err := c.Copy(ctx, u, URL{testBucket, "c"}, CopyOptions{}); return err },
		"CopyPrefix": func() error { _, err := c.CopyPrefix(ctx, u, URL{testBucket, "c/"}, CopyOptions{}); return err },
		"Move": func() error {
			_, err := c.Move(ctx, sideOf("gs://bkt/o"), sideOf("gs://bkt/m"), MoveOptions{})
			return err
		},
		"MovePrefix": func() error { _, err := c.MovePrefix(ctx, u, sideOf("gs://bkt/m/"), MoveOptions{}); return err },
		"Sync": func() error {
			_, err := c.Sync(ctx, LocalSide(dir), RemoteSide(URL{testBucket, "s"}), SyncOptions{})
			return err
		},
		"Glob": func() error {
			for _, err := range c.Glob(ctx, URL{testBucket, "*"}, GlobOptions{}) {
				return err
			}
			return nil
		},
		"List": func() error {
			for _, err := range it {
				return err
			}
			return nil
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v; want ErrClosed", name, err)
		}
	}
	if n := len(srv.Log()) - before; n != 0 {
		t.Errorf("%d requests after Close", n)
	}
}

// Close cancels the transfers in flight and waits for them: the upload
// ends interrupted with its session saved, nothing of it happens after
// Close returned (no event, no request), and another Client resumes it
// from the server's offset.
func TestCloseCancelsAndWaitsForTransfers(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	state := t.TempDir()
	data := randBytes(2<<20, 70)
	src := writeTemp(t, t.TempDir(), "f.bin", data)
	closed := make(chan error, 1)
	var returned sync.WaitGroup
	returned.Add(1)
	var c *Client
	var once sync.Once
	var afterClose, late atomic.Int32
	c = newClient(t, srv, func(o *Options) {
		o.StateDir, o.SmallFileThreshold = state, -1
		o.OnEvent = func(e resumable.Event) {
			late.Add(afterClose.Load())
			if e.Kind == resumable.EventChunk && e.Persisted >= 512<<10 {
				once.Do(func() { go func() { closed <- c.Close() }() })
			}
		}
	})
	var r *Result
	var err error
	go func() {
		defer returned.Done()
		r, err = c.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	}()
	if cerr := <-closed; cerr != nil {
		t.Fatalf("Close: %v", cerr)
	}
	afterClose.Store(1)
	requests := len(srv.Log())
	returned.Wait()
	if n := late.Load(); n != 0 || len(srv.Log()) != requests {
		t.Fatalf("%d events and %d requests after Close returned", n, len(srv.Log())-requests)
	}
	if r.Status != StatusInterrupted || !r.Saved || !errors.Is(err, context.Canceled) {
		t.Fatalf("%s (saved %v): %v; want interrupted and saved, matching context.Canceled", r.Status, r.Saved, err)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir, o.SmallFileThreshold = state, -1 })
	r2, err := c2.UploadFile(context.Background(), src, URL{testBucket, "f.bin"}, UploadOptions{})
	if err != nil || r2.Status != StatusResumed || r2.ResumedFrom < 512<<10 {
		t.Fatalf("rerun: %s from %d: %v; want resumed from at least 512 KiB", r2.Status, r2.ResumedFrom, err)
	}
	wantObject(t, srv, "f.bin", data)
}
