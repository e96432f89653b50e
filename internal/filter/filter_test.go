package filter

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cases := []struct {
		include, exclude []string
		path             string
		want             bool
	}{
		// No rules: everything.
		{nil, nil, "a/b/c", true},
		// A pattern without a slash matches the name in any directory.
		{nil, []string{"*.tmp"}, "x.tmp", false},
		{nil, []string{"*.tmp"}, "a/b/x.tmp", false},
		{nil, []string{"*.tmp"}, "a/b/x.tmpl", true},
		{nil, []string{"*.tmp"}, "a.tmp/x", true},
		// Whole path elements, matched at the end.
		{nil, []string{"b/x.tmp"}, "a/b/x.tmp", false},
		{nil, []string{"b/x.tmp"}, "a/ab/x.tmp", true},
		// A leading slash anchors at the root.
		{nil, []string{"/x.tmp"}, "x.tmp", false},
		{nil, []string{"/x.tmp"}, "a/x.tmp", true},
		// * stays in one element; ** crosses them.
		{nil, []string{"/a/*"}, "a/b", false},
		{nil, []string{"/a/*"}, "a/b/c", true},
		{nil, []string{"/a/**"}, "a/b/c", false},
		{nil, []string{"**/c"}, "a/b/c", false},
		// A trailing slash names a directory and all below it.
		{nil, []string{"cache/"}, "x/cache/y/z", false},
		{nil, []string{"cache/"}, "x/cache", true},
		// ? [] {} and escapes.
		{nil, []string{"?.log"}, "a.log", false},
		{nil, []string{"?.log"}, "ab.log", true},
		{nil, []string{"[a-c].bin"}, "b.bin", false},
		{nil, []string{"[!a-c].bin"}, "d.bin", false},
		{nil, []string{"[!a-c].bin"}, "a.bin", true},
		{nil, []string{"*.{jpg,png}"}, "p/q.png", false},
		{nil, []string{"*.{jpg,png}"}, "p/q.gif", true},
		{nil, []string{`\*.txt`}, "*.txt", false},
		{nil, []string{`\*.txt`}, "a.txt", true},
		{nil, []string{"a.b"}, "axb", true}, // '.' is literal
		// Includes: anything not included is excluded.
		{[]string{"*.jpg"}, nil, "a/b.jpg", true},
		{[]string{"*.jpg"}, nil, "a/b.png", false},
		// Includes are tried before excludes; the first match decides.
		{[]string{"keep.tmp"}, []string{"*.tmp"}, "d/keep.tmp", true},
		{[]string{"*.jpg"}, []string{"/private/**"}, "private/a.jpg", true},
		{[]string{"*.jpg"}, []string{"/private/**"}, "private/a.txt", false},
	}
	for _, tc := range cases {
		r, err := New(tc.include, tc.exclude)
		if err != nil {
			t.Fatalf("New(%q, %q): %v", tc.include, tc.exclude, err)
		}
		if got, by := r.Match(tc.path); got != tc.want {
			t.Errorf("include %q exclude %q: Match(%q) = %v (by %q), want %v", tc.include, tc.exclude, tc.path, got, by, tc.want)
		}
	}
}

func TestMatchReportsTheDecidingPattern(t *testing.T) {
	r, _ := New(nil, []string{"*.log", "*.tmp"})
	if ok, by := r.Match("a/b.tmp"); ok || by != "*.tmp" {
		t.Fatalf("Match = %v by %q, want false by *.tmp", ok, by)
	}
	var none *Rules
	if ok, _ := none.Match("x"); !ok || !none.Empty() {
		t.Fatal("nil Rules must take every path")
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"", "/", "a[b", "{a,b", "a}", "{a,{b}}", `x\`} {
		_, err := New(nil, []string{p})
		if err == nil || !strings.Contains(err.Error(), "filter:") {
			t.Errorf("pattern %q: err %v, want a filter error naming it", p, err)
		}
	}
}
