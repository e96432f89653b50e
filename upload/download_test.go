package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

func TestDownloadPrefixRefusesTraversal(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, name := range []string{"p/ok.txt", "p/../escape.txt", "p//etc/passwd", "p/a/../../up.txt", "p/dir/", "p/dir/in.txt"} {
		if _, err := srv.PutObject(testBucket, name, []byte("content of "+name)); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, srv, nil)
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	results, err := c.DownloadPrefix(context.Background(), URL{testBucket, "p"}, out, DownloadOptions{})
	if !errors.Is(err, ErrSomeFailed) {
		t.Fatalf("err = %v, want ErrSomeFailed", err)
	}
	got := map[string]string{}
	for _, r := range results {
		s := string(r.Status)
		if r.Err != nil {
			s += ": " + r.Err.Error()
			if !errors.Is(r.Err, ErrUnsafePath) {
				t.Errorf("%s: error %v does not match ErrUnsafePath", r.Object, r.Err)
			}
			if r.Dest != out {
				t.Errorf("%s: refused with destination %q, want the directory %s", r.Object, r.Dest, out)
			}
		}
		if r.Note != "" {
			s += " (" + r.Note + ")"
		}
		got[r.Object] = s
	}
	want := map[string]string{
		"p/ok.txt":         "downloaded",
		"p/dir/in.txt":     "downloaded",
		"p/dir/":           "skipped (folder placeholder)",
		"p/../escape.txt":  `failed: refusing to download object "p/../escape.txt": its name climbs out with "..", so it would be written outside ` + out,
		"p//etc/passwd":    `failed: refusing to download object "p//etc/passwd": its name is an absolute path, so it would be written outside ` + out,
		"p/a/../../up.txt": `failed: refusing to download object "p/a/../../up.txt": its name climbs out with "..", so it would be written outside ` + out,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q\n want %q", k, got[k], v)
		}
	}
	for _, p := range []string{filepath.Join(parent, "escape.txt"), filepath.Join(parent, "up.txt"), filepath.Join(out, "..", "escape.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written outside the destination", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "dir", "in.txt")); string(b) != "content of p/dir/in.txt" {
		t.Errorf("in.txt = %q", b)
	}
}

func TestDownloadPrefixRefusesSymlinkEscape(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "p/link/x.txt", []byte("x"))
	c := newClient(t, srv, nil)
	out, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(out, "link"))
	results, _ := c.DownloadPrefix(context.Background(), URL{testBucket, "p/"}, out, DownloadOptions{})
	want := `refusing to download object "p/link/x.txt": a symlink on its path leads out of the destination, so it would be written outside ` + out
	if len(results) != 1 || results[0].Status != StatusFailed || results[0].Err.Error() != want || !errors.Is(results[0].Err, ErrUnsafePath) {
		t.Errorf("download through a symlink out of the tree: %+v", results[0])
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("wrote %d entries outside the destination", len(ents))
	}
}

func TestDownloadSkipsAndPOSIX(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	dir := t.TempDir()
	src := writeTemp(t, dir, "src.txt", []byte("hello world"))
	mt := time.Unix(1600000000, 0)
	os.Chmod(src, 0o600)
	os.Chtimes(src, mt, mt)
	u := URL{testBucket, "f.txt"}
	if _, err := c.UploadFile(context.Background(), src, u, UploadOptions{PreservePOSIX: true}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "out", "f.txt")
	r, err := c.Download(context.Background(), u, dst, DownloadOptions{PreservePOSIX: true})
	if err != nil || r.Status != StatusDownloaded || r.Size != 11 {
		t.Fatalf("download: %+v %v", r, err)
	}
	fi, _ := os.Stat(dst)
	if fi.Mode().Perm() != 0o600 || !fi.ModTime().Equal(mt) {
		t.Errorf("POSIX not restored: mode %v mtime %v", fi.Mode().Perm(), fi.ModTime())
	}
	r, _ = c.Download(context.Background(), u, dst, DownloadOptions{SkipUnchanged: true})
	if r.Status != StatusSkipped || r.Note != "unchanged" {
		t.Errorf("unchanged: %s %q", r.Status, r.Note)
	}
	os.WriteFile(dst, []byte("HELLO WORLD"), 0o644)
	r, _ = c.Download(context.Background(), u, dst, DownloadOptions{NoClobber: true})
	if r.Status != StatusSkipped || r.Note != "exists" {
		t.Errorf("no-clobber: %s %q", r.Status, r.Note)
	}
	r, _ = c.Download(context.Background(), u, dst, DownloadOptions{SkipUnchanged: true})
	if b, _ := os.ReadFile(dst); r.Status != StatusDownloaded || string(b) != "hello world" {
		t.Errorf("changed file: %s, content %q", r.Status, b)
	}
	for _, tc := range []struct {
		src  URL
		dst  string
		want string
	}{
		{URL{testBucket, "missing"}, filepath.Join(dir, "m"), "download: gs://bkt/missing: storage: object doesn't exist"},
		{u, dir, "download: " + dir + " is a directory: name the file to write"},
		{URL{"BAD", "x"}, filepath.Join(dir, "m"), `bad bucket name "BAD"`},
	} {
		_, err := c.Download(context.Background(), tc.src, tc.dst, DownloadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Download(%s, %s) = %v, want %q", tc.src, tc.dst, err, tc.want)
		}
	}
}

func TestDownloadResumesPartialFile(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(3<<20, 9)
	srv.PutObject(testBucket, "big", data)
	slow := holdGets(srv, 1536<<10) // the cancel at 1 MiB ends the first run
	state := t.TempDir()
	dst := filepath.Join(t.TempDir(), "big")
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	r, err := c.Download(ctx, URL{testBucket, "big"}, dst, DownloadOptions{})
	if err == nil || r.Status != StatusInterrupted {
		t.Fatalf("interrupted download: %+v", r)
	}
	partial := filepath.Join(filepath.Dir(dst), ".big"+partialSuffix)
	fi, err := os.Stat(partial)
	if err != nil || fi.Size() < 1<<20 {
		t.Fatalf("partial file: %v %v", fi, err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Fatal("the target exists before the download finished")
	}
	slow.Remove()
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err = c2.Download(context.Background(), URL{testBucket, "big"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, data) || r.Status != StatusResumed || r.ResumedFrom != fi.Size() || r.Transferred != int64(len(data))-fi.Size() {
		t.Errorf("resumed download: %s from %d (partial %d), transferred %d, equal %v", r.Status, r.ResumedFrom, fi.Size(), r.Transferred, bytes.Equal(got, data))
	}
	if _, err := os.Stat(partial); err == nil {
		t.Error("partial file left after success")
	}
	if recs, _ := c2.Sessions(); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

func TestDownloadStartsOverWhenObjectReplaced(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "o", randBytes(2<<20, 10))
	slow := holdGets(srv, 1536<<10) // the cancel at 1 MiB ends the first run
	state := t.TempDir()
	dst := filepath.Join(t.TempDir(), "o")
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	old, _ := c.Stat(context.Background(), URL{testBucket, "o"})
	if r, _ := c.Download(ctx, URL{testBucket, "o"}, dst, DownloadOptions{}); r.Status != StatusInterrupted {
		t.Fatalf("first download %s", r.Status)
	}
	slow.Remove()
	data := randBytes(2<<20, 11)
	attrs, _ := srv.PutObject(testBucket, "o", data)
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c2.Download(context.Background(), URL{testBucket, "o"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	wantNote := "object replaced since the partial download (generation " + itoa(old.Generation) + ", now " + itoa(attrs.Generation) + "): started over"
	if !bytes.Equal(got, data) || r.Status != StatusDownloaded || r.ResumedFrom != 0 || r.Note != wantNote {
		t.Errorf("result %s from %d note %q (want %q)", r.Status, r.ResumedFrom, r.Note, wantNote)
	}
}

func TestDownloadWriter(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(1<<20+5, 12)
	srv.PutObject(testBucket, "s", data)
	in := srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindTruncate, AfterBytes: 300 << 10})
	c := newClient(t, srv, nil)
	var buf bytes.Buffer
	r, err := c.DownloadWriter(context.Background(), URL{testBucket, "s"}, &buf, DownloadOptions{})
	if err != nil || !bytes.Equal(buf.Bytes(), data) || r.Status != StatusDownloaded || r.Dest != "-" || in.Fired() != 1 || r.Attempts != 2 {
		t.Fatalf("%+v %v; %d bytes, fault fired %d", r, err, buf.Len(), in.Fired())
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindCorrupt, AfterBytes: 10})
	buf.Reset()
	_, err = c.DownloadWriter(context.Background(), URL{testBucket, "s"}, &buf, DownloadOptions{})
	if !errors.Is(err, resumable.ErrChecksumMismatch) {
		t.Errorf("corrupted stream: %v, want ErrChecksumMismatch", err)
	}
}

// TestDownloadOneRequestPerSmallObject: a download to a new file is a single
// GET (no metadata request) and writes no state for an object below
// SmallFileThreshold; an existing target with SkipUnchanged needs the
// metadata first.
func TestDownloadOneRequestPerSmallObject(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(100<<10, 3)
	srv.PutObject(testBucket, "s", data)
	state := t.TempDir()
	c := newClient(t, srv, func(o *Options) { o.StateDir = state })
	dst := filepath.Join(t.TempDir(), "s")
	before := srv.Stats().Requests
	r, err := c.Download(context.Background(), URL{testBucket, "s"}, dst, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := srv.Stats().Requests
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) || r.Status != StatusDownloaded || r.Size != int64(len(data)) || r.Generation == 0 {
		t.Fatalf("result %+v, bytes equal %v", r, bytes.Equal(got, data))
	}
	total := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	if n := after["storage.objects.get"] - before["storage.objects.get"]; n != 1 || total(after)-total(before) != 1 {
		t.Errorf("requests before %v, after %v; want exactly one more storage.objects.get", before, after)
	}
	if ents, _ := os.ReadDir(state); len(ents) != 0 {
		t.Errorf("state dir holds %d entries; want none for a small object", len(ents))
	}
	before = after
	r, err = c.Download(context.Background(), URL{testBucket, "s"}, dst, DownloadOptions{SkipUnchanged: true})
	after = srv.Stats().Requests
	if err != nil || r.Status != StatusSkipped || r.Note != "unchanged" {
		t.Fatalf("second download: %+v %v; want skipped unchanged", r, err)
	}
	if n := after["storage.objects.get"] - before["storage.objects.get"]; n != 1 {
		t.Errorf("skip-unchanged made %d gets; want 1 (the metadata)", n)
	}
}

// A stream download of a missing object says what Stat says, as a file
// download does.
func TestDownloadWriterMissingObject(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	var buf bytes.Buffer
	_, err := c.DownloadWriter(context.Background(), URL{testBucket, "missing"}, &buf, DownloadOptions{})
	if !errors.Is(err, storage.ErrObjectNotExist) || buf.Len() != 0 {
		t.Fatalf("err = %v (%d bytes written), want storage.ErrObjectNotExist", err, buf.Len())
	}
}
