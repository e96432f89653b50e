package upload

import (
	"context"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// Objects whose names clean to one local path: the first in listing order
// is downloaded, each later one fails naming both objects, and the file
// holds exactly the first object's bytes, at any parallelism. (Before, they
// shared one temporary file: a mix of all three, reported "downloaded".)
func TestDownloadPrefixCollisions(t *testing.T) {
	for _, j := range []int{1, 8} {
		t.Run("j"+itoa(int64(j)), func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			data := map[string][]byte{}
			for i, name := range []string{"m/x", "m/./x", "m/z/../x", "m/.y.gcsput-partial", "m/y"} {
				data[name] = randBytes(600<<10+i, uint64(i+1))
				if _, err := srv.PutObject(testBucket, name, data[name]); err != nil {
					t.Fatal(err)
				}
			}
			c := newClient(t, srv, func(o *Options) { o.Parallelism = j })
			out := t.TempDir()
			results, err := c.DownloadPrefix(context.Background(), URL{testBucket, "m"}, out, DownloadOptions{})
			if !errors.Is(err, ErrSomeFailed) {
				t.Fatalf("err = %v, want ErrSomeFailed", err)
			}
			got := map[string]*Result{}
			for _, r := range results {
				got[r.Object] = r
			}
			// Listing order: "m/.y.gcsput-partial", "m/./x", "m/x", "m/y", "m/z/../x".
			for obj, want := range map[string]string{
				"m/x":      "gs://bkt/m/x and gs://bkt/m/./x both map to the local file " + filepath.Join(out, "x") + "; gs://bkt/m/x was not downloaded",
				"m/z/../x": "gs://bkt/m/z/../x and gs://bkt/m/./x both map to the local file " + filepath.Join(out, "x"),
			} {
				r := got[obj]
				var ce *collisionError
				if r.Status != StatusFailed || !errors.As(r.Err, &ce) || !errors.Is(r.Err, ErrCollision) || !strings.Contains(r.Err.Error(), want) {
					t.Errorf("%s: %s %v\n want failed: %s", obj, r.Status, r.Err, want)
				}
			}
			// A name gcsput reserves for its own files is skipped: it does not take y's place.
			if r := got["m/.y.gcsput-partial"]; r.Status != StatusSkipped || r.Note != reservedNote || r.Dest != filepath.Join(out, ".y.gcsput-partial") {
				t.Errorf("m/.y.gcsput-partial: %s %q %v", r.Status, r.Note, r.Err)
			}
			for _, obj := range []string{"m/./x", "m/y"} {
				r := got[obj]
				if r.Status != StatusDownloaded || r.CRC32C != crc32.Checksum(data[obj], castagnoli) {
					t.Errorf("%s: %s %v crc %08x", obj, r.Status, r.Err, r.CRC32C)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(out, "x")); string(b) != string(data["m/./x"]) {
				t.Errorf("x holds %d bytes that are not m/./x's", len(b))
			}
			if b, _ := os.ReadFile(filepath.Join(out, "y")); string(b) != string(data["m/y"]) {
				t.Errorf("y holds %d bytes that are not its object's", len(b))
			}
			if _, err := os.Stat(filepath.Join(out, ".y.gcsput-partial")); err == nil {
				t.Errorf(".y.gcsput-partial was written")
			}
		})
	}
}

// Two objects downloaded to one explicit local file: the second fails.
func TestDownloadObjectsCollision(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "a/f", []byte("first"))
	srv.PutObject(testBucket, "b/f", []byte("second"))
	c := newClient(t, srv, nil)
	out := t.TempDir()
	dst := filepath.Join(out, "f")
	results, err := c.DownloadObjects(context.Background(), []Item{
		{Remote: URL{testBucket, "a/f"}, Local: dst},
		{Remote: URL{testBucket, "b/f"}, Local: filepath.Join(out, ".", "f")},
	}, DownloadOptions{})
	if !errors.Is(err, ErrSomeFailed) || results[0].Status != StatusDownloaded || results[1].Status != StatusFailed ||
		!strings.Contains(results[1].Err.Error(), "gs://bkt/b/f and gs://bkt/a/f both map to the local file") {
		t.Fatalf("err %v; %s %v; %s %v", err, results[0].Status, results[0].Err, results[1].Status, results[1].Err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "first" {
		t.Fatalf("f = %q", b)
	}
}

// A link planted where the temporary file goes is refused: the file it
// points to is never written, and no symlink lands at the final path.
func TestDownloadRefusesLinkedTemp(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "o", randBytes(300<<10, 3))
	for _, kind := range []string{"symlink", "hardlink"} {
		t.Run(kind, func(t *testing.T) {
			c := newClient(t, srv, nil)
			dest := t.TempDir()
			important := filepath.Join(dest, "important.db")
			os.WriteFile(important, []byte("precious"), 0o644)
			temp := filepath.Join(dest, ".o.gcsput-partial")
			link, want := os.Symlink, "is a link (symbolic)"
			if kind == "hardlink" {
				link, want = os.Link, "is a link (2 hard links)"
			}
			if err := link(important, temp); err != nil {
				t.Fatal(err)
			}
			r, err := c.Download(context.Background(), URL{testBucket, "o"}, filepath.Join(dest, "o"), DownloadOptions{})
			if err == nil || !strings.Contains(err.Error(), "temporary file "+temp+" "+want) || !strings.HasPrefix(err.Error(), "download: ") {
				t.Fatalf("err = %v, want %q", err, want)
			}
			if r.Status != StatusFailed {
				t.Errorf("status %s", r.Status)
			}
			if b, _ := os.ReadFile(important); string(b) != "precious" {
				t.Errorf("important.db = %q", b)
			}
			if _, err := os.Lstat(filepath.Join(dest, "o")); err == nil {
				t.Errorf("o exists")
			}
		})
	}
}

// A temporary file another transfer holds (locked) is not written.
func TestDownloadRefusesLockedTemp(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "o", []byte("data"))
	c := newClient(t, srv, nil)
	dest := t.TempDir()
	temp := filepath.Join(dest, ".o.gcsput-partial")
	f, err := os.Create(temp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, err = c.Download(context.Background(), URL{testBucket, "o"}, filepath.Join(dest, "o"), DownloadOptions{})
	if err == nil || !strings.Contains(err.Error(), temp+" is being written by another transfer") {
		t.Fatalf("err = %v", err)
	}
	f.Close()
	if _, err := c.Download(context.Background(), URL{testBucket, "o"}, filepath.Join(dest, "o"), DownloadOptions{}); err != nil {
		t.Fatalf("after the lock is gone: %v", err)
	}
}

// The files a download writes beside its target are recognized by the one
// predicate mirroring tools use; files of the user's that look alike are not.
func TestIsTempFileName(t *testing.T) {
	for _, abs := range []string{"/d/x", "/d/sub/a.tar.gz", "/d/.hidden", "rel/x"} {
		for _, p := range []string{tempPath(abs), gunzipPath(abs)} {
			if !isTempFileName(p) || !isTempFileName(filepath.ToSlash(p)) {
				t.Errorf("isTempFileName(%q) = false for a file gcsput writes beside %s", p, abs)
			}
		}
	}
	for name, want := range map[string]bool{
		".gcsput-case-0123456789ab-Aa": true,
		"sub/.gcsput-case-00ff-Aa":     true,
		".x.gcsput-partial":            true,
		"x.gcsput-partial":             false, // not hidden: not a name gcsput gives
		".gcsput-partial":              false, // the partial file of no name
		".x.gcsput-partial.bak":        false,
		".x.gcsput-gunzip":             true,
		"x.gcsput-gunzip":              false,
		".gcsput-partial/x":            false,
		"gcsput-case-1-Aa":             false,
		"notes.txt":                    false,
	} {
		if got := isTempFileName(name); got != want {
			t.Errorf("isTempFileName(%q) = %v, want %v", name, got, want)
		}
	}
}
