package upload

import (
	"context"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A move inside one bucket is one objects.move call: no rewrite, no
// delete, no byte copied; the destination holds the source's bytes under a
// new generation and the source is gone.
func TestMoveInBucketIsOneCall(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(300<<10, 41)
	src, _ := srv.PutObject(testBucket, "a/s", data)
	c := newClient(t, srv, nil)
	srv.ResetStats()
	r, err := c.Move(context.Background(), sideOf("gs://bkt/a/s"), sideOf("gs://bkt/b/d"), MoveOptions{})
	if err != nil || r.Status != StatusMoved || r.Generation <= src.Generation || !strings.Contains(r.Note, "objects.move") {
		t.Fatalf("move: %+v", r)
	}
	st := srv.Stats()
	if st.Requests["storage.objects.move"] != 1 || st.Requests["storage.objects.rewrite"] != 0 ||
		st.Requests["storage.objects.delete"] != 0 || st.BytesRewritten != 0 {
		t.Fatalf("requests: %v, %d bytes rewritten", st.Requests, st.BytesRewritten)
	}
	wantObject(t, srv, "b/d", data)
	if _, err := srv.Attrs(testBucket, "a/s"); err == nil {
		t.Fatal("the source is still there")
	}
}

// With NoClobber an existing destination is kept and so is the source:
// the move is skipped ("exists"), nothing copied.
func TestMoveInBucketNoClobber(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "s", []byte("source"))
	srv.PutObject(testBucket, "d", []byte("there"))
	c := newClient(t, srv, nil)
	r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://bkt/d"), MoveOptions{NoClobber: true})
	if err != nil || r.Status != StatusSkipped || r.Note != "exists; source kept" {
		t.Fatalf("move: %+v, %v", r, err)
	}
	wantObject(t, srv, "d", []byte("there"))
	wantObject(t, srv, "s", []byte("source"))
	if n := srv.Count("storage.objects.rewrite"); n != 0 {
		t.Fatalf("%d rewrites", n)
	}
}

// The answer of the move is lost; its retry finds the source gone, and the
// destination holding its bytes: the move is done, not failed.
func TestMoveInBucketAnswerLost(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Faults: []fakegcs.Fault{
		{Op: "storage.objects.move", Kind: fakegcs.KindDropResponse},
	}})
	data := randBytes(100<<10, 42)
	srv.PutObject(testBucket, "s", data)
	c := newClient(t, srv, nil)
	r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://bkt/d"), MoveOptions{})
	if err != nil || r.Status != StatusMoved || !strings.Contains(r.Note, "answer was lost") {
		t.Fatalf("move: %+v, %v", r, err)
	}
	wantObject(t, srv, "d", data)
	if n := srv.Count("storage.objects.move"); n != 2 {
		t.Fatalf("%d move calls, want 2 (one answer lost, one retry)", n)
	}
}

// A server that does not serve objects.move (501) or refuses it (400, as
// one that serves it on hierarchical-namespace buckets only may), and a client whose key
// is not the source's (the move must re-encrypt), move by copy and delete.
func TestMoveInBucketFallsBackToCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults []fakegcs.Fault
		mod    func(*Options)
		moves  int
		keySHA string
	}{
		{name: "501", faults: []fakegcs.Fault{{Op: "storage.objects.move", Kind: fakegcs.KindStatus, Status: 501}}, moves: 1},
		{name: "400", faults: []fakegcs.Fault{{Op: "storage.objects.move", Kind: fakegcs.KindStatus, Status: 400}}, moves: 1},
		{name: "other key", mod: func(o *Options) { o.EncryptionKey = copyKey }, keySHA: copyKey.SHA256()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{Faults: tc.faults})
			data := randBytes(200<<10, 43)
			srv.PutObject(testBucket, "s", data)
			c := newClient(t, srv, tc.mod)
			r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://bkt/d"), MoveOptions{})
			if err != nil || r.Status != StatusMoved {
				t.Fatalf("move: %+v, %v", r, err)
			}
			if m, rw, del := srv.Count("storage.objects.move"), srv.Count("storage.objects.rewrite"), srv.Count("storage.objects.delete"); m != tc.moves || rw != 1 || del != 1 {
				t.Fatalf("%d moves, %d rewrites, %d deletes; want %d, 1, 1", m, rw, del, tc.moves)
			}
			got, attrs, err := srv.Object(testBucket, "d")
			if err != nil || string(got) != string(data) || attrs.CustomerKeySHA256 != tc.keySHA {
				t.Fatalf("destination: %v, key %q", err, attrs.CustomerKeySHA256)
			}
		})
	}
}
