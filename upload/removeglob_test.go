package upload

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// With Wildcards, Remove expands wildcards itself, as the gcsput command's rm did before
// calling it: without Recursive a pattern is the objects it matches; with
// Recursive also the folders it matches, taken whole. Every pattern is
// expanded before the first delete, so one that matches nothing removes
// nothing, and IfGenerationMatch (one object's) refuses a pattern.
func TestRemoveWildcards(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a.log", "b.log", "c.txt", "d1/x", "d1/y", "d2/z", "e")
	c := newClient(t, srv, nil)

	got, err := removals(t, c, []URL{{testBucket, "*.log"}, {testBucket, "e"}}, RemoveOptions{Wildcards: true})
	if want := []string{"gs://bkt/a.log", "gs://bkt/b.log", "gs://bkt/e"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("*.log and e: told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "c.txt", "d1/x", "d1/y", "d2/z")

	got, err = removals(t, c, []URL{{testBucket, "d1*"}}, RemoveOptions{Recursive: true, Wildcards: true})
	slices.Sort(got)
	if want := []string{"gs://bkt/d1/x", "gs://bkt/d1/y"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("-r d1*: told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "c.txt", "d2/z")

	got, err = removals(t, c, []URL{{testBucket, "c.txt"}, {testBucket, "*.nothing"}}, RemoveOptions{Wildcards: true})
	if !errors.Is(err, ErrNoMatch) || len(got) != 0 || !strings.Contains(err.Error(), "*.nothing") {
		t.Fatalf("a pattern that matches nothing: told %q, %v; want ErrNoMatch and nothing removed", got, err)
	}
	gen := int64(1)
	if _, err := removals(t, c, []URL{{testBucket, "c.*"}}, RemoveOptions{Wildcards: true, IfGenerationMatch: &gen}); !errors.Is(err, ErrBadOption) {
		t.Fatalf("IfGenerationMatch with a pattern: %v, want ErrBadOption", err)
	}
	wantNames(t, srv, testBucket, "c.txt", "d2/z")
}

// Remove takes a URL's name literally unless RemoveOptions.Wildcards asks
// for the expansion: GCS names may hold "*", "?" and "[...]", and a program
// that removes objects it listed by their names must remove those objects,
// not every object the name would match as a pattern ("a*" is not "ab").
func TestRemoveLiteralNames(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	putNames(t, srv, testBucket, "a*", "ab", "ac", "r[1].csv", "r1.csv", "d[1]/x", "d1/y")
	c := newClient(t, srv, nil)

	got, err := removals(t, c, []URL{{testBucket, "a*"}, {testBucket, "r[1].csv"}}, RemoveOptions{})
	if want := []string{"gs://bkt/a*", "gs://bkt/r[1].csv"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("a* and r[1].csv as names: told %q, %v; want %q", got, err, want)
	}
	got, err = removals(t, c, []URL{{testBucket, "d[1]"}}, RemoveOptions{Recursive: true})
	if want := []string{"gs://bkt/d[1]/x"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("-r d[1] as a prefix: told %q, %v; want %q", got, err, want)
	}
	wantNames(t, srv, testBucket, "ab", "ac", "d1/y", "r1.csv")
	gen := int64(1)
	if _, err := removals(t, c, []URL{{testBucket, "a?"}}, RemoveOptions{Wildcards: true, IfGenerationMatch: &gen}); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("IfGenerationMatch with a pattern: %v, want ErrBadOption naming the wildcard", err)
	}
}
