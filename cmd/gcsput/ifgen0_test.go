package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// --if-generation-match 0 means "only if absent", as in gcloud and the JSON API, on every
// path that takes it: an upload (single request, resumable) and a copy between gs://
// locations fail against an existing object and leave it as it was; into a name that is
// free they write. rm refuses it: "delete only if absent" deletes nothing. It was read as
// "not given" and overwrote (or deleted), exit 0.
func TestIfGenerationMatchZeroMeansAbsent(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), fastRetry}
	if _, err := srv.PutObject("bkt", "src", []byte("source")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		size int // 0: a copy from gs://bkt/src
	}{{"small", 100}, {"big", 9 << 20}, {"copy", 0}} {
		src := "gs://bkt/src"
		if tc.size > 0 {
			src = filepath.Join(dir, tc.name)
			writeFile(t, src, tc.size)
		}
		dst := "gs://bkt/" + tc.name
		if _, err := srv.PutObject("bkt", tc.name, []byte("old")); err != nil {
			t.Fatal(err)
		}
		r := runIn(context.Background(), false, append([]string{"cp", "--if-generation-match", "0", src, dst}, common...)...)
		if got, _, _ := srv.Object("bkt", tc.name); r.code != exitFailed || string(got) != "old" || !strings.Contains(r.stderr, "exists") {
			t.Errorf("%s over an existing object: exit %d, object %q, stderr:\n%s\nwant exit 1 naming that it exists, the object kept", tc.name, r.code, got[:min(len(got), 8)], r.stderr)
		}
		free := "gs://bkt/free-" + tc.name
		r = runIn(context.Background(), false, append([]string{"cp", "--if-generation-match=0", src, free}, common...)...)
		if _, _, err := srv.Object("bkt", "free-"+tc.name); r.code != 0 || err != nil {
			t.Errorf("%s into a free name: exit %d (%v), stderr:\n%s", tc.name, r.code, err, r.stderr)
		}
	}
	if _, err := srv.PutObject("bkt", "stream", []byte("old")); err != nil {
		t.Fatal(err)
	}
	r := runInWith(context.Background(), false, "from stdin", append([]string{"cp", "--if-generation-match", "0", "-", "gs://bkt/stream"}, common...)...)
	if got, _, _ := srv.Object("bkt", "stream"); r.code != exitFailed || string(got) != "old" || !strings.Contains(r.stderr, "exists") {
		t.Errorf("stream over an existing object: exit %d, object %q, stderr:\n%s", r.code, got, r.stderr)
	}
	r = runIn(context.Background(), false, append([]string{"rm", "--if-generation-match", "0", "gs://bkt/src"}, "--endpoint", srv.URL())...)
	if _, _, err := srv.Object("bkt", "src"); r.code != exitUsage || err != nil || !strings.Contains(r.stderr, "--if-generation-match 0 means only if absent") {
		t.Errorf("rm --if-generation-match 0: exit %d, object kept: %v, stderr:\n%s", r.code, err == nil, r.stderr)
	}
}
