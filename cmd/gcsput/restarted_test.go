package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A transfer that starts over (its session expired on the server) and
// completes is a success: counted as restarted, exit 0, never "failed".
func TestRestartedIsNotFailed(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(1 << 20)), Kind: fakegcs.KindExpire},
	}})
	dir := t.TempDir()
	data := writeFile(t, filepath.Join(dir, "big.bin"), 9<<20)
	r := runIn(context.Background(), false, "cp", "--json", "--chunk-size", "1MiB", "--endpoint", srv.URL(),
		"--state-dir", filepath.Join(dir, "state"), fastRetry, filepath.Join(dir, "big.bin"), "gs://bkt/big.bin")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got, _, _ := srv.Object("bkt", "big.bin"); !bytes.Equal(got, data) {
		t.Fatal("object differs")
	}
	for _, want := range []string{`"status":"restarted"`, `"reason":"session gone on the server (404/410): started over"`,
		`"restarted":1`, `"failed":0`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %s:\n%s", want, r.stdout)
		}
	}
	r = runIn(context.Background(), false, "cp", "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"),
		fastRetry, filepath.Join(dir, "big.bin"), "gs://bkt/again.bin")
	if r.code != 0 || !strings.Contains(r.stderr, "1 file: 1 uploaded, 0 failed") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
