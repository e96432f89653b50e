package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// manifestRows reads a manifest written by gcsput: its header and rows.
func manifestRows(t *testing.T, path string) [][]string {
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
	return recs
}

// TestCpManifestRerun: cp -r -L writes gcloud's header and a row per file
// (OK, skip for -n, error for a refused upload); a rerun with the same
// manifest skips what it records and sends only the failed file.
func TestCpManifestRerun(t *testing.T) {
	// The first upload of data/locked is refused (403, not retried); a rerun's is not.
	e := newE2E(t, fakegcs.Fault{Kind: fakegcs.KindStatus, Bucket: "bkt", Object: "d/data/locked", Status: 403})
	e.write("data/plain", 100)
	e.write("data/a,comma", 200)
	e.write(`data/q"uote`, 300)
	e.write("data/exists", 50)
	e.write("data/locked", 60)
	if _, err := e.srv.PutObject("bkt", "d/data/exists", []byte("old")); err != nil {
		t.Fatal(err)
	}
	r := e.run(nil, "cp", fastRetry, "-r", "-n", "-L", "m.csv", "data", "gs://bkt/d/")
	if r.code != 1 {
		t.Fatalf("first run: exit %d, want 1 (a file failed)\n%s%s", r.code, r.stdout, r.stderr)
	}
	path := filepath.Join(e.dir, "m.csv")
	recs := manifestRows(t, path)
	if strings.Join(recs[0], ",") != "Source,Destination,Start,End,Md5,Source Size,Bytes Transferred,Result,Description" {
		t.Fatalf("header %q", recs[0])
	}
	want := map[string]string{"plain": "OK", "a,comma": "OK", `q"uote`: "OK", "exists": "skip", "locked": "error"}
	got := map[string]string{}
	for _, rec := range recs[1:] {
		name := strings.TrimPrefix(rec[0], "file://data/")
		got[name] = rec[7]
		if rec[1] != "gs://bkt/d/data/"+name {
			t.Errorf("row %q: destination %q", name, rec[1])
		}
	}
	if len(recs) != 6 || len(got) != len(want) {
		t.Fatalf("rows %q", recs)
	}
	for n, res := range want {
		if got[n] != res {
			t.Errorf("%q: result %q, want %q", n, got[n], res)
		}
	}
	before := e.srv.InsertCounts("bkt")

	r = e.must(nil, "cp", fastRetry, "-r", "-n", "-L", "m.csv", "data", "gs://bkt/d/")
	if n := strings.Count(r.stdout, "(in manifest)"); n != 4 {
		t.Errorf("rerun reported %d files skipped in manifest, want 4:\n%s", n, r.stdout)
	}
	after := e.srv.InsertCounts("bkt")
	for n := range want {
		o := "d/data/" + n
		sent := after[o] - before[o]
		if n == "locked" && sent != 1 || n != "locked" && sent != 0 {
			t.Errorf("rerun inserted %q %d times", n, sent)
		}
	}
	recs = manifestRows(t, path)
	if len(recs) != 7 || recs[6][0] != "file://data/locked" || recs[6][7] != "OK" || recs[6][5] != "60" || recs[6][6] != "60" {
		t.Fatalf("after the rerun: %q", recs)
	}
}

// TestCpManifestRefused: a -L path that cannot be written, or -L with -Z
// (rows would name the compressed temporary copies), is a usage
// error (exit 2), with nothing sent.
func TestCpManifestRefused(t *testing.T) {
	e := newE2E(t)
	e.write("f", 10)
	for _, c := range []struct{ path, says string }{
		{filepath.Join(e.dir, "no", "m.csv"), "does not exist: create it"},
		{e.dir, "is a directory: name the manifest file"},
		{"m.csv -Z", "-L with -z or -Z is not supported"},
	} {
		args := append([]string{"cp", "-L"}, strings.Fields(c.path)...)
		r := e.run(nil, append(args, "f", "gs://bkt/f")...)
		if r.code != 2 || !strings.Contains(r.stderr, c.says) {
			t.Errorf("-L %s: exit %d, stderr %q", c.path, r.code, r.stderr)
		}
	}
	if n := len(e.srv.InsertCounts("bkt")); n != 0 {
		t.Fatalf("%d objects written", n)
	}
}
