package upload

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// readManifest returns a manifest's last row of each source, and how many
// headers and rows it has.
func readManifest(t *testing.T, path string) (map[string][]string, int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("manifest is not CSV: %v", err)
	}
	rows, headers := map[string][]string{}, 0
	for _, r := range recs {
		if r[0] == "Source" {
			headers++
			continue
		}
		rows[r[0]] = r // the last row of a source
	}
	return rows, headers, len(recs) - headers
}

// object is the object name of a local name: GCS refuses line ends.
func object(local string) string { return strings.ReplaceAll(local, "\n", "_") }

// TestUploadManifestRerun: a batch writes a row per file (OK, skip, error),
// and a rerun with the same manifest sends only what it does not record
// as done: the failed file, now there.
func TestUploadManifestRerun(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.csv")
	names := []string{"plain", "a,comma", `a"quote`, "new\nline", "exists", "missing"}
	var items []Item
	for _, n := range names {
		p := filepath.Join(dir, "src", n)
		if n != "missing" {
			writeTemp(t, filepath.Join(dir, "src"), n, randBytes(1000+len(n), uint64(len(n))))
		}
		items = append(items, Item{Local: p, Remote: URL{Bucket: testBucket, Object: object(n)}})
	}
	if _, err := srv.PutObject(testBucket, "exists", []byte("old")); err != nil {
		t.Fatal(err)
	}
	run := func() []*Result {
		c := newClient(t, srv, func(o *Options) { o.Manifest = path })
		results, _ := c.Upload(context.Background(), items, UploadOptions{NoClobber: true})
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		return results
	}
	run()
	rows, headers, n := readManifest(t, path)
	want := map[string]string{"plain": "OK", "a,comma": "OK", `a"quote`: "OK", "new\nline": "OK", "exists": "skip", "missing": "error"}
	for n, res := range want {
		r, ok := rows["file://"+filepath.Join(dir, "src", n)]
		if !ok || r[7] != res || r[1] != "gs://bkt/"+object(n) {
			t.Errorf("%q: row %q, want result %s", n, r, res)
		}
		if res == "OK" && r[6] != r[5] || res != "OK" && r[6] != "0" {
			t.Errorf("%q: bytes transferred %s of %s", n, r[6], r[5])
		}
	}
	if headers != 1 || n != len(names) {
		t.Fatalf("%d headers, %d rows: %q", headers, n, rows)
	}
	if d := rows["file://"+filepath.Join(dir, "src", "missing")][8]; !strings.Contains(d, "no such file") {
		t.Errorf("error row's description %q", d)
	}
	before := srv.InsertCounts(testBucket)

	writeTemp(t, filepath.Join(dir, "src"), "missing", []byte("now here"))
	for _, r := range run() {
		wantStatus, wantNote := StatusSkipped, inManifest
		if filepath.Base(r.Source) == "missing" {
			wantStatus, wantNote = StatusUploaded, ""
		}
		if r.Status != wantStatus || r.Note != wantNote {
			t.Errorf("rerun %q: %s %q (%v), want %s %q", r.Source, r.Status, r.Note, r.Err, wantStatus, wantNote)
		}
	}
	after := srv.InsertCounts(testBucket)
	for _, n := range names {
		sent := after[object(n)] - before[object(n)]
		if n == "missing" && sent != 1 || n != "missing" && sent != 0 {
			t.Errorf("rerun inserted %q %d times", n, sent)
		}
	}
	rows2, headers, n := readManifest(t, path)
	if headers != 1 || n != len(names)+1 {
		t.Fatalf("after the rerun: %d headers, %d rows, want 1 and %d", headers, n, len(names)+1)
	}
	if r := rows2["file://"+filepath.Join(dir, "src", "missing")]; r[7] != "OK" || r[5] != "8" {
		t.Errorf("rerun's row %q", r)
	}
}

// TestDownloadManifestSkips: downloads write rows and are skipped by them
// too; the source is the gs:// URL.
func TestDownloadManifestSkips(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, n := range []string{"x", "y"} {
		if _, err := srv.PutObject(testBucket, n, []byte("data "+n)); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.csv")
	items := []Item{{Local: filepath.Join(dir, "x"), Remote: URL{Bucket: testBucket, Object: "x"}}}
	c := newClient(t, srv, func(o *Options) { o.Manifest = path })
	if _, err := c.DownloadObjects(context.Background(), items, DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	os.Remove(items[0].Local)
	c = newClient(t, srv, func(o *Options) { o.Manifest = path })
	items = append(items, Item{Local: filepath.Join(dir, "y"), Remote: URL{Bucket: testBucket, Object: "y"}})
	rs, err := c.DownloadObjects(context.Background(), items, DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Status != StatusSkipped || rs[0].Note != inManifest || rs[1].Status != StatusDownloaded {
		t.Fatalf("second batch: %s %q, %s", rs[0].Status, rs[0].Note, rs[1].Status)
	}
	if _, err := os.Stat(items[0].Local); !os.IsNotExist(err) {
		t.Fatalf("a download the manifest skips was written: %v", err)
	}
	c.Close()
	rows, _, n := readManifest(t, path)
	if n != 2 || rows["gs://bkt/x"][7] != "OK" || rows["gs://bkt/y"][1] != "file://"+filepath.Join(dir, "y") {
		t.Fatalf("rows %q", rows)
	}
}

// TestCopyManifestSkips: server-side copies write rows (source and
// destination as gs:// URLs) and a rerun rewrites only what is not done.
func TestCopyManifestSkips(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, n := range []string{"x", "y"} {
		if _, err := srv.PutObject(testBucket, n, []byte("data "+n)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "m.csv")
	items := []CopyItem{{Src: URL{Bucket: testBucket, Object: "x"}, Dst: URL{Bucket: testBucket, Object: "copy/x"}}}
	c := newClient(t, srv, func(o *Options) { o.Manifest = path })
	if _, err := c.CopyObjects(context.Background(), items, CopyOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	rewrites := srv.Count("storage.objects.rewrite")
	items = append(items, CopyItem{Src: URL{Bucket: testBucket, Object: "y"}, Dst: URL{Bucket: testBucket, Object: "copy/y"}})
	c = newClient(t, srv, func(o *Options) { o.Manifest = path })
	rs, err := c.CopyObjects(context.Background(), items, CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Status != StatusSkipped || rs[0].Note != inManifest || !rs[1].OK() || rs[1].Status == StatusSkipped {
		t.Fatalf("second batch: %s %q, %s", rs[0].Status, rs[0].Note, rs[1].Status)
	}
	if n := srv.Count("storage.objects.rewrite") - rewrites; n != 1 {
		t.Fatalf("rerun made %d rewrites, want 1 (y only)", n)
	}
	c.Close()
	rows, _, n := readManifest(t, path)
	if n != 2 || rows["gs://bkt/x"][1] != "gs://bkt/copy/x" || rows["gs://bkt/y"][7] != "OK" {
		t.Fatalf("rows %q", rows)
	}
}
