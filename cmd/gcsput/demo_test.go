package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// The demo's default file (256 MiB) goes up as a parallel composite upload of 12
// components, and comes down in 12 slices (-j 12). An 8-component layout at 16 MiB (components of 2 MiB,
// chunks of 512 KiB) shows every fault the demo announces: each
// hits a component's session, each is told as it fires, and the retries are counted.
// The download's cut falls inside the first slice. Each line of the summary appears
// once.
func TestDemoCompositeShowsEveryFault(t *testing.T) {
	t.Parallel()
	r := runIn(context.Background(), true, "demo", "--size", "16MiB", "--chunk-size", "512KiB",
		"--parallel-threshold", "4MiB", "--component-size", "2MiB")
	if r.code != 0 {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	announced := regexp.MustCompile(`(?m)^   • (.*)$`).FindAllStringSubmatch(r.stderr, -1)
	if len(announced) != 6 {
		t.Fatalf("%d faults announced, want 6:\n%s", len(announced), r.stderr)
	}
	for _, a := range announced {
		if !strings.Contains(r.stderr, "⚡ fakegcs injected: "+a[1]) {
			t.Errorf("announced but never fired: %q", a[1])
		}
	}
	for _, s := range []string{
		"demo.bin part ", "(composite of 8 components)", "429 Too Many Requests (Retry-After: 1)",
		"the server will cut the connection after sending 6.4 MiB", "demo.bin: resuming at", "(the bytes already written)",
		"Verified: the downloaded copy is identical to the original (16777216 bytes)",
	} {
		if !strings.Contains(r.stderr+r.stdout, s) {
			t.Errorf("the demo does not say %q", s)
		}
	}
	if m := regexp.MustCompile(`(?m)^  retries +(\d+) `).FindStringSubmatch(r.stdout); m == nil || m[1] == "0" {
		t.Errorf("retries in the summary: %q", m)
	}
	for _, label := range []string{"file", "retries", "resumes", "upload", "download", "faults", "server"} {
		if n := len(regexp.MustCompile(`(?m)^  `+label+` `).FindAllString(r.stdout+r.stderr, -1)); n != 1 {
			t.Errorf("the summary's %q line appears %d times", label, n)
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
}

// With gs://BUCKET the demo runs against that bucket (here a fakegcs standing in for
// one) and deletes its object at the end through the shared client set-up; --keep
// keeps it.
func TestDemoOnABucketDeletesItsObject(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	for _, keep := range []bool{false, true} {
		args := []string{"demo", "--size", "1MiB", "--chunk-size", "512KiB", "--endpoint", srv.URL(), "gs://bkt"}
		if keep {
			args = append(args, "--keep")
		}
		r := runIn(context.Background(), false, args...)
		if r.code != 0 {
			t.Fatalf("demo %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
		}
		names, err := srv.ObjectNames("bkt")
		if err != nil {
			t.Fatal(err)
		}
		if keep != (len(names) == 1) || len(names) > 1 {
			t.Fatalf("demo (keep %v) left %q in the bucket", keep, names)
		}
	}
}
