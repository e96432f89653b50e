package upload

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

// Holds asked of an upload land on the object, small (one request) or
// large (a resumable session); a second upload over the held object is
// refused with ErrRetained in one request, never retried, and the object
// stays.
func TestUploadHolds(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	dir := t.TempDir()
	small := writeTemp(t, dir, "small", []byte("small"))
	big := writeTemp(t, dir, "big", randBytes(3<<20, 51))
	held := UploadOptions{Attrs: Attrs{Holds: Holds{TemporaryHold: true, EventBasedHold: true}}}
	for _, f := range []string{small, big} {
		r, err := c.UploadFile(context.Background(), f, URL{Bucket: testBucket, Object: "o/" + f[len(dir)+1:]}, held)
		if err != nil {
			t.Fatalf("upload %s: %v", f, err)
		}
		a, _ := srv.Attrs(testBucket, r.Object)
		if !a.TemporaryHold || !a.EventBasedHold {
			t.Fatalf("%s: holds not set: %+v", r.Object, a)
		}
	}
	srv.ResetStats()
	r, err := c.UploadFile(context.Background(), small, URL{Bucket: testBucket, Object: "o/small"}, UploadOptions{})
	if !IsRetained(err) || r.Status != StatusFailed {
		t.Fatalf("overwrite of a held object: %+v, %v; want ErrRetained", r, err)
	}
	if n := srv.Count("storage.objects.insert"); n != 1 {
		t.Fatalf("%d insert requests for the refused overwrite, want 1 (not retried)", n)
	}
	wantObject(t, srv, "o/small", []byte("small"))
}

// A copy takes the holds it is asked for, never its source's; a delete of
// a held object fails with ErrRetained in one request; Update releases
// the hold, and a retention is shortened only with the override.
func TestCopyHoldsDeleteAndRelease(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	if err := srv.CreateBucket("ret"); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, srv, nil)
	ctx := context.Background()
	srv.PutObject(testBucket, "s", []byte("source"))
	dst := URL{Bucket: testBucket, Object: "d"}
	if _, err := c.Copy(ctx, URL{Bucket: testBucket, Object: "s"}, dst, CopyOptions{Holds: Holds{TemporaryHold: true}}); err != nil {
		t.Fatal(err)
	}
	if a, _ := srv.Attrs(testBucket, "d"); !a.TemporaryHold || a.ContentType != "application/octet-stream" {
		t.Fatalf("copy: %+v", a)
	}
	srv.ResetStats()
	err := c.Delete(ctx, dst, DeleteOptions{})
	if !errors.Is(err, ErrRetained) {
		t.Fatalf("delete of a held object: %v, want ErrRetained", err)
	}
	if n := srv.Count("storage.objects.delete"); n != 1 {
		t.Fatalf("%d delete requests, want 1 (not retried)", n)
	}
	if _, err := c.Update(ctx, dst, storage.ObjectAttrsToUpdate{TemporaryHold: false}, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, dst, DeleteOptions{}); err != nil {
		t.Fatalf("delete once released: %v", err)
	}
}

// Sync writes its objects under SyncOptions.Holds, and its --delete meets
// a held object: that entry fails with ErrRetained, once, and the object
// stays; the rest of the sync is done.
func TestSyncHolds(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var rs moveResults
	c := newClient(t, srv, collecting(&rs))
	dir := t.TempDir()
	writeTemp(t, dir, "a", []byte("a"))
	srv.PutObject(testBucket, "p/gone", []byte("g"))
	if _, err := c.Update(context.Background(), URL{Bucket: testBucket, Object: "p/gone"}, storage.ObjectAttrsToUpdate{EventBasedHold: true}, UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.ResetStats()
	_, err := c.Sync(context.Background(), LocalSide(dir), RemoteSide(URL{Bucket: testBucket, Object: "p/"}),
		SyncOptions{Delete: true, MaxDelete: MaxDeleteCount(1), Holds: Holds{TemporaryHold: true}})
	if err == nil {
		t.Fatal("sync: no error, want the held object's delete to fail")
	}
	if a, _ := srv.Attrs(testBucket, "p/a"); !a.TemporaryHold {
		t.Fatalf("synced object: %+v", a)
	}
	if r := rs.m[""]; r == nil || r.Status != StatusFailed || !errors.Is(r.Err, ErrRetained) {
		t.Fatalf("delete result: %+v", r)
	}
	if n := srv.Count("storage.objects.delete"); n != 1 {
		t.Fatalf("%d delete requests, want 1", n)
	}
	wantObject(t, srv, "p/gone", []byte("g"))
}

// A move whose destination asks for holds (here inside one bucket: a move
// cannot add them, so it copies), cut short between rewrite calls, is
// finished by Resume: the destination is held, the source gone. (The
// rewrite token binds the first call's destination, holds included, as
// GCS's does; the record keeps them too, in copyDest.Holds, for a copy that
// must start over.)
func TestMoveHoldsTravelThroughResume(t *testing.T) {
	srv := newServer(t, fakegcs.Options{RewriteBytesPerCall: 1 << 20})
	data := randBytes(4<<20, 52)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 2<<20)
	held := MoveOptions{Upload: UploadOptions{Attrs: Attrs{Holds: Holds{EventBasedHold: true}}}}
	if r, _ := c.Move(ctx, sideOf("gs://bkt/s"), sideOf("gs://bkt/d"), held); r.Status != StatusInterrupted {
		t.Fatalf("interrupted move: %+v", r)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	rs, err := c2.Resume(context.Background())
	if len(rs) != 1 || err != nil || rs[0].Status != StatusMoved || rs[0].ResumedFrom != 2<<20 {
		t.Fatalf("resume: %+v, %v", rs, err)
	}
	got, a, err := srv.Object(testBucket, "d")
	if err != nil || !bytes.Equal(got, data) || !a.EventBasedHold {
		t.Fatalf("destination: %v, held %v", err, a.EventBasedHold)
	}
	if _, err := srv.Attrs(testBucket, "s"); err == nil {
		t.Error("the source is still there after the resumed move")
	}
}
