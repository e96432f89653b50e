package main

import (
	"context"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

func TestCatAndDu(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "p/a.txt", []byte("first\n"))
	srv.PutObject("bkt", "p/sub/b.txt", []byte("second line\n"))
	srv.PutObject("bkt", "q/c.txt", []byte("not under p"))
	// A reset mid-body is resumed from the bytes already written.
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "p/sub/b.txt", Kind: fakegcs.KindTruncate, AfterBytes: 4})
	r := runIn(context.Background(), false, "cat", fastRetry, "--endpoint", srv.URL(), "gs://bkt/p/a.txt", "gs://bkt/p/sub/b.txt")
	if r.code != 0 || r.stdout != "first\nsecond line\n" {
		t.Fatalf("cat: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runIn(context.Background(), false, "cat", "--endpoint", srv.URL(), "gs://bkt/missing")
	if r.code != 1 || r.stderr != "gcsput: gs://bkt/missing: no such object\n" {
		t.Errorf("cat missing: exit %d, stderr %q", r.code, r.stderr)
	}
	r = runIn(context.Background(), false, "du", "--endpoint", srv.URL(), "gs://bkt/p")
	want := "6            gs://bkt/p/a.txt\n12           gs://bkt/p/sub/b.txt\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("du: exit %d\n got %q\nwant %q", r.code, r.stdout, want)
	}
	r = runIn(context.Background(), false, "du", "-s", "--endpoint", srv.URL(), "gs://bkt/p/", "gs://bkt")
	if r.code != 0 || r.stdout != "18           gs://bkt/p/\n29           gs://bkt/\n" || strings.Contains(r.stderr, "gcsput") {
		t.Errorf("du -s: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// cat -r writes a byte range, continued after a broken response.
func TestCatRange(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	srv.PutObject("bkt", "digits", []byte("0123456789abcdefghij"))
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Kind: fakegcs.KindTruncate, AfterBytes: 3})
	for rng, want := range map[string]string{"2-11": "23456789ab", "15-": "fghij", "-4": "ghij", "0-0": "0"} {
		r := runIn(context.Background(), false, "cat", "-r", rng, fastRetry, "--endpoint", srv.URL(), "gs://bkt/digits")
		if r.code != 0 || r.stdout != want {
			t.Errorf("-r %s: exit %d, %q (want %q)\n%s", rng, r.code, r.stdout, want, r.stderr)
		}
	}
	wantUsage(t, runCLI(t, "", "cat", "-r", "9-2", "gs://bkt/digits"), `-r "9-2": want START-END`)
}

// A listing command without an operand says so once, named by the command.
func TestListingCommandsNeedAnOperand(t *testing.T) {
	for _, cmd := range []string{"ls", "du"} {
		r := runCLI(t, "", cmd)
		wantUsage(t, r, "gcsput "+cmd+": name a bucket or folder, e.g. gs://my-bucket/photos/")
		if strings.Contains(r.stderr, cmd+": "+cmd+":") {
			t.Errorf("%s: the command is named twice: %q", cmd, r.stderr)
		}
	}
}
