package fakegcs

import (
	"context"
	"errors"
	"slices"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// The examples of Google's wildcard pages (gcloud storage "URI wildcards",
// gsutil "Wildcard Names") and the matchGlob syntax of objects.list.
func TestMatchGlobSemantics(t *testing.T) {
	cases := []struct {
		glob, name string
		want       bool
	}{
		{"abc/d*", "abc/def.txt", true},
		{"abc/d*", "abc/def/g.txt", false},
		{"??.txt", "ab.txt", true},
		{"??.txt", "abc.txt", false},
		{"??.txt", "a/.txt", false},
		{"[aeiou].txt", "e.txt", true},
		{"[aeiou].txt", "x.txt", false},
		{"[a-e].txt", "d.txt", true},
		{"[a-e].txt", "f.txt", false},
		{"[!a-e].txt", "f.txt", true},
		{"[!a-e].txt", "a.txt", false},
		{"dir/*", "dir/x", true},
		{"dir/*", "dir/x/y", false},
		{"dir/**", "dir/x/y", true},
		{"my-directory/**.txt", "my-directory/a/b/c.txt", true},
		{"**.txt", "c.txt", true},
		{"**.txt", "c.txt.gz", false},
		{"file*", "file-1", true},
		{"file*", "afile", false},
		{"a/*/b", "a/c/b", true},
		{"a/*/b", "a/c/d/b", false},
		{"[a-m]??.j*g", "dog.jpg", true},
		{"[a-m]??.j*g", "cat.jpeg", true},
		{"[a-m]??.j*g", "zoo.jpg", false},
		{"*.{jpg,png}", "a.png", true},
		{"*.{jpg,png}", "a.gif", false},
		{"{a,b/{c,d}}/x", "b/d/x", true},
		{`\*.txt`, "*.txt", true},
		{`\*.txt`, "a.txt", false},
		{"[]]x", "]x", true},
		{"", "", true},
		{"", "a", false},
		{"é?", "éü", true},
	}
	for _, tc := range cases {
		g, err := parseMatchGlob(tc.glob)
		if err != nil {
			t.Fatalf("parseMatchGlob(%q): %v", tc.glob, err)
		}
		if got := g.match(tc.name); got != tc.want {
			t.Errorf("matchGlob %q on %q = %v, want %v", tc.glob, tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"a[b", "{a,b", "a}", `x\`, "{[a,b}"} {
		if _, err := parseMatchGlob(bad); err == nil {
			t.Errorf("parseMatchGlob(%q) accepted a malformed glob", bad)
		}
	}
}

// Through the official client: matchGlob filters the listing before the
// delimiter groups it, a bad glob or delimiter is 400, and Stats counts the
// listings that used it.
func TestListMatchGlob(t *testing.T) {
	srv := NewTest(t, Options{Buckets: []string{"bkt"}})
	for _, n := range []string{"docs/a.txt", "docs/b.md", "docs/old/c.txt", "docs/old/d.md", "e.txt"} {
		if _, err := srv.PutObject("bkt", n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	c, err := storage.NewClient(ctx, option.WithEndpoint(srv.Endpoint()), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	list := func(q *storage.Query) ([]string, error) {
		var out []string
		it := c.Bucket("bkt").Objects(ctx, q)
		for {
			a, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return out, nil
			}
			if err != nil {
				return out, err
			}
			out = append(out, a.Name+a.Prefix)
		}
	}
	for _, tc := range []struct {
		q    storage.Query
		want []string
	}{
		{storage.Query{MatchGlob: "**.txt"}, []string{"docs/a.txt", "docs/old/c.txt", "e.txt"}},
		{storage.Query{Prefix: "docs/", MatchGlob: "docs/*.txt"}, []string{"docs/a.txt"}},
		{storage.Query{Prefix: "docs/", Delimiter: "/", MatchGlob: "docs/**.md"}, []string{"docs/b.md", "docs/old/"}},
		{storage.Query{Prefix: "docs/", Delimiter: "/", MatchGlob: "docs/*.md"}, []string{"docs/b.md"}},
	} {
		got, err := list(&tc.q)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%+v: %q, %v; want %q", tc.q, got, err, tc.want)
		}
	}
	if n := srv.Stats().GlobLists; n != 4 {
		t.Errorf("Stats().GlobLists = %d, want 4", n)
	}
	for _, q := range []storage.Query{{MatchGlob: "a[b"}, {MatchGlob: "*", Delimiter: "-"}} {
		_, err := list(&q)
		var ge *googleapi.Error
		if !errors.As(err, &ge) || ge.Code != 400 {
			t.Errorf("%+v: err %v, want a 400", q, err)
		}
	}
	if n := srv.Stats().GlobLists; n != 4 {
		t.Errorf("refused listings counted: GlobLists = %d, want 4", n)
	}
}
