package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// mv whose source's delete the server does but whose every answer is lost (fakegcs drops
// the response after deleting): the source is read back, found gone, and the move is
// reported done, exit 0, not "the source was kept (both exist)". Each direction that
// deletes an object.
func TestE2EMvDeleteAnswerLost(t *testing.T) {
	for _, dir := range []string{"across", "down"} {
		t.Run(dir, func(t *testing.T) {
			e := newCopyE2E(t, 0, nil)
			data, _ := e.putRandom("src.bin", 200<<10)
			e.srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: "src.bin", Kind: fakegcs.KindDropResponse, Times: -1})
			dst := "gs://dst/d.bin"
			if dir == "down" {
				dst = "d.bin"
			}
			r := e.run(nil, "mv", "--json", fastRetry, "gs://bkt/src.bin", dst)
			files, _ := jsonLines(t, r.stdout)
			if f := files[dst]; r.code != 0 || f.Status != "moved" || !strings.Contains(f.Reason, "the source is gone") {
				t.Fatalf("exit %d (want 0): %+v\n%s", r.code, f, r.stderr)
			}
			if e.has("src.bin") {
				t.Fatal("the source is there")
			}
			if dir == "across" && !bytes.Equal(e.object2("dst", "d.bin"), data) {
				t.Fatal("the destination differs from the source")
			}
		})
	}
}

// The same with the source's read-back failing too: mv cannot tell whether the source is
// gone and says so (exit 1, not "the source was kept"); the same mv again, once the server
// answers, finds the source gone and the destination holding what was moved, and reports
// the move done, exit 0 (it failed with 404 every time).
func TestE2EMvDeleteUnknownRerunFinishes(t *testing.T) {
	e := newCopyE2E(t, 0, nil)
	data, _ := e.putRandom("src.bin", 200<<10)
	drop := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Object: "src.bin", Kind: fakegcs.KindDropResponse, Times: -1})
	// The first read of the source is the move's own; those after the delete fail.
	unread := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "src.bin", Skip: 1, Kind: fakegcs.KindStatus, Status: 503, Times: -1})
	args := []string{"mv", "--json", fastRetry, "gs://bkt/src.bin", "gs://dst/d.bin"}
	r := e.run(nil, args...)
	if r.code != exitFailed || !strings.Contains(r.stderr, "whether it was deleted is unknown: run the same move again to finish it") ||
		strings.Contains(r.stderr, "the source was kept") {
		t.Fatalf("exit %d (want 1)\n%s", r.code, r.stderr)
	}
	if e.has("src.bin") {
		t.Fatal("the source is there: the fault did not delete it")
	}
	if ls := e.must(nil, "sessions", "ls"); !strings.Contains(ls.stdout, "move") || !strings.Contains(ls.stdout, "gs://dst/d.bin") {
		t.Fatalf("sessions ls does not show the saved move:\n%s", ls.stdout)
	}
	drop.Remove()
	unread.Remove()
	r = e.run(nil, args...)
	files, _ := jsonLines(t, r.stdout)
	if f := files["gs://dst/d.bin"]; r.code != 0 || f.Status != "moved" || !strings.Contains(f.Reason, "moved by an earlier run") {
		t.Fatalf("mv again: exit %d (want 0): %+v\n%s", r.code, f, r.stderr)
	}
	if !bytes.Equal(e.object2("dst", "d.bin"), data) {
		t.Fatal("the destination differs from the source")
	}
	if ls := e.must(nil, "sessions", "ls"); strings.Contains(ls.stdout, "d.bin") {
		t.Errorf("a record is left: %s", ls.stdout)
	}
}
