package main

import (
	"context"
	"path/filepath"
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
