package fakegcs

import (
	"fmt"
	"hash/crc32"
	"testing"
)

func TestParseContentRange(t *testing.T) {
	cases := []struct {
		h    string
		cl   int64
		want contentRange
		bad  bool
	}{
		{"bytes 0-9/10", 10, contentRange{start: 0, end: 9, total: 10}, false},
		{"bytes 5-9/*", 5, contentRange{start: 5, end: 9, total: -1}, false},
		{"bytes */*", 0, contentRange{query: true, total: -1}, false},
		{"bytes */100", 0, contentRange{query: true, total: 100}, false},
		{"", 7, contentRange{start: 0, end: 6, total: 7}, false},
		{"", 0, contentRange{query: true, total: 0}, false},
		{"bytes 9-5/10", 0, contentRange{}, true},
		{"bytes 0-10/10", 0, contentRange{}, true},
		{"bytes=0-9/10", 0, contentRange{}, true},
		{"bytes 0-9", 0, contentRange{}, true},
		{"bytes -1-9/10", 0, contentRange{}, true},
	}
	for _, c := range cases {
		got, err := parseContentRange(c.h, c.cl)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%q: %+v, %v", c.h, got, err)
		}
	}
}

func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-9/10", "bytes 5-9/*", "bytes */*", "bytes */100", "", "bytes 0-0/1"} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, h string, cl int64) {
		cr, err := parseContentRange(h, cl)
		if err != nil {
			return
		}
		if cr.query {
			return
		}
		if cr.start < 0 || cr.end < cr.start || (cr.total >= 0 && cr.end >= cr.total) {
			t.Fatalf("%q parsed to an impossible range %+v", h, cr)
		}
		total := "*"
		if cr.total >= 0 {
			total = fmt.Sprint(cr.total)
		}
		again, err := parseContentRange(fmt.Sprintf("bytes %d-%d/%s", cr.start, cr.end, total), cl)
		if err != nil || again != cr {
			t.Fatalf("%q: round trip %+v -> %+v, %v", h, cr, again, err)
		}
	})
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		h       string
		size    int64
		off, n  int64
		ok, sat bool
	}{
		{"bytes=0-9", 10, 0, 10, true, true},
		{"bytes=2-", 10, 2, 8, true, true},
		{"bytes=-3", 10, 7, 3, true, true},
		{"bytes=-30", 10, 0, 10, true, true},
		{"bytes=5-100", 10, 5, 5, true, true},
		{"bytes=10-", 10, 0, 0, true, false},
		{"bytes=0-", 0, 0, 0, true, false},
		{"bytes=0-1,3-4", 10, 0, 0, false, false},
		{"items=0-1", 10, 0, 0, false, false},
		{"bytes=5-2", 10, 0, 0, false, false},
	}
	for _, c := range cases {
		br, ok := parseRange(c.h)
		if ok != c.ok {
			t.Errorf("%q: ok %v", c.h, ok)
			continue
		}
		if !ok {
			continue
		}
		off, n, sat := br.resolve(c.size)
		if sat != c.sat || (sat && (off != c.off || n != c.n)) {
			t.Errorf("%q on %d: %d+%d sat %v", c.h, c.size, off, n, sat)
		}
	}
}

func FuzzRange(f *testing.F) {
	for _, s := range []string{"bytes=0-9", "bytes=2-", "bytes=-3", "bytes=5-100", "bytes=0-1,3-4"} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -size
		}
		br, ok := parseRange(h)
		if !ok {
			return
		}
		off, n, sat := br.resolve(size)
		if sat && (off < 0 || n <= 0 || off+n > size) {
			t.Fatalf("%q on %d resolved to %d+%d", h, size, off, n)
		}
	})
}

func FuzzGoogHash(f *testing.F) {
	for _, s := range []string{"crc32c=AAAAAA==", "crc32c=n03x6A==,md5=XrY7u+Ae7tCTyyK7j1rNww==", "md5=x", "garbage"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		w, err := parseGoogHash([]string{h})
		if err != nil {
			return
		}
		if w.crc != nil && encodeCRC(*w.crc) != w.crcSrc {
			// Only canonical base64 of 4 bytes is accepted, so it re-encodes.
			if c, _ := decodeCRC(encodeCRC(*w.crc)); c != *w.crc {
				t.Fatalf("%q: crc %x does not round-trip", h, *w.crc)
			}
		}
		if w.md5 != nil && len(w.md5) != 16 {
			t.Fatalf("%q: md5 of %d bytes", h, len(w.md5))
		}
	})
}

func TestCRCCombine(t *testing.T) {
	a, b := []byte("hello, "), []byte("composed world of many bytes")
	ca, cb := crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli)
	want := crc32.Checksum(append(append([]byte{}, a...), b...), castagnoli)
	if got := crcCombine(ca, cb, int64(len(b))); got != want {
		t.Fatalf("combine %x, want %x", got, want)
	}
	if got := crcCombine(ca, 0, 0); got != ca {
		t.Fatalf("combine with empty: %x", got)
	}
}

func TestMultipartBoundary(t *testing.T) {
	cases := map[string]string{
		`multipart/related; boundary="abc"`:                  "abc",
		`multipart/related; boundary='===============53==='`: "===============53===",
		`multipart/related; boundary===x==; charset=utf-8`:   "==x==",
		`multipart/related`:                                  "",
	}
	for in, want := range cases {
		if got := multipartBoundary(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
