package main

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Objects "p/a" and "p/a/b" downloaded by cp -r and by sync: the local
// path a cannot be both. The directory wins, decided when the transfer is
// planned, at any -j: "p/a" fails naming both objects, everything else is
// downloaded byte-exact, and nothing is left that no record names (no
// ".a.gcsput-partial", no saved session). Each command runs twice into
// fresh directories, and the suite runs with -count, to show the outcome
// never depends on which download ends first. (It was a race: either
// object could lose, the file's loss leaving a full-size partial behind.)
func TestFileAndDirectoryDownload(t *testing.T) {
	e := newE2E(t)
	objects := map[string]int{"p/a": 3 << 20, "p/a/b": 1 << 20, "p/a/c/d": 200 << 10, "p/z": 10}
	for name, size := range objects {
		b := make([]byte, size)
		_, _ = rand.NewChaCha8([32]byte{byte(size), byte(len(name))}).Read(b)
		if _, err := e.srv.PutObject("bkt", name, b); err != nil {
			t.Fatal(err)
		}
	}
	runs := [][]string{
		{"cp", "-r", "-j", "8"}, {"cp", "-r", "-j", "1"}, {"cp", "-r", "-j", "8"},
		{"sync", "-j", "8"}, {"sync", "-j", "1"}, {"sync", "-j", "8"},
	}
	for i, cmd := range runs {
		out := filepath.Join(e.dir, "out"+itoa(i))
		r := e.run(nil, append(cmd, "--json", fastRetry, "gs://bkt/p", out)...)
		what := strings.Join(cmd, " ")
		if r.code != 1 {
			t.Fatalf("%s: exit %d; want 1\n%s", what, r.code, r.stderr)
		}
		files, sum := jsonLines(t, r.stdout)
		if sum.Failed != 1 || sum.Downloaded != 3 {
			t.Errorf("%s: summary %+v; want 3 downloaded, 1 failed", what, sum)
		}
		want := "gs://bkt/p/a and gs://bkt/p/a/b need the local path " + filepath.Join(out, "a") +
			" as a file and as a directory; the directory wins"
		if rec := files[filepath.Join(out, "a")]; rec.Status != "failed" || !strings.Contains(rec.Error, want) {
			t.Errorf("%s: a: %s %q; want failed: %s", what, rec.Status, rec.Error, want)
		}
		for _, name := range []string{"p/a/b", "p/a/c/d", "p/z"} {
			got, err := os.ReadFile(filepath.Join(out, strings.TrimPrefix(name, "p/")))
			if want := e.object(name); err != nil || string(got) != string(want) {
				t.Errorf("%s: %s: %d bytes (%v); want the object's %d", what, name, len(got), err, len(want))
			}
		}
		filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".gcsput-partial") {
				t.Errorf("%s: left behind %s", what, p)
			}
			return nil
		})
		if ls := e.must(nil, "sessions", "ls"); strings.Contains(ls.stdout, "gs://bkt/p/") {
			t.Errorf("%s: a record was saved:\n%s", what, ls.stdout)
		}
	}
}
