package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

func TestRm(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, n := range []string{"keep.txt", "one.txt", "tmp/a", "tmp/b/c"} {
		srv.PutObject("bkt", n, []byte(n))
	}
	ep := []string{"--endpoint", srv.URL()}
	// A dry run changes nothing, and says what it would do.
	r := runIn(context.Background(), false, append([]string{"rm", "-r", "--dry-run", "gs://bkt/tmp"}, ep...)...)
	if r.code != 0 || r.stdout != "would remove gs://bkt/tmp/a\nwould remove gs://bkt/tmp/b/c\n" || srv.Count("storage.objects.delete") != 0 {
		t.Fatalf("dry run: exit %d, %q, %d deletes", r.code, r.stdout, srv.Count("storage.objects.delete"))
	}
	gets := srv.Count("storage.objects.get")
	r = runIn(context.Background(), false, append([]string{"rm", "-r", "gs://bkt/tmp/"}, ep...)...)
	if names, _ := srv.ObjectNames("bkt"); r.code != 0 || strings.Join(names, " ") != "keep.txt one.txt" {
		t.Fatalf("rm -r: exit %d, left %q\n%s", r.code, names, r.stderr)
	}
	if n := srv.Count("storage.objects.get") - gets; n != 0 || srv.Count("storage.objects.delete") != 2 {
		t.Errorf("rm -r read %d objects again after listing them (and made %d deletes)", n, srv.Count("storage.objects.delete"))
	}
	// The generation precondition protects a newer object.
	a, _ := srv.Attrs("bkt", "one.txt")
	srv.PutObject("bkt", "one.txt", []byte("newer"))
	r = runIn(context.Background(), false, append([]string{"rm", "--if-generation-match", strconv.FormatInt(a.Generation, 10), "gs://bkt/one.txt"}, ep...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "412") {
		t.Errorf("stale generation: exit %d, %q", r.code, r.stderr)
	}
	r = runIn(context.Background(), false, append([]string{"rm", "gs://bkt/one.txt", "gs://bkt/missing"}, ep...)...)
	if r.code != 1 || r.stdout != "removed gs://bkt/one.txt\n" || !strings.Contains(r.stderr, "gs://bkt/missing: no such object") {
		t.Errorf("rm with a missing object: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	// A listing that fails deletes nothing.
	srv.Inject(fakegcs.Fault{Op: "storage.objects.list", Kind: fakegcs.KindStatus, Status: 403})
	r = runIn(context.Background(), false, append([]string{"rm", "-r", "gs://bkt"}, ep...)...)
	if names, _ := srv.ObjectNames("bkt"); r.code == 0 || len(names) != 1 || !strings.Contains(r.stderr, "nothing under it was deleted") {
		t.Errorf("failed listing: exit %d, left %q, %q", r.code, names, r.stderr)
	}
}

// rm -a deletes the object by generation number (every generation listed).
func TestRmAllVersions(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	a, _ := srv.PutObject("bkt", "v.txt", []byte("v1"))
	srv.PutObject("bkt", "v.txt.bak", []byte("not this one"))
	r := runIn(context.Background(), false, "rm", "-a", "--endpoint", srv.URL(), "gs://bkt/v.txt")
	want := "removed gs://bkt/v.txt#" + strconv.FormatInt(a.Generation, 10) + "\n"
	if names, _ := srv.ObjectNames("bkt"); r.code != 0 || r.stdout != want || strings.Join(names, " ") != "v.txt.bak" {
		t.Errorf("rm -a: exit %d, %q (want %q), left %q\n%s", r.code, r.stdout, want, names, r.stderr)
	}
}
