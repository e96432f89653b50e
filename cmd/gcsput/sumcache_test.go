package main

import (
	"os"
	"path/filepath"
	"testing"
)

// sync keeps the CRC32Cs it read in the state directory's crc32c.cache;
// --no-checksum-cache neither writes nor reads it.
func TestSyncChecksumCacheFlag(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "a.txt"), 100)
	cache := filepath.Join(w.state, "crc32c.cache")
	for _, args := range [][]string{{"--no-checksum-cache"}, {"--no-checksum-cache"}} {
		if r := w.run(append(args, src, "gs://bkt/m")...); r.code != 0 {
			t.Fatalf("sync %q: exit %d\n%s", args, r.code, r.stderr)
		}
	}
	if _, err := os.Lstat(cache); err == nil {
		t.Fatal("--no-checksum-cache wrote crc32c.cache")
	}
	if r := w.run(src, "gs://bkt/m"); r.code != 0 {
		t.Fatalf("sync: exit %d\n%s", r.code, r.stderr)
	}
	if fi, err := os.Lstat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("crc32c.cache after a sync: %v, %v", fi, err)
	}
}
