package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// A crafted object name cannot forge or erase lines in human output: ls and
// the per-file lines of a download show it escaped. (--json escapes on its own.)
func TestHostileNamesPrintedEscaped(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, LaxNames: true})
	evil := "p/x\nuploaded   1.0 GiB  /etc/passwd -> gs://bkt/stolen\x1b[2K"
	srv.PutObject("bkt", evil, []byte("evil"))
	srv.PutObject("bkt", "p/bad\xffname", []byte("bad"))
	r := runIn(context.Background(), false, "ls", "-r", "--endpoint", srv.URL(), "gs://bkt")
	// Invalid UTF-8 reaches a client as U+FFFD (JSON carries no raw bytes); local
	// file names can hold it raw, which escape.TestText covers.
	want := "gs://bkt/p/bad\ufffdname\n" + `gs://bkt/p/x\nuploaded   1.0 GiB  /etc/passwd -> gs://bkt/stolen\x1b[2K` + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("ls: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	dir := t.TempDir()
	r = runIn(context.Background(), false, "cp", "-r", "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"),
		"gs://bkt/p", filepath.Join(dir, "out"))
	for _, line := range strings.Split(strings.TrimSpace(r.stdout+r.stderr), "\n") {
		if strings.HasPrefix(line, "uploaded") || strings.Contains(line, "\x1b") || strings.Contains(line, "\xff") {
			t.Errorf("forged or raw line: %q", line)
		}
	}
	if !strings.Contains(r.stdout, `x\nuploaded   1.0 GiB  /etc/passwd -> gs://bkt/stolen\x1b[2K`) {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}
