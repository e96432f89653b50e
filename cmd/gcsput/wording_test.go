package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// stat of a missing object says so once, without counting "transfers".
func TestStatMissingWording(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "here", []byte("x"))
	r := runIn(context.Background(), false, "stat", "--endpoint", srv.URL(), "gs://bkt/missing")
	if r.code != 1 || r.stderr != "gcsput: gs://bkt/missing: no such object\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	r = runIn(context.Background(), false, "stat", "--endpoint", srv.URL(), "gs://bkt/missing", "gs://bkt/here")
	if r.code != 1 || !strings.HasSuffix(r.stderr, "gcsput: 1 of 2 objects failed\n") || strings.Contains(r.stderr, "transfers") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// With --json, a command that fails before any transfer (here the listing
// gets 401) still writes one record to stdout saying why.
func TestJSONErrorRecordWhenSetupFails(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Token: "required"})
	dir := t.TempDir()
	r := runIn(context.Background(), false, "cp", "-r", "--json", "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"),
		fastRetry, "gs://bkt/p", filepath.Join(dir, "out"))
	var rec struct {
		Type, Error string
		Exit        int
	}
	if err := json.Unmarshal([]byte(r.stdout), &rec); err != nil || rec.Type != "error" || rec.Exit != r.code || r.code == 0 ||
		!strings.Contains(rec.Error, "401") {
		t.Errorf("exit %d, stdout %q (%v), stderr %q", r.code, r.stdout, err, r.stderr)
	}
	if strings.Contains(rec.Error, "upload:") {
		t.Errorf("a download error says upload: %s", rec.Error)
	}
}

// A metadata key longer than stat's column keeps a space before its value.
func TestStatLongMetadataKey(t *testing.T) {
	var b strings.Builder
	printObject(&b, objectJSON{URL: "gs://bkt/o", Metadata: map[string]string{"goog-reserved-file-mtime": "1795541244", "k": "v"}})
	for _, want := range []string{"        goog-reserved-file-mtime: 1795541244\n", "        k:                  v\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("stat output lacks %q:\n%s", want, b.String())
		}
	}
}

// "KEY=" means "no such key" in cp and in meta set alike.
func TestEmptyMetadataValueMeansNoKey(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "f.txt"), 10)
	r := runIn(context.Background(), false, "cp", "--metadata", "keep=1", "--metadata", "empty=", "--endpoint", srv.URL(),
		"--state-dir", filepath.Join(dir, "state"), filepath.Join(dir, "f.txt"), "gs://bkt/f.txt")
	a, _ := srv.Attrs("bkt", "f.txt")
	if _, has := a.Metadata["empty"]; r.code != 0 || has || a.Metadata["keep"] != "1" {
		t.Fatalf("cp: exit %d, metadata %v", r.code, a.Metadata)
	}
	r = runIn(context.Background(), false, "meta", "set", "--metadata", "keep=", "--endpoint", srv.URL(), "gs://bkt/f.txt")
	a, _ = srv.Attrs("bkt", "f.txt")
	if _, has := a.Metadata["keep"]; r.code != 0 || has {
		t.Fatalf("meta set keep=: exit %d, metadata %v\n%s", r.code, a.Metadata, r.stderr)
	}
}
