package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// --credentials with an http:// endpoint: the credentials are not used
// (the flag's help says so), and the user is told why, on stderr.
func TestCredentialsNotUsedOverPlainHTTP(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	key := filepath.Join(dir, "key.json")
	os.WriteFile(key, []byte(`{"type":"service_account","client_email":"a@b","private_key":"SECRET"}`), 0o600)
	writeFile(t, filepath.Join(dir, "f.txt"), 100)
	r := runIn(context.Background(), false, "cp", "--credentials", key, "--endpoint", srv.URL(),
		"--state-dir", filepath.Join(dir, "state"), filepath.Join(dir, "f.txt"), "gs://bkt/f.txt")
	want := "gcsput: warning: the credentials file " + key + " is not used: the endpoint " + srv.URL() + " is plain http"
	if r.code != 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "SECRET") {
		t.Fatalf("exit %d; stderr:\n%s\nwant %q", r.code, r.stderr, want)
	}
}

// A state directory others can write is a clear error, before any request.
func TestWorldWritableStateDirRefused(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	os.Mkdir(state, 0o700)
	os.Chmod(state, 0o777)
	writeFile(t, filepath.Join(dir, "f.txt"), 100)
	r := runIn(context.Background(), false, "cp", "--endpoint", srv.URL(), "--state-dir", state,
		filepath.Join(dir, "f.txt"), "gs://bkt/f.txt")
	want := "state directory " + state + " can be written by other users (mode 0777)"
	if r.code == 0 || !strings.Contains(r.stderr, want) || srv.Count("storage.objects.insert") != 0 {
		t.Fatalf("exit %d, %d inserts; stderr:\n%s", r.code, srv.Count("storage.objects.insert"), r.stderr)
	}
}
