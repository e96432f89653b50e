package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// A move whose delete is done by the server but whose every answer is lost
// (fakegcs drops the response after deleting, then on each retry): the
// source is read back, found gone, and the move is done, not "the source was
// kept (both exist)".
func TestMoveDeleteAnswerLost(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.delete", Object: "s", Kind: fakegcs.KindDropResponse, Times: -1},
	}})
	data := randBytes(200<<10, 25)
	srv.PutObject(testBucket, "s", data)
	c := newClient(t, srv, nil)
	r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{})
	if err != nil || r.Status != StatusMoved || !strings.Contains(r.Note, "the source is gone") {
		t.Fatalf("move whose delete answer was lost: %+v", r)
	}
	if got, _, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("destination: %v", err)
	}
}

// The same, with the source's read-back failing too: the move cannot tell
// whether the source is gone, says so (not that it was kept), and saves the
// move; run again once the server answers, it finds the source gone and the
// destination holding what was moved, and reports the move done.
func TestMoveDeleteUnknownRerunFinishes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	drop := srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: "s", Kind: fakegcs.KindDropResponse, Times: -1})
	unread := srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "s", Skip: 1, Kind: fakegcs.KindStatus, Status: 503, Times: -1})
	data := randBytes(200<<10, 26)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{})
	if err == nil || errors.Is(err, ErrSourceKept) || !strings.Contains(err.Error(), "whether it was deleted is unknown") ||
		!strings.Contains(err.Error(), "run the same move again") || r.Status != StatusFailed {
		t.Fatalf("move that cannot tell: %+v", r)
	}
	if _, err := srv.Attrs(testBucket, "s"); err == nil {
		t.Fatal("the source is there: the fault did not delete it")
	}
	drop.Remove()
	unread.Remove()
	r, err = c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf("gs://dst/d"), MoveOptions{})
	if err != nil || r.Status != StatusMoved || !strings.Contains(r.Note, "an earlier run") {
		t.Fatalf("move again: %+v", r)
	}
	if got, _, err := srv.Object("dst", "d"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("destination: %v", err)
	}
	if ss, _ := c.Sessions(); len(ss) != 0 {
		t.Errorf("sessions after the move: %+v", ss)
	}
}

// The same for a move to a local file: the rerun finds the source gone and
// the file holding what was moved, and reports the move done.
func TestMoveDownDeleteUnknownRerunFinishes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	drop := srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: "s", Kind: fakegcs.KindDropResponse, Times: -1})
	data := randBytes(200<<10, 30)
	srv.PutObject(testBucket, "s", data)
	c := newClient(t, srv, func(o *Options) { o.StateDir = filepath.Join(t.TempDir(), "state") })
	var unread *fakegcs.Injection
	c.opts.OnEvent = func(e resumable.Event) {
		if e.Kind == resumable.EventFinished && unread == nil { // the download is done: reads of the source fail from now on
			unread = srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "s", Kind: fakegcs.KindStatus, Status: 503, Times: -1})
		}
	}
	dst := filepath.Join(t.TempDir(), "f")
	r, err := c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf(dst), MoveOptions{})
	if err == nil || errors.Is(err, ErrSourceKept) || !strings.Contains(err.Error(), "whether it was deleted is unknown") {
		t.Fatalf("move that cannot tell: %+v", r)
	}
	drop.Remove()
	unread.Remove()
	r, err = c.Move(context.Background(), sideOf("gs://bkt/s"), sideOf(dst), MoveOptions{})
	if err != nil || r.Status != StatusMoved || !strings.Contains(r.Note, "an earlier run") {
		t.Fatalf("move again: %+v", r)
	}
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the file: %v", err)
	}
}
