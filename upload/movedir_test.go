package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"strings"
)

// A broken symlink under the directory cannot be moved: its result is a
// failure, so MoveDir's error says some failed, as UploadDir's does (it
// used to be nil with a failed result reported). The results come back in
// the walk's order, as UploadDir's do.
func TestMoveDirBrokenSymlinkFailsTheBatch(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	var rs moveResults
	c := newClient(t, srv, collecting(&rs))
	dir := t.TempDir()
	a := writeTemp(t, dir, "a", []byte("alpha"))
	broken := filepath.Join(dir, "b")
	if err := os.Symlink(filepath.Join(dir, "missing"), broken); err != nil {
		t.Fatal(err)
	}
	results, err := c.MoveDir(context.Background(), dir, URL{Bucket: testBucket, Object: "d"}, MoveOptions{})
	if want := "upload: 1 of 2 transfers failed; first: " + broken + ": move: broken symlink "; !errors.Is(err, ErrSomeFailed) || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("MoveDir: %v, want ErrSomeFailed", err)
	}
	if len(results) != 2 || results[0].Source != a || results[0].Status != StatusMoved ||
		results[1].Source != broken || results[1].Status != StatusFailed {
		t.Fatalf("results: %+v", results)
	}
	if r := rs.m[a]; r == nil || r.Status != StatusMoved {
		t.Fatalf("a: %+v", r)
	}
	if r := rs.m[broken]; r == nil || r.Status != StatusFailed {
		t.Fatalf("the broken symlink: %+v", r)
	}
	wantObject(t, srv, "d/a", []byte("alpha"))
}

// sideOf is the Side of a move operand as the tests write it: a gs:// URL
// or a local path. A bad URL gives the zero Side, which the move refuses.
func sideOf(s string) Side {
	sd, _ := ParseSide(s)
	return sd
}

// MovePrefix returns each object's Result in listing order, to a local
// directory and to a gs:// folder alike, and refuses the zero Side.
func TestMovePrefixReturnsResults(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, n := range []string{"p/a", "p/b/c"} {
		if _, err := srv.PutObject(testBucket, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, srv, nil)
	ctx := context.Background()
	results, err := c.MovePrefix(ctx, URL{Bucket: testBucket, Object: "p"}, RemoteSide(URL{Bucket: testBucket, Object: "q"}), MoveOptions{})
	if err != nil || len(results) != 2 || results[0].Source != "gs://bkt/p/a" || results[0].Dest != "gs://bkt/q/a" ||
		results[1].Source != "gs://bkt/p/b/c" || results[0].Status != StatusMoved || results[1].Status != StatusMoved {
		t.Fatalf("MovePrefix to gs://: %v, %+v", err, results)
	}
	dir := t.TempDir()
	results, err = c.MovePrefix(ctx, URL{Bucket: testBucket, Object: "q"}, LocalSide(dir), MoveOptions{})
	if err != nil || len(results) != 2 || results[0].Dest != filepath.Join(dir, "a") || results[1].Dest != filepath.Join(dir, "b", "c") {
		t.Fatalf("MovePrefix to a directory: %v, %+v", err, results)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "b", "c")); err != nil || string(got) != "p/b/c" {
		t.Fatalf("b/c: %q, %v", got, err)
	}
	_, err = c.MovePrefix(ctx, URL{Bucket: testBucket, Object: "q"}, Side{}, MoveOptions{})
	if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "the destination is the zero Side") {
		t.Fatalf("MovePrefix to the zero Side: %v", err)
	}
}

// Move refuses a zero Side and a folder as an object, before any request.
func TestMoveBadSides(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		src, dst Side
		want     string
	}{
		{Side{}, RemoteSide(URL{testBucket, "o"}), "move: bad option: the source is the zero Side: make it with LocalSide, RemoteSide or ParseSide"},
		{LocalSide("f"), RemoteSide(URL{testBucket, "d/"}), "move: bad option: gs://bkt/d/ names a bucket or folder, not an object"},
		{LocalSide("f"), LocalSide("g"), "move: bad option: neither f nor g is an object (a RemoteSide)"},
	} {
		r, err := c.Move(ctx, tc.src, tc.dst, MoveOptions{})
		if !errors.Is(err, ErrBadOption) || err.Error() != tc.want || r.Status != StatusFailed {
			t.Errorf("Move(%v, %v): %v, want %q", tc.src, tc.dst, err, tc.want)
		}
	}
}
