package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A sync (or cp -r) whose bucket does not exist is refused alike on either side: exit 2,
// one line naming the bucket, nothing transferred. (Issue 29 reported the source's exit
// as 1; this guards the preflight that already makes both 2.)
func TestSyncMissingBucketEitherSide(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "src", "a.txt"), 10)
	common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state")}
	for _, args := range [][]string{
		{"sync", filepath.Join(dir, "src"), "gs://nosuchbkt/p"},
		{"sync", "gs://nosuchbkt/p", filepath.Join(dir, "dst")},
		{"sync", "--dry-run", "gs://nosuchbkt/p", filepath.Join(dir, "dst")},
		{"sync", "gs://nosuchbkt", filepath.Join(dir, "dst")},
		{"sync", "-d", "gs://nosuchbkt/", filepath.Join(dir, "dst")},
		{"rsync", "-r", "gs://nosuchbkt/p/", filepath.Join(dir, "src")},
		{"sync", "--delete", filepath.Join(dir, "src"), "gs://nosuchbkt/p"},
		{"cp", "-r", "gs://nosuchbkt/p", filepath.Join(dir, "dst")},
		{"cp", "-r", filepath.Join(dir, "src"), "gs://nosuchbkt/p"},
	} {
		r := runIn(context.Background(), false, append(args, common...)...)
		want := "gs://nosuchbkt: bucket does not exist (check its name, or 'gcsput ls gs://nosuchbkt'); nothing was transferred"
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("gcsput %q: exit %d, stderr:\n%s\nwant exit 2 and %q", args, r.code, r.stderr, want)
		}
	}
}
