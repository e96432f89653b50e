package resumable

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false}, // GCS sends no Range when nothing is persisted
		{"bytes=0-0", 1, false},
		{"bytes=0-262143", 262144, false},
		{"bytes=0-4611686018427387902", 4611686018427387903, false},
		{"bytes=0-4611686018427387903", 0, true}, // N+1 would pass maxOffset
		{"bytes=1-10", 0, true},                  // GCS keeps a prefix: never starts past 0
		{"bytes=0-", 0, true},
		{"bytes=0--1", 0, true},
		{"bytes=0-+5", 0, true},
		{"bytes=0-05", 0, true},
		{"bytes 0-5", 0, true},
		{"items=0-5", 0, true},
		{"bytes=0-5,7-9", 0, true},
		{"bytes=0-99999999999999999999", 0, true},
	} {
		got, err := parseRange(tc.in)
		if tc.bad {
			if !errors.Is(err, errHeader) {
				t.Errorf("parseRange(%q) = %d, %v; want a header error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseRange(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want contentRange
		bad  string // substring of the error, "" when valid
	}{
		{"bytes 0-89/*", contentRange{0, 89, -1}, ""},
		{"bytes 0-89/90", contentRange{0, 89, 90}, ""},
		{"bytes 262144-524287/1000000", contentRange{262144, 524287, 1000000}, ""},
		{"bytes */20", contentRange{-1, -1, 20}, ""},
		{"bytes */0", contentRange{-1, -1, 0}, ""},
		{"bytes */*", contentRange{-1, -1, -1}, ""},
		{"bytes 5-4/10", contentRange{}, "last before first"},
		{"bytes 0-10/10", contentRange{}, "range past total"},
		{"bytes 0-9", contentRange{}, "missing /total"},
		{"bytes=0-9/10", contentRange{}, "unit bytes"},
		{"bytes 0-9/-1", contentRange{}, "bad total"},
		{"bytes -9/10", contentRange{}, "bad number"},
		{"bytes 9/10", contentRange{}, "want a-b"},
		{"bytes 0-9/1x", contentRange{}, "bad total"},
		{"", contentRange{}, "unit bytes"},
	} {
		got, err := parseContentRange(tc.in)
		if tc.bad != "" {
			if !errors.Is(err, errHeader) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("parseContentRange(%q) = %+v, %v; want error with %q", tc.in, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseContentRange(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if s := got.String(); s != tc.in {
			t.Errorf("String() = %q; want %q", s, tc.in)
		}
	}
}

func TestParseGoogHash(t *testing.T) {
	// Values of "hello world": crc32c yZRlqg==, md5 XrY7u+Ae7tCTyyK7j1rNww==.
	md5 := []byte{0x5e, 0xb6, 0x3b, 0xbb, 0xe0, 0x1e, 0xee, 0xd0, 0x93, 0xcb, 0x22, 0xbb, 0x8f, 0x5a, 0xcd, 0xc3}
	for _, tc := range []struct {
		name string
		in   []string
		want Hashes
		bad  string
	}{
		{"two headers", []string{"crc32c=yZRlqg==", "md5=XrY7u+Ae7tCTyyK7j1rNww=="}, Hashes{0xc99465aa, true, md5}, ""},
		{"one header", []string{"crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww=="}, Hashes{0xc99465aa, true, md5}, ""},
		{"spaces and case", []string{" CRC32C=yZRlqg== , md5=XrY7u+Ae7tCTyyK7j1rNww== "}, Hashes{0xc99465aa, true, md5}, ""},
		{"crc only (composite)", []string{"crc32c=yZRlqg=="}, Hashes{0xc99465aa, true, nil}, ""},
		{"unknown name ignored", []string{"sha1=abc,crc32c=AAAAAA=="}, Hashes{0, true, nil}, ""},
		{"none", nil, Hashes{}, ""},
		{"repeat same", []string{"crc32c=yZRlqg==", "crc32c=yZRlqg=="}, Hashes{0xc99465aa, true, nil}, ""},
		{"conflict", []string{"crc32c=yZRlqg==", "crc32c=AAAAAA=="}, Hashes{}, "two different crc32c"},
		{"md5 conflict", []string{"md5=XrY7u+Ae7tCTyyK7j1rNww==,md5=AAAAAAAAAAAAAAAAAAAAAA=="}, Hashes{}, "two different md5"},
		{"short crc", []string{"crc32c=AAA="}, Hashes{}, "4 bytes"},
		{"bad base64", []string{"crc32c=!!!!"}, Hashes{}, "4 bytes"},
		{"short md5", []string{"md5=AAAA"}, Hashes{}, "16 bytes"},
		{"no equals", []string{"crc32c"}, Hashes{}, "name=value"},
	} {
		got, err := parseGoogHash(tc.in)
		if tc.bad != "" {
			if !errors.Is(err, errHeader) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s: got %+v, %v; want error with %q", tc.name, got, err, tc.bad)
			}
			continue
		}
		if err != nil || got.CRC32C != tc.want.CRC32C || got.HasCRC32C != tc.want.HasCRC32C || !bytes.Equal(got.MD5, tc.want.MD5) {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	h := Hashes{CRC32C: 0xc99465aa, HasCRC32C: true, MD5: md5}
	if s := h.String(); s != "crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==" {
		t.Errorf("String() = %q", s)
	}
}

// The fuzz targets check that no input panics and that whatever parses
// formats back to an equivalent value.

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"", "bytes=0-0", "bytes=0-262143", "bytes=1-2", "bytes=0-", "bytes=0-9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseRange(s)
		if err != nil {
			return
		}
		if n < 0 || n > maxOffset {
			t.Fatalf("parseRange(%q) = %d: out of range", s, n)
		}
		if s != "" && n == 0 {
			t.Fatalf("parseRange(%q) = 0 from a non-empty header", s)
		}
		if n > 0 {
			if back, err := parseRange(fmt.Sprintf("bytes=0-%d", n-1)); err != nil || back != n {
				t.Fatalf("round trip of %q: %d, %v", s, back, err)
			}
		}
	})
}

func FuzzParseContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-89/*", "bytes 0-89/90", "bytes */20", "bytes */*", "bytes 5-4/10", "bytes 0-10/10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseContentRange(s)
		if err != nil {
			return
		}
		if c.Total < -1 || (c.First < 0) != (c.Last < 0) || c.Len() < 0 {
			t.Fatalf("parseContentRange(%q) = %+v: inconsistent", s, c)
		}
		back, err := parseContentRange(c.String())
		if err != nil || back != c {
			t.Fatalf("round trip of %q: %q gives %+v, %v", s, c.String(), back, err)
		}
	})
}

func FuzzParseGoogHash(f *testing.F) {
	f.Add("crc32c=yZRlqg==", "md5=XrY7u+Ae7tCTyyK7j1rNww==")
	f.Add("crc32c=yZRlqg==,md5=XrY7u+Ae7tCTyyK7j1rNww==", "")
	f.Add("crc32c=AAA=", "md5")
	f.Fuzz(func(t *testing.T, a, b string) {
		h, err := parseGoogHash([]string{a, b})
		if err != nil {
			return
		}
		if h.MD5 != nil && len(h.MD5) != 16 {
			t.Fatalf("md5 of %d bytes", len(h.MD5))
		}
		back, err := parseGoogHash([]string{h.String()})
		if err != nil || back.CRC32C != h.CRC32C || back.HasCRC32C != h.HasCRC32C || !bytes.Equal(back.MD5, h.MD5) {
			t.Fatalf("round trip of %+v: %+v, %v", h, back, err)
		}
	})
}
