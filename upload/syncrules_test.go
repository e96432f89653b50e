package upload

import (
	"bytes"
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/gzmeta"
)

// A gzip-encoded object is downloaded decompressed and compared by its
// content's size and CRC32C (cp -z's metadata): a second sync sends
// nothing. Without that metadata or a stored mtime, it is copied every
// run, as gsutil rsync does.
func TestSyncGzipObjects(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	content := randBytes(300<<10, 9)
	crc := crc32.Checksum(content, crc32.MakeTable(crc32.Castagnoli))
	stored := gzipOf(t, content)
	srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: "b/known.txt", ContentEncoding: "gzip",
		Metadata: gzmeta.DecodedMetadata(int64(len(content)), crc)}, bytes.NewReader(stored))
	putGzip(t, srv, "b/unknown.txt", stored)
	c, _ := syncClient(t, srv, nil)
	dst := t.TempDir()
	for run, want := range []SyncReport{{Copied: 2, Bytes: 2 * int64(len(stored))}, {Copied: 1, Unchanged: 1, Bytes: int64(len(stored))}} {
		rep, err := c.Sync(context.Background(), prefixB, LocalSide(dst), SyncOptions{})
		rep.Transferred = 0
		if err != nil || *rep != want {
			t.Errorf("run %d: %+v, %v; want %+v", run, rep, err, want)
		}
		for _, f := range []string{"known.txt", "unknown.txt"} {
			if got, _ := os.ReadFile(filepath.Join(dst, f)); !bytes.Equal(got, content) {
				t.Errorf("run %d: %s holds %d bytes, not the content", run, f, len(got))
			}
		}
	}
}

// ExcludeRegexp matches from the start of the path, on both sides: what
// it leaves out is neither copied nor deleted.
func TestSyncExcludeRegexp(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src := t.TempDir()
	for _, f := range []string{"a.txt", "x.tmp", "cache/c.txt", "keep/cache/k.txt"} {
		writeTemp(t, src, f, []byte(f))
	}
	srv.PutObject(testBucket, "b/old.tmp", []byte("kept: excluded"))
	srv.PutObject(testBucket, "b/cache/old", []byte("kept: excluded"))
	srv.PutObject(testBucket, "b/a.txt", []byte("a.txt"))
	srv.PutObject(testBucket, "b/gone", []byte("deleted"))
	c, _ := syncClient(t, srv, nil)
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true, ExcludeRegexp: []string{`.*\.tmp$`, `cache/`}})
	if err != nil || rep.Copied != 1 || rep.Unchanged != 1 || rep.Deleted != 1 {
		t.Errorf("%+v, %v", rep, err)
	}
	if got := objectNames(t, srv); got != "b/a.txt b/cache/old b/keep/cache/k.txt b/old.tmp" {
		t.Errorf("objects %q", got)
	}
}

// A symlink to a directory in the source is not followed, and what the
// destination holds under its name is kept; objects named like gcsput's
// own files are reported skipped, never downloaded, never deleted.
func TestSyncKeptAndReserved(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	src, elsewhere := t.TempDir(), t.TempDir()
	writeTemp(t, src, "a.txt", []byte("a"))
	os.Symlink(elsewhere, filepath.Join(src, "photos"))
	srv.PutObject(testBucket, "b/photos/p.jpg", []byte("photo"))
	srv.PutObject(testBucket, "b/.a.txt.gcsput-partial", []byte("hostile"))
	srv.PutObject(testBucket, "b/gone", []byte("deleted"))
	c, rs := syncClient(t, srv, nil)
	rep, err := c.Sync(context.Background(), LocalSide(src), prefixB, SyncOptions{Delete: true})
	if err != nil || rep.Copied != 1 || rep.Skipped != 1 || rep.Deleted != 1 {
		t.Errorf("up: %+v, %v", rep, err)
	}
	if got := objectNames(t, srv); got != "b/.a.txt.gcsput-partial b/a.txt b/photos/p.jpg" {
		t.Errorf("objects %q", got)
	}
	for _, r := range rs.all {
		if r.Status == StatusSkipped && r.Note != "symlink to a directory (not followed); sync --delete keeps what gs://bkt/b holds under this name" {
			t.Errorf("skipped: %+v", r)
		}
	}
	dst := t.TempDir()
	rs.all = nil
	rep, err = c.Sync(context.Background(), prefixB, LocalSide(dst), SyncOptions{})
	if err != nil || rep.Copied != 2 || rep.Skipped != 1 {
		t.Errorf("down: %+v, %v", rep, err)
	}
	if got := rs.byStatus(StatusSkipped); len(got) != 1 || got[0] != filepath.Join(dst, ".a.txt.gcsput-partial") || rs.all[0].Note != reservedNote {
		t.Errorf("skipped %q: %+v", got, rs.all[0])
	}
	if _, err := os.Stat(filepath.Join(dst, ".a.txt.gcsput-partial")); err == nil {
		t.Error("a reserved name was downloaded")
	}
}
