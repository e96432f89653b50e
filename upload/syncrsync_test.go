package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// notes maps each result's Dest to its status and note.
func (rs *results) notes() map[string]string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := map[string]string{}
	for _, r := range rs.all {
		out[r.Dest] = string(r.Status) + ": " + r.Note
	}
	return out
}

// NoClobber leaves an object the prefix holds as it is, though it differs,
// without reading it; what the prefix lacks is copied. A dry run counts it
// as kept.
func TestSyncNoClobber(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	writeTemp(t, src, "a.txt", []byte("new a"))
	writeTemp(t, src, "b.txt", []byte("b"))
	srv.PutObject(testBucket, "b/a.txt", []byte("old a, longer"))
	o := SyncOptions{NoClobber: true}
	p, err := c.PlanSync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || p.Kept != 1 || len(p.Copies) != 1 || p.Copies[0].Path != "b.txt" {
		t.Fatalf("plan: %+v, %v", p, err)
	}
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Copied != 1 || rep.Skipped != 1 {
		t.Fatalf("sync: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/a.txt", []byte("old a, longer"))
	wantObject(t, srv, "b/b.txt", []byte("b"))
	if got := rs.notes()["gs://bkt/b/a.txt"]; got != "skipped: exists (no-clobber)" {
		t.Errorf("a.txt: %q", got)
	}
	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{})
	if err != nil || rep.Copied != 1 {
		t.Errorf("without NoClobber: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/a.txt", []byte("new a"))
}

// SkipIfDestNewer keeps an object whose stored mtime is newer than the
// file's, and replaces one that is older; both ways of a sync.
func TestSyncSkipIfDestNewer(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	old := writeTemp(t, src, "old.txt", []byte("v1"))
	young := writeTemp(t, src, "young.txt", []byte("v1"))
	if _, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(old)
	os.WriteFile(old, []byte("v2"), 0o644)
	os.WriteFile(young, []byte("v2"), 0o644)
	os.Chtimes(old, fi.ModTime().Add(-time.Hour), fi.ModTime().Add(-time.Hour))
	os.Chtimes(young, fi.ModTime().Add(time.Hour), fi.ModTime().Add(time.Hour))
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{SkipIfDestNewer: true})
	if err != nil || rep.Copied != 1 || rep.Skipped != 1 {
		t.Fatalf("sync up: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/old.txt", []byte("v1"))
	wantObject(t, srv, "b/young.txt", []byte("v2"))
	if got := rs.notes()["gs://bkt/b/old.txt"]; got != "skipped: destination is newer" {
		t.Errorf("old.txt: %q", got)
	}

	// Down: the local file written after the object's stored mtime is kept.
	dst := t.TempDir()
	local := writeTemp(t, dst, "old.txt", []byte("local edit"))
	os.Chtimes(local, fi.ModTime().Add(time.Minute), fi.ModTime().Add(time.Minute))
	rep, err = c.Sync(context.Background(), prefixB, LocalSide(dst), SyncOptions{SkipIfDestNewer: true})
	if err != nil || rep.Copied != 1 || rep.Skipped != 1 {
		t.Fatalf("sync down: %+v, %v", rep, err)
	}
	if got, _ := os.ReadFile(local); string(got) != "local edit" {
		t.Errorf("old.txt down: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "young.txt")); string(got) != "v2" {
		t.Errorf("young.txt down: %q", got)
	}
}

// IgnoreSymlinks skips a symlink to a file (copied with its target's
// content by default), and what the prefix holds under its name stays, even
// with Delete.
func TestSyncIgnoreSymlinks(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, rs := syncClient(t, srv, nil)
	src := t.TempDir()
	writeTemp(t, src, "real.txt", []byte("real"))
	if err := os.Symlink("real.txt", filepath.Join(src, "link.txt")); err != nil {
		t.Fatal(err)
	}
	srv.PutObject(testBucket, "b/link.txt", []byte("kept"))
	o := SyncOptions{IgnoreSymlinks: true, Delete: true, MaxDelete: MaxDeletePercent(100)}
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, o)
	if err != nil || rep.Copied != 1 || rep.Deleted != 0 || rep.Skipped != 1 {
		t.Fatalf("sync: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/link.txt", []byte("kept"))
	if got := rs.notes()["gs://bkt/b/link.txt"]; got != "skipped: symlink (ignored: --ignore-symlinks); sync --delete keeps what gs://bkt/b holds under this name" {
		t.Errorf("link.txt: %q", got)
	}
	rep, err = c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{})
	if err != nil || rep.Copied != 1 {
		t.Errorf("by default: %+v, %v", rep, err)
	}
	wantObject(t, srv, "b/link.txt", []byte("real"))
}

// CustomTime is written on every object a sync up writes, by a one-request
// insert and by a resumable session alike; a sync down is refused.
func TestSyncCustomTime(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c, _ := syncClient(t, srv, nil)
	src := t.TempDir()
	writeTemp(t, src, "small.txt", []byte("small"))
	writeTemp(t, src, "big.bin", randBytes(9<<20, 3))
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	if _, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{CustomTime: at}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b/small.txt", "b/big.bin"} {
		if _, a, err := srv.Object(testBucket, name); err != nil || !a.CustomTime.Equal(at) {
			t.Errorf("%s: customTime %v, %v", name, a.CustomTime, err)
		}
	}
	// The official Go client reads it from fakegcs's object resource.
	if a, err := c.Stat(context.Background(), URL{Bucket: testBucket, Object: "b/small.txt"}); err != nil {
		t.Error(err)
	} else if !a.CustomTime.Equal(at) {
		t.Errorf("Go client: customTime %v", a.CustomTime)
	}
	_, err := c.Sync(context.Background(), prefixB, LocalSide(t.TempDir()), SyncOptions{CustomTime: at})
	if !errors.Is(err, ErrBadOption) {
		t.Errorf("sync down with CustomTime: %v", err)
	}
}
