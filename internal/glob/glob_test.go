package glob

import "testing"

func TestWildcardMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		// The gcloud wildcards page: * stays in its segment.
		{"abc/d*", "abc/def.txt", true},
		{"abc/d*", "abc/def/g.txt", false},
		{"??.txt", "ab.txt", true},
		{"??.txt", "abc.txt", false},
		{"??.txt", "a/.txt", false},
		{"[aeiou].txt", "e.txt", true},
		{"[aeiou].txt", "b.txt", false},
		{"[a-e].txt", "c.txt", true},
		{"[a-e].txt", "f.txt", false},
		{"[!a-e].txt", "f.txt", true},
		{"[^a-e].txt", "c.txt", false},
		{"[!a-e].txt", "/.txt", false},
		// gsutil's **: any run of characters, "/" too, wherever it stands.
		{"**.txt", "a.txt", true},
		{"**.txt", "d/e/a.txt", true},
		{"docs/**.txt", "docs/x/y.txt", true},
		{"docs/**.txt", "other/y.txt", false},
		{"a**b", "a/x/b", true},
		// A whole-segment ** also matches no segment (gsutil's double/**/f.txt).
		{"double/**/f.txt", "double/f.txt", true},
		{"double/**/f.txt", "double/foo/f.txt", true},
		{"double/**/f.txt", "double/a/b/f.txt", true},
		{"double/**/f.txt", "doublef.txt", false},
		{"**/f.txt", "f.txt", true},
		{"docs/**", "docs/a/b", true},
		// Braces and backslashes are literal in a URL; an unclosed [ too.
		{"a{b,c}", "a{b,c}", true},
		{"a{b,c}", "ab", false},
		{`a\*`, `a\x`, true},
		{"report[1", "report[1", true},
		{"a.b", "axb", false},
	}
	for _, tc := range cases {
		p, err := Compile(tc.pattern, Wildcard)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		if got := p.Match(tc.name); got != tc.want {
			t.Errorf("%q matching %q = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestPrefixAndOneSegment(t *testing.T) {
	cases := []struct {
		pattern, prefix string
		one, meta       bool
	}{
		{"docs/*.txt", "docs/", true, true},
		{"docs/a?c", "docs/a", true, true},
		{"docs/*/x.txt", "docs/", false, true},
		{"docs/**", "docs/", false, true},
		{"report[1", "report[1", true, false},
		{"lo[gx]s/2024", "lo", false, true},
		{"plain/name", "plain/name", true, false},
	}
	for _, tc := range cases {
		p, _ := Compile(tc.pattern, Wildcard)
		if p.Prefix() != tc.prefix || p.OneSegment() != tc.one || HasMeta(tc.pattern, Wildcard) != tc.meta {
			t.Errorf("%q: prefix %q one %v meta %v, want %q %v %v", tc.pattern, p.Prefix(), p.OneSegment(),
				HasMeta(tc.pattern, Wildcard), tc.prefix, tc.one, tc.meta)
		}
	}
}

func TestMatchGlobTranslation(t *testing.T) {
	cases := []struct {
		pattern, glob, under string
		ok                   bool
	}{
		{"docs/*.txt", "docs/*.txt", "docs/*.txt**", true},
		{"docs/*", "docs/*", "docs/**", true},
		{"**.txt", "**.txt", "**.txt**", true},
		{"a/**/b", "a/**b", "a/**b**", true},
		{"**/b", "**b", "**b**", true},
		{"a/***/b", "a/**b", "a/**b**", true},
		{"[^ab]?.log", "[!ab]?.log", "[!ab]?.log**", true},
		{"[ab].txt", "[ab].txt", "[ab].txt**", true},
		// What matchGlob would read as syntax stays on the client.
		{"a{b}*", "", "", false},
		{`a\*`, "", "", false},
		{"report[1*", "", "", false},
		{"[]a]*", "", "", false},
	}
	for _, tc := range cases {
		p, _ := Compile(tc.pattern, Wildcard)
		g, ok := p.MatchGlob()
		u, _ := p.MatchGlobOrUnder()
		if g != tc.glob || ok != tc.ok || u != tc.under {
			t.Errorf("%q: MatchGlob %q %v, OrUnder %q; want %q %v %q", tc.pattern, g, ok, u, tc.glob, tc.ok, tc.under)
		}
	}
	f, _ := Compile("*.tmp", Filter)
	if _, ok := f.MatchGlob(); ok {
		t.Error("a Filter pattern must not be sent as matchGlob")
	}
}

// "**" matches what "*" matches, newlines included: a name may hold a "\n" (GCS allows
// it, so do file systems), and "*" ([^/]*) takes it while "." without the s flag does
// not, so gs://b/** skipped such names and a filter's "cache/**" let them through.
func TestDoubleStarMatchesNewlines(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		syn           Syntax
	}{
		{"*", "a\nb", Wildcard},
		{"**", "a\nb", Wildcard},
		{"**", "d/a\nb/c", Wildcard},
		{"d/**/f", "d/x\ny/f", Wildcard},
		{"**.txt", "line\nbreak.txt", Wildcard},
		{"cache/**", "cache/a\nb", Filter},
	} {
		p, err := Compile(tc.pattern, tc.syn)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Match(tc.name) {
			t.Errorf("%q does not match %q", tc.pattern, tc.name)
		}
	}
}
