package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// --storage-class reaches both upload paths (one request, resumable);
// --bwlimit takes a rate; bad values of either are usage errors.
func TestCpStorageClassAndBwlimit(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "src", "small.txt"), 1000)
	writeFile(t, filepath.Join(dir, "src", "big.bin"), 9<<20)
	r := runIn(context.Background(), false, "cp", "-r", "--storage-class", "nearline", "--bwlimit", "512MiB/s",
		"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), filepath.Join(dir, "src"), "gs://bkt/d/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, name := range []string{"d/src/small.txt", "d/src/big.bin"} {
		if a, err := srv.Attrs("bkt", name); err != nil || a.StorageClass != "NEARLINE" {
			t.Errorf("%s: storage class %q, %v", name, a.StorageClass, err)
		}
	}
	wantUsage(t, runCLI(t, "", "cp", "--storage-class", "cheap", "x", "gs://bkt/"), `--storage-class "cheap": use STANDARD, NEARLINE, COLDLINE or ARCHIVE`)
	wantUsage(t, runCLI(t, "", "cp", "--bwlimit", "fast", "x", "gs://bkt/"), `--bwlimit "fast": want a rate such as 20MiB/s`)
}

// --if-generation-match replaces only the generation named, on both upload paths.
func TestCpIfGenerationMatch(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	for _, size := range []int{100, 9 << 20} { // one request; resumable
		name := "o" + strconv.Itoa(size)
		old, _ := srv.PutObject("bkt", name, []byte("old"))
		src := filepath.Join(dir, name)
		writeFile(t, src, size)
		common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), fastRetry}
		r := runIn(context.Background(), false, append([]string{"cp", "--if-generation-match", strconv.FormatInt(old.Generation+1, 10), src, "gs://bkt/" + name}, common...)...)
		if got, _, _ := srv.Object("bkt", name); r.code != 1 || string(got) != "old" {
			t.Errorf("%s, wrong generation: exit %d, object %q\n%s", name, r.code, got[:min(len(got), 8)], r.stderr)
		}
		r = runIn(context.Background(), false, append([]string{"cp", "--if-generation-match", strconv.FormatInt(old.Generation, 10), src, "gs://bkt/" + name}, common...)...)
		if got, _, _ := srv.Object("bkt", name); r.code != 0 || len(got) != size {
			t.Errorf("%s, right generation: exit %d, %d bytes\n%s", name, r.code, len(got), r.stderr)
		}
	}
	wantUsage(t, runCLI(t, "", "cp", "-r", "--if-generation-match", "5", "x", "gs://bkt/"), "--if-generation-match applies to one uploaded file")
}

// -z html stores .html files gzip-compressed with Content-Encoding: gzip (a
// reader gets the original bytes back), others as they are; results name
// the original files, and the compressed copies are gone afterwards.
func TestCpGzipExtensions(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	page := writeFile(t, filepath.Join(dir, "site", "index.html"), 5000)
	writeFile(t, filepath.Join(dir, "site", "notes.txt"), 300)
	state := filepath.Join(dir, "state")
	r := runIn(context.Background(), false, "cp", "-r", "-z", "html", "--json", "--endpoint", srv.URL(), "--state-dir", state,
		filepath.Join(dir, "site"), "gs://bkt/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	files, _ := jsonLines(t, r.stdout)
	if rec := files["gs://bkt/site/index.html"]; rec.Source != filepath.Join(dir, "site", "index.html") || rec.Status != "uploaded" {
		t.Errorf("record %+v", rec)
	}
	stored, attrs, _ := srv.Object("bkt", "site/index.html")
	zr, err := gzip.NewReader(bytes.NewReader(stored))
	if err != nil || attrs.ContentEncoding != "gzip" || !strings.HasPrefix(attrs.ContentType, "text/html") {
		t.Fatalf("index.html stored as %q/%q: %v", attrs.ContentEncoding, attrs.ContentType, err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, page) {
		t.Error("the stored gzip does not hold the page")
	}
	if a, _ := srv.Attrs("bkt", "site/notes.txt"); a.ContentEncoding != "" || a.Size != 300 {
		t.Errorf("notes.txt: %+v", a)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "gzip", "*")); len(left) != 0 {
		t.Errorf("compressed copies left: %q", left)
	}
	for _, f := range []string{"index.html", "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, "site", f)); err != nil {
			t.Errorf("the source %s is gone: %v", f, err)
		}
	}
}

// cp downloads an object over --slice-threshold in --max-slices ranged GETs;
// --max-slices 1 takes one stream; bad values are usage errors.
func TestCpSlicedDownload(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 3<<16+7) // 3 MiB + 112 bytes
	srv.PutObject("bkt", "big", data)
	for _, tc := range []struct {
		slices string
		gets   int
	}{{"3", 3}, {"1", 1}} {
		srv.ResetStats()
		dst := filepath.Join(dir, "big"+tc.slices)
		r := runIn(context.Background(), false, "cp", "--slice-threshold", "1MiB", "--max-slices", tc.slices,
			"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), "gs://bkt/big", dst)
		if r.code != 0 {
			t.Fatalf("--max-slices %s: exit %d: %s", tc.slices, r.code, r.stderr)
		}
		if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
			t.Fatalf("--max-slices %s: the file differs from the object", tc.slices)
		}
		if n := srv.Count("storage.objects.get"); n != tc.gets {
			t.Errorf("--max-slices %s: %d GETs, want %d", tc.slices, n, tc.gets)
		}
	}
	wantUsage(t, runCLI(t, "", "cp", "--max-slices", "-2", "gs://bkt/big", dir), "--max-slices must be at least 1, got -2")
	wantUsage(t, runCLI(t, "", "cp", "--slice-threshold", "0", "gs://bkt/big", dir), "--slice-threshold must be a positive size")
}
