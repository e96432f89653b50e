package upload

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// Remove expands wildcards itself, as the gcsput command's rm did before
// calling it: without Recursive a pattern is the objects it matches; with
// Recursive also the folders it matches, taken whole. Every pattern is
// expanded before the first delete, so one that matches nothing removes
// nothing, and IfGenerationMatch (one object's) refuses a pattern.
func TestRemoveWildcards(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a.log", "b.log", "c.txt", "d1/x", "d1/y", "d2/z", "e")
	c := newClient(t, srv, nil)

	got, err := removals(t, c, []URL{{testBucket, "*.log"}, {testBucket, "e"}}, RemoveOptions{})
	if want := []string{"gs://bkt/a.log", "gs://bkt/b.log", "gs://bkt/e"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("*.log and e: told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "c.txt", "d1/x", "d1/y", "d2/z")

	got, err = removals(t, c, []URL{{testBucket, "d1*"}}, RemoveOptions{Recursive: true})
	slices.Sort(got)
	if want := []string{"gs://bkt/d1/x", "gs://bkt/d1/y"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("-r d1*: told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "c.txt", "d2/z")

	got, err = removals(t, c, []URL{{testBucket, "c.txt"}, {testBucket, "*.nothing"}}, RemoveOptions{})
	if !errors.Is(err, ErrNoMatch) || len(got) != 0 || !strings.Contains(err.Error(), "*.nothing") {
		t.Fatalf("a pattern that matches nothing: told %q, %v; want ErrNoMatch and nothing removed", got, err)
	}
	gen := int64(1)
	if _, err := removals(t, c, []URL{{testBucket, "c.*"}}, RemoveOptions{IfGenerationMatch: &gen}); !errors.Is(err, ErrBadOption) {
		t.Fatalf("IfGenerationMatch with a pattern: %v, want ErrBadOption", err)
	}
	wantNames(t, srv, testBucket, "c.txt", "d2/z")
}
