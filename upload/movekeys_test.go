package upload

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A move between buckets of an object under a customer-supplied key, with
// the key given, moves it as Copy copies it: the source read with its key,
// the destination written under the client's key, verified, the source
// deleted.
func TestMoveAcrossCSEK(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	data := randBytes(300<<10, 23)
	srv.PutObject(testBucket, "plain", data)
	c := newClient(t, srv, func(o *Options) { o.EncryptionKey = copyKey })
	ctx := context.Background()
	if _, err := c.Copy(ctx, URL{Bucket: testBucket, Object: "plain"}, URL{Bucket: testBucket, Object: "k"}, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := c.Move(ctx, sideOf("gs://bkt/k"), sideOf("gs://dst/k"), MoveOptions{})
	if err != nil || r.Status != StatusMoved {
		t.Fatalf("move of a CSEK object: %+v", r)
	}
	got, a, err := srv.Object("dst", "k")
	if err != nil || !bytes.Equal(got, data) || a.CustomerKeySHA256 != copyKey.SHA256() {
		t.Fatalf("destination %+v, %v", a, err)
	}
	if _, err := srv.Attrs(testBucket, "k"); err == nil {
		t.Error("the source is still there")
	}
}

// A move between buckets cut short between rewrite calls saves its token, as
// a copy does; the same move run again continues from it (the server rewrites
// only the rest) and removes the source.
func TestMoveAcrossInterruptedResumes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	data := randBytes(4<<20, 24)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 2<<20)
	if r, _ := c.Move(ctx, sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{}); r.Status != StatusInterrupted {
		t.Fatalf("interrupted move: %+v", r)
	}
	if ss, _ := c.Sessions(); len(ss) != 1 || ss[0].Kind != "rewrite" || ss[0].Offset != 2<<20 {
		t.Fatalf("sessions after the interrupted move: %+v", ss)
	}
	srv.ResetStats()
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c2.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{})
	if err != nil || r.Status != StatusMoved || r.ResumedFrom != 2<<20 || srv.Stats().BytesRewritten != 2<<20 {
		t.Fatalf("move again: %+v, %d bytes rewritten", r, srv.Stats().BytesRewritten)
	}
	if got, _, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("destination: %v", err)
	}
	if _, err := srv.Attrs(testBucket, "s"); err == nil {
		t.Error("the source is still there")
	}
	if ss, _ := c2.Sessions(); len(ss) != 0 {
		t.Errorf("sessions after the move: %+v", ss)
	}
}

// A move between buckets cut short between rewrite calls is finished by
// Resume: the copy continues from its token, and the source is deleted.
func TestMoveAcrossInterruptedResumeFinishesMove(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	data := randBytes(4<<20, 27)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 2<<20)
	if r, _ := c.Move(ctx, sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{}); r.Status != StatusInterrupted {
		t.Fatalf("interrupted move: %+v", r)
	}
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	rs, err := c2.Resume(context.Background())
	if len(rs) != 1 || err != nil || rs[0].Status != StatusMoved || rs[0].ResumedFrom != 2<<20 {
		t.Fatalf("resume: %+v, %v", rs, err)
	}
	if got, _, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("destination: %v", err)
	}
	if _, err := srv.Attrs(testBucket, "s"); err == nil {
		t.Error("the source is still there after the resumed move")
	}
}
