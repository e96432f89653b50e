package upload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/fakegcs"
)

func globNames(t *testing.T, c *Client, pattern string, o GlobOptions) ([]string, error) {
	t.Helper()
	u, err := ParseURL(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for a, err := range c.Glob(context.Background(), u, o) {
		if err != nil {
			return out, err
		}
		out = append(out, a.Name+a.Prefix)
	}
	return out, nil
}

func TestGlob(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	for _, n := range []string{"docs/a.txt", "docs/b.txt", "docs/c.md", "docs/old/d.txt", "docs/x.txt/e",
		"report[1].pdf", "w{1}.txt", "w{2}.txt"} {
		if _, err := srv.PutObject(testBucket, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	c := newClient(t, srv, nil)
	cases := []struct {
		pattern string
		o       GlobOptions
		want    []string
		globs   int // listings sent with matchGlob
	}{
		{"gs://bkt/docs/?.txt", GlobOptions{}, []string{"docs/a.txt", "docs/b.txt"}, 1},
		{"gs://bkt/docs/[ac].*", GlobOptions{}, []string{"docs/a.txt", "docs/c.md"}, 1},
		{"gs://bkt/docs/**.txt", GlobOptions{}, []string{"docs/a.txt", "docs/b.txt", "docs/old/d.txt"}, 1},
		{"gs://bkt/docs/**/d.txt", GlobOptions{}, []string{"docs/old/d.txt"}, 1},
		// Folders: a matching folder once, not what is in it.
		{"gs://bkt/docs/*", GlobOptions{Folders: true}, []string{"docs/a.txt", "docs/b.txt", "docs/c.md", "docs/old/", "docs/x.txt/"}, 1},
		{"gs://bkt/docs/*.txt", GlobOptions{Folders: true}, []string{"docs/a.txt", "docs/b.txt", "docs/x.txt/"}, 1},
		// Braces are literal here and would be syntax to matchGlob: the client filters.
		{"gs://bkt/w{?}.txt", GlobOptions{}, []string{"w{1}.txt", "w{2}.txt"}, 0},
		// A name with wildcard characters names itself when nothing else matches.
		{"gs://bkt/report[1].pdf", GlobOptions{}, []string{"report[1].pdf"}, 1},
		{"gs://bkt/docs/a.txt", GlobOptions{}, []string{"docs/a.txt"}, 0},
	}
	for _, tc := range cases {
		srv.ResetStats()
		got, err := globNames(t, c, tc.pattern, tc.o)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Glob(%s, %+v) = %q, %v; want %q", tc.pattern, tc.o, got, err, tc.want)
		}
		if n := srv.Stats().GlobLists; n != tc.globs {
			t.Errorf("Glob(%s): %d listings with matchGlob, want %d", tc.pattern, n, tc.globs)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	c := newClient(t, srv, nil)
	_, err := globNames(t, c, "gs://bkt/docs/*.pdf", GlobOptions{})
	var nm *NoMatchError
	if !errors.Is(err, ErrNoMatch) || !errors.As(err, &nm) || err.Error() != "no objects match gs://bkt/docs/*.pdf" {
		t.Errorf("no match: %v", err)
	}
	if _, err := globNames(t, c, "gs://nosuch-bucket/*.txt", GlobOptions{}); !errors.Is(err, storage.ErrBucketNotExist) {
		t.Errorf("missing bucket: %v, want storage.ErrBucketNotExist", err)
	}
}

func TestGlobFiles(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt", "c.md", "sub/d.txt", "sub/deep/e.txt", "x[1].txt"} {
		writeTemp(t, dir, n, []byte(n))
	}
	rel := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			r, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(r))
		}
		return out
	}
	j := func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"?.txt", []string{"a.txt", "b.txt"}},
		{"*", []string{"a.txt", "b.txt", "c.md", "sub", "x[1].txt"}},
		{"**.txt", []string{"a.txt", "b.txt", "sub/d.txt", "sub/deep/e.txt", "x[1].txt"}},
		{"sub/**/e.txt", []string{"sub/deep/e.txt"}},
		{"s*/*.txt", []string{"sub/d.txt"}},
		{"x[1].txt", []string{"x[1].txt"}},
	} {
		got, err := GlobFiles(j(tc.pattern))
		if err != nil || !slices.Equal(rel(got), tc.want) {
			t.Errorf("GlobFiles(%s) = %q, %v; want %q", tc.pattern, rel(got), err, tc.want)
		}
	}
	// The pattern's own spelling is kept.
	t.Chdir(dir)
	if got, err := GlobFiles("./[ab].txt"); err != nil || !slices.Equal(got, []string{"./a.txt", "./b.txt"}) {
		t.Errorf("GlobFiles(./[ab].txt) = %q, %v", got, err)
	}
	_, err := GlobFiles(j("*.pdf"))
	if !errors.Is(err, ErrNoMatch) || !strings.HasPrefix(err.Error(), "no files match ") {
		t.Errorf("no match: %v", err)
	}
	if _, err := GlobFiles(j("nodir/*.txt")); !errors.Is(err, ErrNoMatch) {
		t.Errorf("missing directory: %v, want ErrNoMatch", err)
	}
	if err := os.Chmod(j("sub"), 0); err == nil && os.Geteuid() != 0 {
		defer os.Chmod(j("sub"), 0o755)
		if _, err := GlobFiles(j("**.txt")); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable directory: %v, want an error", err)
		}
	}
}
