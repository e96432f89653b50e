package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// Objects of which one needs another's local file as a directory ("m/a"
// and "m/a/b"): the directory wins, decided before any download, at any
// parallelism. The file fails naming both objects; nothing is written for
// it, no temporary file and no record. (It was a race: one of the two
// failed at rename or mkdir, and a full-size ".a.gcsput-partial" that no
// record named could be left behind.)
func TestDownloadPrefixFileAndDirectory(t *testing.T) {
	names := []string{"m/a", "m/a/b", "m/a/c", "m/a/c/d", "m/a-b", "m/ab"}
	for _, j := range []int{1, 8} {
		t.Run("j"+itoa(int64(j)), func(t *testing.T) {
			srv := newServer(t, fakegcs.Options{})
			for i, name := range names {
				if _, err := srv.PutObject(testBucket, name, randBytes(300<<10+i, uint64(i+1))); err != nil {
					t.Fatal(err)
				}
			}
			c := newClient(t, srv, func(o *Options) { o.Parallelism = j; o.SmallFileThreshold = 1 })
			out := t.TempDir()
			results, err := c.DownloadPrefix(context.Background(), URL{testBucket, "m"}, out, DownloadOptions{})
			if !errors.Is(err, ErrSomeFailed) {
				t.Fatalf("err = %v, want ErrSomeFailed", err)
			}
			failed := map[string]string{}
			for _, r := range results {
				switch {
				case r.Status == StatusFailed && errors.Is(r.Err, ErrCollision):
					failed[r.Object] = r.Err.Error()
				case r.Status != StatusDownloaded:
					t.Errorf("%s: %s %v; want downloaded", r.Object, r.Status, r.Err)
				}
			}
			want := map[string]string{
				"m/a":   "gs://bkt/m/a and gs://bkt/m/a/b need the local path " + filepath.Join(out, "a") + " as a file and as a directory; the directory wins",
				"m/a/c": "gs://bkt/m/a/c and gs://bkt/m/a/c/d need the local path " + filepath.Join(out, "a", "c") + " as a file and as a directory",
			}
			for obj, text := range want {
				if !strings.Contains(failed[obj], text) {
					t.Errorf("%s: %q; want failed: %s", obj, failed[obj], text)
				}
			}
			if len(failed) != len(want) {
				t.Errorf("failed %v; want only %v", failed, want)
			}
			for _, obj := range []string{"m/a/b", "m/a/c/d", "m/a-b", "m/ab"} {
				wantFile(t, srv, obj, filepath.Join(out, strings.TrimPrefix(obj, "m/")))
			}
			if left := leftovers(t, out); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
			if ss, err := c.Sessions(); err != nil || len(ss) != 0 {
				t.Errorf("records %+v (%v); want none", ss, err)
			}
		})
	}
}

// DownloadObjects decides the same way, whatever the items' order.
func TestDownloadObjectsFileAndDirectory(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	srv.PutObject(testBucket, "f", []byte("file"))
	srv.PutObject(testBucket, "g", []byte("under"))
	c := newClient(t, srv, nil)
	out := t.TempDir()
	results, err := c.DownloadObjects(context.Background(), []Item{
		{Remote: URL{testBucket, "g"}, Local: filepath.Join(out, "x", "f", "g")},
		{Remote: URL{testBucket, "f"}, Local: filepath.Join(out, "x", "f")},
	}, DownloadOptions{})
	if !errors.Is(err, ErrSomeFailed) || results[0].Status != StatusDownloaded || results[1].Status != StatusFailed ||
		!strings.Contains(results[1].Err.Error(), "gs://bkt/f and gs://bkt/g need the local path "+filepath.Join(out, "x", "f")+" as a file and as a directory") {
		t.Fatalf("err %v; %s %v; %s %v", err, results[0].Status, results[0].Err, results[1].Status, results[1].Err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "x", "f", "g")); string(b) != "under" {
		t.Fatalf("x/f/g = %q", b)
	}
	if left := leftovers(t, out); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// wantFile fails unless the local file holds exactly the object's bytes.
func wantFile(t *testing.T, srv *fakegcs.Server, object, path string) {
	t.Helper()
	want, _, err := srv.Object(testBucket, object)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(want) {
		t.Errorf("%s: %d bytes (%v); want the %d of %s", path, len(got), err, len(want), object)
	}
}

// leftovers lists the files gcsput writes beside a target (isTempFileName:
// partial files, decompressing files) anywhere under dir.
func leftovers(t testing.TB, dir string) []string {
	t.Helper()
	var left []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && isTempFileName(p) {
			left = append(left, p)
		}
		return nil
	})
	sort.Strings(left)
	return left
}
