package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// The sizes --chunk-size suggests are sizes: near the top of int64, the next multiple of
// 256 KiB does not exist, and is not suggested as -9223372036854775808 B. A given size
// that rounds to the suggestion's text is written in bytes.
func TestChunkSizeSuggestionNeverOverflows(t *testing.T) {
	for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 1000, math.MaxInt64 - chunkAlign + 2} {
		err := checkChunkSize(n)
		want := fmt.Sprintf("%d B is not a multiple of 256 KiB (GCS rejects such chunks); try 8.0 EiB", n)
		if err == nil || err.Error() != want {
			t.Errorf("checkChunkSize(%d) = %v; want %q", n, err, want)
		}
	}
}

// -j 0 is refused as -j -1 is: "0 streams at once" has no meaning, and taking it as the
// default hid a script's empty variable (-j "$N"). --max-slices alike.
func TestParallelZeroRefused(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "f")
	writeFile(t, file, 10)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cp", "-j", "0", file, "gs://bkt/"}, "gcsput cp: -j/--parallel must be at least 1, got 0\n"},
		{[]string{"cp", "--parallel=-1", file, "gs://bkt/"}, "gcsput cp: -j/--parallel must be at least 1, got -1\n"},
		{[]string{"sync", "-j", "0", filepath.Dir(file), "gs://bkt/"}, "gcsput sync: -j/--parallel must be at least 1, got 0\n"},
		{[]string{"cp", "--max-slices", "0", "gs://bkt/o", file}, "gcsput cp: --max-slices must be at least 1, got 0\n"},
	} {
		r := runIn(context.Background(), false, tc.args...)
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("gcsput %q: exit %d, stderr:\n%s\nwant exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// --endpoint http://user:pass@host would send Basic credentials in clear with every
// request: exit 2, the password never printed, nothing sent.
func TestEndpointUserinfoOverHTTPRefused(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	writeFile(t, file, 10)
	ep := strings.Replace(srv.URL(), "http://", "http://alice:s3cr3t@", 1)
	for _, args := range [][]string{
		{"cp", "--state-dir", dir, "--endpoint", ep, file, "gs://bkt/f"},
		{"ls", "--endpoint", ep, "gs://bkt/"},
	} {
		r := runIn(context.Background(), false, args...)
		want := `holds credentials (user:password@), which would travel in clear over http: drop them from the URL (an emulator needs none), or use https`
		if r.code != exitUsage || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr+r.stdout, "s3cr3t") {
			t.Errorf("gcsput %s: exit %d, stderr:\n%s\nwant exit 2 and %q, never the password", args[0], r.code, r.stderr, want)
		}
	}
	if st := srv.Stats(); len(st.Requests) != 0 {
		t.Errorf("requests reached the server: %v", st.Requests)
	}
}
