package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gcloud storage rsync's flags through the built binary: --no-clobber keeps what the
// prefix holds, --skip-if-dest-has-newer-mtime keeps a newer object, --ignore-symlinks
// skips a link (and --delete keeps what the prefix holds under its name), and
// --checksums-only is accepted as the default comparison.
func TestSyncGcloudFlags(t *testing.T) {
	e := newE2E(t)
	src := filepath.Join(e.dir, "src")
	e.write("src/a.txt", 10)
	e.write("src/b.txt", 20)
	if err := os.Symlink("a.txt", filepath.Join(src, "link.txt")); err != nil {
		t.Fatal(err)
	}
	e.srv.PutObject("bkt", "m/a.txt", []byte("held"))
	e.srv.PutObject("bkt", "m/link.txt", []byte("held link"))

	r := e.must(nil, "sync", "--no-clobber", "--ignore-symlinks", "--delete", "--max-delete", "100%", "--checksums-only", "--json", src, "gs://bkt/m")
	if got := string(e.object("m/a.txt")); got != "held" {
		t.Errorf("--no-clobber: m/a.txt %q", got)
	}
	if got := string(e.object("m/link.txt")); got != "held link" {
		t.Errorf("--ignore-symlinks --delete: m/link.txt %q", got)
	}
	recs, sum := jsonLines(t, r.stdout)
	if sum.Uploaded != 1 || sum.Skipped != 2 || sum.Deleted != 0 || recs["gs://bkt/m/a.txt"].Reason != "exists (no-clobber)" {
		t.Errorf("summary %+v, a.txt %+v\n%s", sum, recs["gs://bkt/m/a.txt"], r.stdout)
	}

	// The dry run counts what --no-clobber keeps.
	r = e.must(nil, "sync", "--no-clobber", "--dry-run", src, "gs://bkt/m")
	if !strings.Contains(r.stderr, "dry run: 0 to copy (0 B), 0 unchanged, 0 to delete, 3 kept as the destination holds them (--no-clobber, -u)") {
		t.Errorf("dry run:\n%s", r.stderr)
	}

	// -u: the object synced last carries the file's mtime; a file edited since, but
	// dated earlier, is left alone; without the flag it is sent.
	e.must(nil, "sync", src, "gs://bkt/m")
	past := time.Now().Add(-48 * time.Hour)
	e.write("src/b.txt", 21)
	os.Chtimes(filepath.Join(src, "b.txt"), past, past)
	r = e.must(nil, "sync", "--skip-if-dest-has-newer-mtime", "--json", src, "gs://bkt/m")
	if recs, sum := jsonLines(t, r.stdout); sum.Uploaded != 0 || recs["gs://bkt/m/b.txt"].Reason != "destination is newer" || len(e.object("m/b.txt")) != 20 {
		t.Errorf("-u: %+v %+v, object %d bytes", sum, recs["gs://bkt/m/b.txt"], len(e.object("m/b.txt")))
	}
	e.must(nil, "sync", "--no-ignore-symlinks", src, "gs://bkt/m")
	if n := len(e.object("m/b.txt")); n != 21 {
		t.Errorf("without -u: %d bytes", n)
	}
	if got := string(e.object("m/link.txt")); got != string(e.object("m/a.txt")) {
		t.Errorf("--no-ignore-symlinks: link.txt %q", got)
	}
}

// gcloud's spellings that gcsput cannot honour as written are usage errors that say why.
func TestSyncGcloudFlagsRefused(t *testing.T) {
	e := newE2E(t)
	src := filepath.Join(e.dir, "src")
	e.write("src/a.txt", 10)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sync", "--checksums-only", "--mtime", src, "gs://bkt/m"}, "--checksums-only and --mtime contradict"},
		{[]string{"sync", "--ignore-symlinks", "--no-ignore-symlinks", src, "gs://bkt/m"}, "--ignore-symlinks and --no-ignore-symlinks contradict"},
		{[]string{"rsync", "-u", src, "gs://bkt/m"}, "sync takes a source and a destination and got one: -u (--billing-project) took " + src + " as its PROJECT; gcsput's -u is gsutil's -u PROJECT, not gcloud rsync's -u: for that, spell it --skip-if-dest-has-newer-mtime"},
		{[]string{"sync", "--custom-time", "yesterday", src, "gs://bkt/m"}, "--custom-time yesterday: give an RFC 3339 time, e.g. 2026-01-02T15:04:05Z"},
		{[]string{"sync", "--custom-time", "2026-01-02T15:04:05Z", "gs://bkt/m", src}, "--custom-time 2026-01-02T15:04:05Z: sets the customTime of the objects an upload sync (a directory to gs://) writes; this sync writes none"},
		{[]string{"sync", "-x", "a(?=b)", src, "gs://bkt/m"}, "-x 'a(?=b)': invalid or unsupported Perl syntax: `(?=` (gcsput reads gsutil's Python-style regular expressions in Go's RE2 syntax, which has no lookaround or backreferences)"},
		{[]string{"cp", "--preserve-symlinks", src + "/a.txt", "gs://bkt/m"}, "--preserve-symlinks is gcloud's: gcsput stores no link as a link"},
	} {
		r := e.run(nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || e.srv.Count("storage.objects.insert") != 0 {
			t.Errorf("%v: exit %d\n%s", c.args, r.code, r.stderr)
		}
	}
}

// --custom-time sets the customTime of each object sync writes.
func TestSyncCustomTimeFlag(t *testing.T) {
	e := newE2E(t)
	src := filepath.Join(e.dir, "src")
	e.write("src/a.txt", 10)
	e.must(nil, "sync", "--custom-time", "2026-01-02T15:04:05+01:00", src, "gs://bkt/m")
	_, a, err := e.srv.Object("bkt", "m/a.txt")
	if want := time.Date(2026, 1, 2, 14, 4, 5, 0, time.UTC); err != nil || !a.CustomTime.Equal(want) {
		t.Errorf("customTime %v, %v", a.CustomTime, err)
	}
}

// cp --custom-time sets the customTime of each object an upload writes
// (one file, and -r of a tree); a download or a copy between buckets is a
// usage error, exit 2, nothing sent.
func TestCpCustomTimeFlag(t *testing.T) {
	e := newE2E(t)
	e.write("src/a.txt", 10)
	e.write("src/d/b.txt", 300<<10) // beyond one request: a resumable upload
	want := time.Date(2026, 1, 2, 14, 4, 5, 0, time.UTC)
	e.must(nil, "cp", "--custom-time", "2026-01-02T15:04:05+01:00", filepath.Join(e.dir, "src", "a.txt"), "gs://bkt/one/")
	e.must(nil, "cp", "-r", "--custom-time", "2026-01-02T14:04:05Z", filepath.Join(e.dir, "src"), "gs://bkt/tree")
	for _, name := range []string{"one/a.txt", "tree/a.txt", "tree/d/b.txt"} {
		if _, a, err := e.srv.Object("bkt", name); err != nil || !a.CustomTime.Equal(want) {
			t.Errorf("%s: customTime %v, %v; want %v", name, a.CustomTime, err, want)
		}
	}
	inserts := e.srv.Count("storage.objects.insert")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cp", "--custom-time", "soon", filepath.Join(e.dir, "src", "a.txt"), "gs://bkt/x"}, "--custom-time soon: give an RFC 3339 time"},
		{[]string{"cp", "--custom-time", "2026-01-02T15:04:05Z", "gs://bkt/one/a.txt", filepath.Join(e.dir, "out")}, "--custom-time sets the customTime of the objects an upload writes; a download writes none"},
		{[]string{"cp", "--custom-time", "2026-01-02T15:04:05Z", "gs://bkt/one/a.txt", "gs://bkt/two"}, "a copy between buckets keeps the source's"},
	} {
		r := e.run(nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || e.srv.Count("storage.objects.insert") != inserts || e.srv.Count("storage.objects.rewrite") != 0 {
			t.Errorf("%v: exit %d\n%s", c.args, r.code, r.stderr)
		}
	}
}
