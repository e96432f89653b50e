package manifest

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func open(t *testing.T, path string) *Manifest {
	t.Helper()
	m, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func rows(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s is not CSV: %v", path, err)
	}
	return recs
}

var at = time.Date(2026, 11, 28, 18, 30, 1, 123456789, time.UTC)

// TestManifestRowsAsGcloud: the header once, rows byte for byte as
// Python's csv writer makes gcloud's, and a reopen that knows which
// sources are done.
func TestManifestRowsAsGcloud(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	m := open(t, path)
	for _, r := range []Row{
		{Source: "file://a,b", Destination: "gs://bkt/a,b", Start: at.Add(-time.Second), End: at, Size: 10, Transferred: 10, Result: OK},
		{Source: `file://q"uote`, Destination: "gs://bkt/q", End: at, Size: 3, Transferred: 3, Result: Skip, Description: "exists"},
		{Source: "file://new\nline", Destination: "gs://bkt/n", End: at, Size: 5, Transferred: 5, Result: Error, Description: "boom\r\nagain"},
	} {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "Source,Destination,Start,End,Md5,Source Size,Bytes Transferred,Result,Description\r\n" +
		`"file://a,b","gs://bkt/a,b",2026-11-28T18:30:00.123456Z,2026-11-28T18:30:01.123456Z,,10,10,OK,` + "\r\n" +
		`"file://q""uote",gs://bkt/q,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,3,0,skip,exists` + "\r\n" +
		"\"file://new\nline\",gs://bkt/n,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,5,0,error,boom\\r\\nagain\r\n"
	if string(got) != want {
		t.Fatalf("manifest:\n%q\nwant\n%q", got, want)
	}
	m = open(t, path)
	if err := m.Add(Row{Source: "file://c", End: at, Result: OK}); err != nil {
		t.Fatal(err)
	}
	m.Close()
	recs := rows(t, path)
	if len(recs) != 5 || strings.Join(recs[0], ",") != strings.Join(Header, ",") || recs[4][0] != "file://c" {
		t.Fatalf("after a reopen: %q", recs)
	}
	m = open(t, path)
	defer m.Close()
	for src, want := range map[string]bool{"file://a,b": true, `file://q"uote`: true, "file://new\nline": false, "file://c": true, "file://d": false} {
		if m.Done(src) != want {
			t.Errorf("Done(%q) = %v, want %v", src, !want, want)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm()&^0o644 != 0 {
		t.Errorf("mode %v: more than 0644", fi.Mode())
	}
}

// TestManifestTornLastRow: a row cut short by a kill (with an open quote,
// or without) is ignored, cut off, and the next row starts on its own line.
func TestManifestTornLastRow(t *testing.T) {
	for name, torn := range map[string]string{
		"open quote": `"file://b,x","gs://bkt/b`,
		"plain":      "file://b,gs://bkt/b,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,5,5,O",
		"no columns": "file://b",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.csv")
			good := strings.Join(Header, ",") + "\r\nfile://a,gs://bkt/a,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,1,1,OK,\r\n"
			if err := os.WriteFile(path, []byte(good+torn), 0o644); err != nil {
				t.Fatal(err)
			}
			m := open(t, path)
			if !m.Done("file://a") || m.Done("file://b") || m.Done("file://b,x") {
				t.Fatalf("done: %v", m.done)
			}
			if err := m.Add(Row{Source: "file://b,x", Destination: "gs://bkt/b", End: at, Result: OK}); err != nil {
				t.Fatal(err)
			}
			m.Close()
			recs := rows(t, path)
			if len(recs) != 3 || recs[1][0] != "file://a" || recs[2][0] != "file://b,x" || recs[2][7] != OK {
				t.Fatalf("rows after the torn one: %q", recs)
			}
		})
	}
}

// TestManifestConcurrentAdds: rows from many workers are each whole.
func TestManifestConcurrentAdds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	m := open(t, path)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			src := fmt.Sprintf("file://dir/%d,\"%s\"\n", i, strings.Repeat("x", i*50))
			if err := m.Add(Row{Source: src, Destination: "gs://bkt/o", End: at, Size: int64(i), Result: OK}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	m.Close()
	recs := rows(t, path)
	if len(recs) != 65 {
		t.Fatalf("%d rows, want 1 + 64", len(recs))
	}
	m = open(t, path)
	defer m.Close()
	for i := range 64 {
		if !m.Done(fmt.Sprintf("file://dir/%d,\"%s\"\n", i, strings.Repeat("x", i*50))) {
			t.Fatalf("row %d not read back", i)
		}
	}
}

// TestManifestGsutilColumns: a gsutil manifest (with an UploadId column)
// is read by its header's names.
func TestManifestGsutilColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.csv")
	data := "Source,Destination,Start,End,Md5,UploadId,Source Size,Bytes Transferred,Result,Description\n" +
		"file://a,gs://bkt/a,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,,1,1,OK,\n" +
		"file://b,gs://bkt/b,2026-11-28T18:30:01.123456Z,2026-11-28T18:30:01.123456Z,,,1,0,error,no\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	m := open(t, path)
	defer m.Close()
	if !m.Done("file://a") || m.Done("file://b") {
		t.Fatalf("done: %v", m.done)
	}
}

// TestManifestUnopenable: a manifest in a missing directory is an error
// that names it.
func TestManifestUnopenable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "m.csv")
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "manifest "+path) {
		t.Fatalf("err = %v", err)
	}
}

// Check refuses a directory and a file in a directory that does not exist,
// naming the path as a shell takes it; "" and a new file beside others pass.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		"":                                   "",
		filepath.Join(dir, "m.csv"):          "",
		dir:                                  dir + " is a directory: name the manifest file (CSV) to write",
		filepath.Join(dir, "no", "my m.csv"): "'" + filepath.Join(dir, "no", "my m.csv") + "': directory " + filepath.Join(dir, "no") + " does not exist: create it, or name a file in another",
	} {
		err := Check(path)
		if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
			t.Errorf("Check(%q) = %v, want %q", path, err, want)
		}
	}
}
