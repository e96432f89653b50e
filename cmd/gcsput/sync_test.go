package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// syncWorld is a fake server and a local tree.
type syncWorld struct {
	t     *testing.T
	srv   *fakegcs.Server
	dir   string
	state string
}

func newSyncWorld(t *testing.T) *syncWorld {
	t.Parallel()
	dir := t.TempDir()
	return &syncWorld{t: t, srv: fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}}), dir: dir, state: filepath.Join(dir, "state")}
}

func (w *syncWorld) run(args ...string) cliResult {
	return runIn(context.Background(), false, append(append([]string{"sync"}, args...),
		"--endpoint", w.srv.URL(), "--state-dir", w.state, fastRetry)...)
}

func (w *syncWorld) names() string {
	names, _ := w.srv.ObjectNames("bkt")
	return strings.Join(names, " ")
}

func TestSyncUpload(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), 100)
	writeFile(t, filepath.Join(src, "sub", "b.bin"), 9<<20)
	writeFile(t, filepath.Join(src, "junk.tmp"), 10)
	w.srv.PutObject("bkt", "m/stale.txt", []byte("stale"))
	w.srv.PutObject("bkt", "m/keep.tmp", []byte("excluded, so kept"))

	// A dry run changes nothing and says what it would do.
	r := w.run("--delete", "--max-delete", "100%", "--dry-run", "--exclude", "*.tmp", src, "gs://bkt/m")
	if r.code != 0 || w.srv.Count("storage.objects.insert")+w.srv.Count("storage.objects.delete") != 0 ||
		!strings.Contains(r.stdout, "would copy") || !strings.Contains(r.stdout, "would delete        5 B  gs://bkt/m/stale.txt") ||
		!strings.Contains(r.stderr, "dry run: 2 to copy (9.0 MiB), 0 unchanged, 1 to delete; nothing was changed") {
		t.Fatalf("dry run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}

	r = w.run("--delete", "--max-delete", "100%", "--exclude", "*.tmp", "--json", src, "gs://bkt/m")
	if r.code != 0 || w.names() != "m/a.txt m/keep.tmp m/sub/b.bin" {
		t.Fatalf("sync: exit %d, objects %q\n%s", r.code, w.names(), r.stderr)
	}
	if _, sum := jsonLines(t, r.stdout); sum.Uploaded != 2 || sum.Deleted != 1 || sum.Failed != 0 {
		t.Errorf("summary %+v", sum)
	}

	// A second sync of the unchanged tree sends nothing and deletes nothing.
	inserts, deletes := w.srv.Count("storage.objects.insert"), w.srv.Count("storage.objects.delete")
	r = w.run("--delete", "--exclude", "*.tmp", "--json", src, "gs://bkt/m")
	if _, sum := jsonLines(t, r.stdout); r.code != 0 || sum.Skipped != 2 || sum.Transferred != 0 ||
		w.srv.Count("storage.objects.insert") != inserts || w.srv.Count("storage.objects.delete") != deletes {
		t.Errorf("second sync: exit %d, %+v, %d inserts", r.code, sum, w.srv.Count("storage.objects.insert")-inserts)
	}

	// A file edited in place with the same size is found by its CRC32C; with --mtime by its time.
	os.WriteFile(filepath.Join(src, "a.txt"), bytes.Repeat([]byte("z"), 100), 0o644)
	r = w.run("--json", src, "gs://bkt/m")
	if got, _, _ := w.srv.Object("bkt", "m/a.txt"); r.code != 0 || string(got) != strings.Repeat("z", 100) {
		t.Errorf("edited file: exit %d, object %q", r.code, got)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(src, "sub", "b.bin"), later, later)
	r = w.run("--mtime", "--json", src, "gs://bkt/m")
	if _, sum := jsonLines(t, r.stdout); r.code != 0 || sum.Uploaded != 1 {
		t.Errorf("--mtime: exit %d, %+v", r.code, sum)
	}
}

// A listing whose second page fails changes nothing: no copy, no deletion.
func TestSyncListingFailureDeletesNothing(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), 10)
	for i := range 1001 { // two pages of 1000
		w.srv.PutObject("bkt", fmt.Sprintf("m/stale%04d", i), []byte("stale"))
	}
	in := w.srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Skip: 1, Kind: fakegcs.KindStatus, Status: 403})
	r := w.run("--delete", src, "gs://bkt/m")
	names, _ := w.srv.ObjectNames("bkt")
	if r.code == 0 || in.Fired() != 1 || len(names) != 1001 || w.srv.Count("storage.objects.insert") != 0 ||
		w.srv.Count("storage.objects.list") != 2 || !strings.Contains(r.stderr, "nothing was changed") {
		t.Errorf("exit %d, %d objects left, %d inserts, %d lists\n%s", r.code, len(names), w.srv.Count("storage.objects.insert"), w.srv.Count("storage.objects.list"), r.stderr)
	}
}

func TestSyncDownload(t *testing.T) {
	w := newSyncWorld(t)
	w.srv.PutObject("bkt", "p/a.txt", []byte("alpha"))
	w.srv.PutObject("bkt", "p/sub/b.txt", []byte("beta"))
	dst := filepath.Join(w.dir, "dst")
	writeFile(t, filepath.Join(dst, "extra.txt"), 5)
	r := w.run("--delete", "--max-delete", "100%", "--json", "gs://bkt/p", dst)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for rel, want := range map[string]string{"a.txt": "alpha", "sub/b.txt": "beta"} {
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v", rel, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dst, "extra.txt")); err == nil {
		t.Error("extra.txt was not deleted")
	}
	gets := w.srv.Count("storage.objects.get")
	r = w.run("--delete", "--json", "gs://bkt/p", dst)
	if _, sum := jsonLines(t, r.stdout); r.code != 0 || sum.Skipped != 2 || w.srv.Count("storage.objects.get") != gets {
		t.Errorf("second sync: exit %d, %+v, %d gets", r.code, sum, w.srv.Count("storage.objects.get")-gets)
	}
}

// Deletion records carry the shard, like every other record.
func TestSyncDeleteRecordsCarryTheShard(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), 10)
	w.srv.PutObject("bkt", "m/stale.txt", []byte("stale"))
	r := w.run("--delete", "--max-delete", "100%", "--json", "--shard", "0/1", src, "gs://bkt/m")
	files, sum := jsonLines(t, r.stdout)
	if rec := files["gs://bkt/m/stale.txt"]; r.code != 0 || rec.Status != "deleted" || rec.Shard != "0/1" || sum.Deleted != 1 {
		t.Errorf("exit %d, record %+v, summary %+v\n%s", r.code, rec, sum, r.stderr)
	}
}

// A hostile object name cannot make a download sync write outside its
// directory: it fails, named, and the rest arrive.
func TestSyncDownloadRefusesTraversal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, LaxNames: true})
	srv.PutObject("bkt", "p/ok.txt", []byte("ok"))
	srv.PutObject("bkt", "p/../escape.txt", []byte("evil"))
	srv.PutObject("bkt", "p/a/../../up.txt", []byte("evil"))
	srv.PutObject("bkt", "p/link/x.txt", []byte("evil"))  // through a link the tree holds
	srv.PutObject("bkt", "p/c/./d.txt", []byte("dotted")) // fetched by its own name, written cleaned
	dst := filepath.Join(dir, "out", "dst")
	outside := filepath.Join(dir, "outside")
	os.MkdirAll(dst, 0o755)
	os.MkdirAll(outside, 0o755)
	os.Symlink(outside, filepath.Join(dst, "link"))
	r := runIn(context.Background(), false, "sync", "--json", "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), "gs://bkt/p", dst)
	for _, p := range []string{filepath.Join(dir, "out", "escape.txt"), filepath.Join(dir, "out", "up.txt"), filepath.Join(dir, "escape.txt"),
		filepath.Join(outside, "x.txt")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written outside the destination", p)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "ok.txt")); string(got) != "ok" {
		t.Errorf("ok.txt: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "c", "d.txt")); string(got) != "dotted" {
		t.Errorf("c/d.txt: %q", got)
	}
	files, sum := jsonLines(t, r.stdout)
	if rec := files[filepath.Join(dst, "link", "x.txt")]; !strings.Contains(rec.Error, "a symlink on its path leads out of "+dst) {
		t.Errorf("link/x.txt: %+v", rec)
	}
	if r.code != 1 || sum.Failed != 3 || !strings.Contains(files[dst].Error+r.stderr, `climbs out with ".."`) {
		t.Errorf("exit %d, summary %+v\n%s", r.code, sum, r.stderr)
	}
}

// The temporary components of composite uploads (gcsput-tmp/HASH/N), perhaps of an upload
// in progress, are neither deleted by 'sync --delete' into the bucket's root nor copied by a
// sync out of it.
func TestSyncLeavesComponentsAlone(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), 100)
	comp := "gcsput-tmp/0123456789abcdef0123456789abcdef/0"
	w.srv.PutObject("bkt", comp, []byte("in flight"))
	w.srv.PutObject("bkt", "gone.txt", []byte("deleted"))
	if r := w.run("--delete", "--max-delete", "100%", src, "gs://bkt"); r.code != 0 || w.names() != "a.txt "+comp {
		t.Fatalf("sync --delete: exit %d, objects %q\n%s", r.code, w.names(), r.stderr)
	}
	back := filepath.Join(w.dir, "back")
	if r := w.run("gs://bkt", back); r.code != 0 {
		t.Fatalf("sync down: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(back, "gcsput-tmp")); !os.IsNotExist(err) {
		t.Errorf("a component was copied: %v", err)
	}
}
