package upload

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/fakegcs"
)

// TestSessionsWithoutStateDir: a Client made without a StateDir (the
// library's default) says so in the words of the field the caller left
// empty, not of one it never set.
func TestSessionsWithoutStateDir(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c, err := New(context.Background(), Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Sessions()
	const want = "upload: no state directory: Options.StateDir is empty (or NoState is set), so no transfer is saved to resume; set StateDir (e.g. to DefaultStateDir())"
	if !errors.Is(err, ErrNoState) || err.Error() != want {
		t.Errorf("Sessions: %v\nwant %s", err, want)
	}
}

// TestUploadDirMissingBucket: UploadDir into a bucket that does not exist
// asks once, before any upload, and returns one error matching
// storage.ErrBucketNotExist, where it failed file by file.
func TestUploadDirMissingBucket(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	for i := range 7 {
		writeTemp(t, dir, "f"+itoa(int64(i)), randBytes(100, uint64(i)))
	}
	var told atomic.Int32
	c := newClient(t, srv, func(o *Options) { o.OnResult = func(*Result) { told.Add(1) } })
	results, err := c.UploadDir(context.Background(), dir, URL{Bucket: "no-such-bucket", Object: "p"}, UploadOptions{})
	const want = "upload: gs://no-such-bucket: storage: bucket doesn't exist; nothing was uploaded (check the bucket's name)"
	if !errors.Is(err, storage.ErrBucketNotExist) || err.Error() != want {
		t.Errorf("UploadDir: %v\nwant %s", err, want)
	}
	if len(results) != 0 || told.Load() != 0 {
		t.Errorf("%d results, %d told; want none", len(results), told.Load())
	}
	var uploads int
	for _, r := range srv.Log() {
		if strings.Contains(r.Op, "insert") {
			uploads++
		}
	}
	if uploads != 0 {
		t.Errorf("%d upload requests, want 0", uploads)
	}
}

// TestResetProgress: after an interrupted batch, whose unsent bytes stay
// in the totals (a rerun sends them), ResetProgress starts the next batch's
// totals from zero, so they add up again: every file and byte known is done.
func TestResetProgress(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	for i := range 3 {
		writeTemp(t, dir, "f"+itoa(int64(i)), randBytes(1000, uint64(i)))
	}
	var last BatchProgress
	ctx, cancel := context.WithCancel(context.Background())
	c := newClient(t, srv, func(o *Options) {
		o.BatchProgress = func(b BatchProgress) { last = b }
		o.Parallelism = 1
		o.OnResult = func(*Result) { cancel() } // interrupted after its first file
	})
	if _, err := c.UploadDir(ctx, dir, URL{Bucket: testBucket, Object: "p"}, UploadOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted UploadDir: %v", err)
	}
	if last.FilesDone == last.Files {
		t.Fatalf("the interrupted batch ended all its files: %+v", last)
	}
	c.ResetProgress()
	c.opts.OnResult = nil
	if _, err := c.UploadDir(context.Background(), dir, URL{Bucket: testBucket, Object: "p"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	if last.Files != 3 || last.FilesDone != 3 || last.Bytes != 3000 || last.BytesDone != 3000 {
		t.Errorf("after the rerun: %d/%d files, %d/%d bytes; want 3/3, 3000/3000", last.FilesDone, last.Files, last.BytesDone, last.Bytes)
	}
}
