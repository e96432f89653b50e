package main

import (
	"context"
	"path/filepath"
	"strconv"
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
