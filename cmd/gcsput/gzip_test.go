package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// A tree uploaded with -z comes back as it was: cp, cp -r, sync and cat write
// the content of the gzip-encoded objects, not their stored bytes (as gsutil
// and gcloud do). A second sync, either way, copies nothing: the objects
// carry their content's size and CRC32C, which sync compares the files with.
func TestGzipRoundTrip(t *testing.T) {
	e := newE2E(t)
	files := map[string][]byte{
		"site/index.txt":   bytes.Repeat([]byte("<p>gcsput</p>\n"), 5000), // compresses well
		"site/sub/log.txt": e.write("site/sub/log.txt", 300<<10),
		"site/photo.bin":   e.write("site/photo.bin", 2000), // not -z: stored as it is
	}
	os.WriteFile(filepath.Join(e.dir, "site/index.txt"), files["site/index.txt"], 0o644)
	e.must(nil, "cp", "-r", "-z", "txt", fastRetry, "site", "gs://bkt/")
	for _, name := range []string{"site/index.txt", "site/sub/log.txt"} {
		if _, a, _ := e.srv.Object("bkt", name); a.ContentEncoding != "gzip" || bytes.Equal(e.object(name), files[name]) {
			t.Fatalf("%s is not stored gzip-encoded: %+v", name, a)
		}
	}
	same := func(what, dir string) {
		t.Helper()
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join(e.dir, dir, strings.TrimPrefix(name, "site/")))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: %s has %d bytes, want the %d of the original: %v", what, name, len(got), len(want), err)
			}
		}
		var left []string
		filepath.WalkDir(filepath.Join(e.dir, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".gcsput-") {
				left = append(left, p)
			}
			return nil
		})
		if len(left) > 0 {
			t.Errorf("%s: left behind: %q", what, left)
		}
	}
	e.must(nil, "cp", fastRetry, "gs://bkt/site/index.txt", "one/index.txt")
	if got, _ := os.ReadFile(filepath.Join(e.dir, "one/index.txt")); !bytes.Equal(got, files["site/index.txt"]) {
		t.Errorf("cp: index.txt has %d bytes, want %d", len(got), len(files["site/index.txt"]))
	}
	e.must(nil, "cp", "-r", fastRetry, "gs://bkt/site", "tree")
	same("cp -r", "tree")
	e.must(nil, "sync", fastRetry, "gs://bkt/site", "mirror")
	same("sync", "mirror")
	for _, args := range [][]string{{"gs://bkt/site", "mirror"}, {"site", "gs://bkt/site"}} {
		r := e.must(nil, append([]string{"sync", "--json", fastRetry}, args...)...)
		if _, sum := jsonLines(t, r.stdout); sum.Skipped != 3 || sum.Files != 3 || sum.Transferred != 0 {
			t.Errorf("second sync %v: %+v, want the 3 files skipped\n%s", args, sum, r.stdout)
		}
	}
	if _, a, _ := e.srv.Object("bkt", "site/index.txt"); a.ContentEncoding != "gzip" {
		t.Error("the sync up replaced a gzip-encoded object")
	}
	e.must(nil, "cp", "--do-not-decompress", "gs://bkt/site/index.txt", "raw.gz")
	if got, _ := os.ReadFile(filepath.Join(e.dir, "raw.gz")); !bytes.Equal(got, e.object("site/index.txt")) {
		t.Error("cp --do-not-decompress did not write the stored bytes")
	}
	for _, args := range [][]string{{"cat", "gs://bkt/site/sub/log.txt"}, {"cp", "gs://bkt/site/sub/log.txt", "-"}} {
		if r := e.must(nil, args...); r.stdout != string(files["site/sub/log.txt"]) {
			t.Errorf("%v wrote %d bytes, want the %d of the original", args, len(r.stdout), len(files["site/sub/log.txt"]))
		}
	}
}

// An object stored with Content-Encoding: gzip whose bytes (which match its
// CRC32C) are not gzip fails every download with an error that names it;
// no file appears at the target and nothing is left beside it.
func TestGzipCorruptStoredObjectFails(t *testing.T) {
	e := newE2E(t)
	if _, err := e.srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: "bkt", Name: "d/bad.txt", ContentEncoding: "gzip"},
		strings.NewReader("this was never gzip\n")); err != nil {
		t.Fatal(err)
	}
	want := "gs://bkt/d/bad.txt is stored with Content-Encoding: gzip, but its stored bytes are not a valid gzip stream"
	for _, args := range [][]string{
		{"cp", "gs://bkt/d/bad.txt", "out/bad.txt"}, {"cp", "-r", "gs://bkt/d", "tree"}, {"sync", "gs://bkt/d", "mirror"},
		{"cat", "gs://bkt/d/bad.txt"}, {"cp", "gs://bkt/d/bad.txt", "-"},
	} {
		r := e.run(nil, append(args, fastRetry)...)
		if r.code != exitFailed || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, r.code, r.stderr, exitFailed, want)
		}
	}
	for _, dir := range []string{"out", "tree", "mirror"} {
		if names, _ := os.ReadDir(filepath.Join(e.dir, dir)); len(names) != 0 {
			t.Errorf("%s holds %v after the failure", dir, names)
		}
	}
}

// A compressed copy left by a failed -z upload is not reused for a file
// rewritten since, even when its size and modification time are the old
// ones: the object holds the new content and describes it.
func TestGzipStaleCachedCopyNotReused(t *testing.T) {
	e := newE2E(t)
	src := filepath.Join(e.dir, "a.txt")
	when := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, content := range []string{"version one", "version TWO"} {
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(src, when, when); err != nil {
			t.Fatal(err)
		}
		if i == 0 { // no such bucket: fails, and leaves the compressed copy
			if r := e.run(nil, "cp", "-z", "txt", fastRetry, "a.txt", "gs://nobkt/s4/a.txt"); r.code == 0 {
				t.Fatalf("the upload to a missing bucket succeeded: %s", r.stderr)
			}
		}
	}
	e.must(nil, "cp", "-z", "txt", fastRetry, "a.txt", "gs://bkt/s4/a.txt")
	if r := e.must(nil, "cat", "gs://bkt/s4/a.txt"); r.stdout != "version TWO" {
		t.Errorf("cat printed %q, want the file's current content %q", r.stdout, "version TWO")
	}
	e.must(nil, "cp", fastRetry, "gs://bkt/s4/a.txt", "back.txt")
	if got, _ := os.ReadFile(filepath.Join(e.dir, "back.txt")); string(got) != "version TWO" {
		t.Errorf("the download holds %q, want %q", got, "version TWO")
	}
}
