package upload

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// reads counts the files a Client read to checksum them (misses of its
// checksum cache, or every one without it), by path.
type reads struct {
	mu    sync.Mutex
	paths []string
}

func (r *reads) add(p string) {
	r.mu.Lock()
	r.paths = append(r.paths, filepath.Base(p))
	r.mu.Unlock()
}

func (r *reads) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.paths
	r.paths = nil
	slices.Sort(p)
	return p
}

// cacheRun is one process's Client on the state directory state, whose
// clock is an hour ahead (past the racy window of files written now), and
// closed before the next: the cache is saved by Close, read by New.
func cacheRun(t *testing.T, srv *fakegcs.Server, state string, rd *reads, run func(c *Client)) {
	t.Helper()
	c := newClient(t, srv, func(o *Options) {
		o.StateDir = state
		o.Now = func() time.Time { return time.Now().Add(time.Hour) }
	})
	if c.sums == nil {
		t.Fatal("no checksum cache with a state directory")
	}
	c.sums.Reads = rd.add
	run(c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func wantReads(t *testing.T, step string, rd *reads, want ...string) {
	t.Helper()
	if got := rd.take(); !slices.Equal(got, want) {
		t.Fatalf("%s: files read %q, want %q", step, got, want)
	}
}

// An unchanged file is not read again by a later sync (another process)
// in either direction: after the upload that read it, or the comparison
// that did; a file replaced by another of the same size and mtime is.
func TestSyncReadsUnchangedFilesOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	state, src, dst := filepath.Join(t.TempDir(), "state"), t.TempDir(), t.TempDir()
	writeTemp(t, src, "a", []byte("aaaa"))
	writeTemp(t, src, "sub/b", randBytes(300<<10, 2))
	rd := &reads{}
	syncer := func(from, to Side, wantCopied int) func(c *Client) {
		return func(c *Client) {
			t.Helper()
			rep, err := c.Sync(context.Background(), from, to, SyncOptions{})
			if err != nil || rep.Copied != wantCopied {
				t.Fatalf("sync %s -> %s: %+v, %v; want %d copied", from, to, rep, err, wantCopied)
			}
		}
	}
	up, down := syncer(LocalSide(src), prefixB, 0), syncer(prefixB, LocalSide(dst), 0)
	cacheRun(t, srv, state, rd, syncer(LocalSide(src), prefixB, 2))
	wantReads(t, "first sync up (nothing to compare)", rd)
	// What the first uploaded, it read whole: its CRC32C is saved.
	cacheRun(t, srv, state, rd, up)
	wantReads(t, "second sync up", rd)
	cacheRun(t, srv, state, rd, up)
	wantReads(t, "third sync up", rd)

	cacheRun(t, srv, state, rd, syncer(prefixB, LocalSide(dst), 2))
	cacheRun(t, srv, state, rd, down)
	wantReads(t, "second sync down", rd, "a", "b")
	cacheRun(t, srv, state, rd, down)
	wantReads(t, "third sync down", rd)

	// Same size, same mtime, another inode (renamed over a): read, and copied.
	a := filepath.Join(src, "a")
	fi, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	writeTemp(t, src, "a.new", []byte("AAAA"))
	if err := os.Chtimes(filepath.Join(src, "a.new"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(src, "a.new"), a); err != nil {
		t.Fatal(err)
	}
	cacheRun(t, srv, state, rd, syncer(LocalSide(src), prefixB, 1))
	wantReads(t, "sync up after a was replaced", rd, "a")
	wantObject(t, srv, "b/a", []byte("AAAA"))
}

// cp --skip-unchanged (UploadOptions and DownloadOptions.SkipUnchanged)
// reads an unchanged file once.
func TestSkipUnchangedReadsOnce(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	state, dir := filepath.Join(t.TempDir(), "state"), t.TempDir()
	f := writeTemp(t, dir, "f", []byte("content"))
	srv.PutObject(testBucket, "f", []byte("content"))
	dst := URL{Bucket: testBucket, Object: "f"}
	rd := &reads{}
	up := func(c *Client) {
		r, err := c.UploadFile(context.Background(), f, dst, UploadOptions{SkipUnchanged: true})
		if err != nil || r.Status != StatusSkipped || r.Note != "unchanged" {
			t.Fatalf("upload: %+v, %v", r, err)
		}
	}
	down := func(c *Client) {
		r, err := c.Download(context.Background(), dst, f, DownloadOptions{SkipUnchanged: true})
		if err != nil || r.Status != StatusSkipped || r.Note != "unchanged" {
			t.Fatalf("download: %+v, %v", r, err)
		}
	}
	cacheRun(t, srv, state, rd, up)
	wantReads(t, "first upload", rd, "f")
	cacheRun(t, srv, state, rd, up)
	wantReads(t, "second upload", rd)
	cacheRun(t, srv, state, rd, down)
	wantReads(t, "download", rd)
}

// NoChecksumCache reads every file every time.
func TestNoChecksumCache(t *testing.T) {
	t.Parallel()
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, func(o *Options) { o.NoChecksumCache = true })
	if c.sums != nil {
		t.Fatal("a checksum cache with NoChecksumCache")
	}
	if _, err := os.Lstat(filepath.Join(c.opts.StateDir, "crc32c.cache")); err == nil {
		t.Fatal("crc32c.cache written")
	}
}
