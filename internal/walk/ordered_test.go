package walk

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Ordered yields the paths in the byte order of their whole names, as GCS
// lists objects: "a-b" (0x2D) and "a.b" (0x2E) before "a/x" (0x2F), "a0"
// after it, UTF-8 names by their bytes; Each's path order differs.
func TestOrderedIsByteOrder(t *testing.T) {
	root := t.TempDir()
	names := []string{"a-b", "a.b", "a/x-y", "a/x/z", "a/x.y", "a/x0", "a0", "b/a-b/c", "b/a/c", "b/a.b",
		"é", "e\u0301", "z", "Z", "ä/x", "a!", "a~"}
	for _, n := range names {
		mkfile(t, filepath.Join(root, filepath.FromSlash(n)), n)
	}
	os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "a-link")) // a link to a directory sorts by its own name
	want := append(slices.Clone(names), "a-link")
	slices.Sort(want) // Go compares strings as bytes
	var got []string
	if err := Ordered(root, func(e Entry) error {
		if e.Rel == "a-link" && e.Skip == "" {
			t.Errorf("a-link: %+v, want skipped", e)
		}
		if e.Path != filepath.Join(root, filepath.FromSlash(e.Rel)) {
			t.Errorf("%s: path %s", e.Rel, e.Path)
		}
		got = append(got, e.Rel)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
	var each []string
	Each(root, func(e Entry) error { each = append(each, e.Rel); return nil })
	if slices.Equal(each, want) {
		t.Errorf("Each walks in byte order too (%q): this test no longer shows the difference", each)
	}
}

// A directory that cannot be read is reported after the entries that
// could be; an error from fn stops the walk.
func TestOrderedErrors(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	root := t.TempDir()
	mkfile(t, filepath.Join(root, "a", "x"), "x")
	mkfile(t, filepath.Join(root, "b"), "b")
	os.Chmod(filepath.Join(root, "a"), 0)
	defer os.Chmod(filepath.Join(root, "a"), 0o755)
	var got []string
	err := Ordered(root, func(e Entry) error { got = append(got, e.Rel); return nil })
	if err == nil || !strings.Contains(err.Error(), "cannot read the whole tree") || !slices.Equal(got, []string{"b"}) {
		t.Errorf("%q, %v", got, err)
	}
}

// An error from fn stops the walk and is returned.
func TestOrderedStops(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b/c", "d"} {
		mkfile(t, filepath.Join(root, n), n)
	}
	stop := os.ErrClosed
	var got []string
	err := Ordered(root, func(e Entry) error {
		got = append(got, e.Rel)
		if e.Rel == "b/c" {
			return stop
		}
		return nil
	})
	if err != stop || !slices.Equal(got, []string{"a", "b/c"}) {
		t.Errorf("%q, %v", got, err)
	}
}
