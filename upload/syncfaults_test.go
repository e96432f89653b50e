package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A sync up and a sync down under about one fault in ten requests (every
// kind a network gives) end byte-exact, with deletes made; a third sync
// finds nothing to do.
func TestSyncUnderFaults(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{Seed: 7, DisableMD5: true})
	src := t.TempDir()
	files := mixedTree(t, src, 70)
	srv.PutObject(testBucket, "b/stale", []byte("stale"))
	tenPercentFaults(srv, "storage.objects.insert")
	tenPercentFaults(srv, "storage.objects.get")
	tenPercentFaults(srv, "storage.objects.list")
	c, _ := syncClient(t, srv, func(o *Options) { o.Parallelism = 6; o.SmallFileThreshold = 512 << 10 })
	o := SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)} // b/stale alone: the sides share no path yet

	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Copied != len(files) || rep.Deleted != 1 {
		t.Fatalf("sync up: %+v, %v", rep, err)
	}
	for rel, data := range files {
		wantObject(t, srv, "b/"+rel, data)
	}
	dst := t.TempDir()
	writeTemp(t, dst, "extra", []byte("extra"))
	rep, err = c.Sync(context.Background(), prefixB, LocalSide(dst), o)
	if err != nil || rep.Copied != len(files) || rep.Deleted != 1 {
		t.Fatalf("sync down: %+v, %v", rep, err)
	}
	for rel, data := range files {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: %d bytes, %v", rel, len(got), err)
		}
	}
	if leftovers(t, dst) != nil {
		t.Errorf("temporary files left: %v", leftovers(t, dst))
	}
	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Unchanged != len(files) || rep.Copied+rep.Deleted != 0 {
		t.Errorf("third sync: %+v, %v", rep, err)
	}
}

// A sync cancelled after its first copy reports the rest interrupted,
// withholds its deletes (ErrDeletesWithheld, "the sync was interrupted"),
// and a rerun finishes the copies and then deletes.
func TestSyncInterrupted(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	files := mixedTree(t, src, 14)
	srv.PutObject(testBucket, "b/stale", []byte("stale"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism = 1
		o.OnResult = func(r *Result) {
			if r.Status == StatusUploaded {
				cancel() // the first copy done: Ctrl-C
			}
		}
	})
	rep, err := c.Sync(ctx, LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if !errors.Is(err, ErrSomeFailed) || !errors.Is(err, ErrDeletesWithheld) || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v", err)
	}
	if rep == nil || rep.Interrupted == 0 || rep.Copied+rep.Interrupted != len(files) || rep.Deleted != 0 ||
		rep.DeletesWithheld != 1 || rep.WithheldBecause != "the sync was interrupted" {
		t.Fatalf("report %+v", rep)
	}
	if _, err := srv.Attrs(testBucket, "b/stale"); err != nil {
		t.Errorf("b/stale was deleted by an interrupted sync: %v", err)
	}
	c2, _ := syncClient(t, srv, nil)
	rep, err = c2.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, MaxDelete: MaxDeletePercent(100)})
	if err != nil || rep.Copied != len(files)-rep.Unchanged || rep.Unchanged == 0 || rep.Deleted != 1 {
		t.Errorf("rerun: %+v, %v", rep, err)
	}
	for rel, data := range files {
		wantObject(t, srv, "b/"+rel, data)
	}
}
