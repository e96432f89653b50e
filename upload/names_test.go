package upload

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/internal/posix"
)

func TestValidateBucket(t *testing.T) {
	good := []string{"abc", "my-bucket_1", "a.b.c", "0bucket9", strings.Repeat("a", 63),
		strings.Repeat("a", 63) + "." + strings.Repeat("b", 63)}
	for _, b := range good {
		if err := validateBucket(b); err != nil {
			t.Errorf("validateBucket(%q) = %v, want nil", b, err)
		}
	}
	bad := []struct{ name, want string }{
		{"", `bad bucket name "": empty`},
		{"ab", `bad bucket name "ab": must have at least 3 characters`},
		{"My-Bucket", `bad bucket name "My-Bucket": 'M' not allowed: use lowercase letters, digits, '-', '_' and '.'`},
		{"a b", `' ' not allowed`},
		{strings.Repeat("a", 64), "longer than 63 characters (222 are allowed only with dots)"},
		{strings.Repeat("a", 64) + ".b", "each dot-separated part must have 1 to 63 characters"},
		{"a..b", "each dot-separated part must have 1 to 63 characters"},
		{"-abc", "must start and end with a letter or digit"},
		{"abc_", "must start and end with a letter or digit"},
		{"192.168.5.4", "must not be an IP address"},
		{"goog-stuff", `must not start with "goog" or contain "google"`},
		{"my-google-bucket", `must not start with "goog" or contain "google"`},
		{"gs:", `':' not allowed`},
	}
	for _, tc := range bad {
		err := validateBucket(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadName) {
			t.Errorf("validateBucket(%q) = %v, want %q matching ErrBadName", tc.name, err, tc.want)
		}
	}
}

func TestValidateObject(t *testing.T) {
	for _, o := range []string{"a", "dir/file.txt", "ünïcode/名前", "a/../b", "#[]*?", strings.Repeat("x", 1024)} {
		if err := validateObject(o); err != nil {
			t.Errorf("validateObject(%q) = %v", o, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"", "empty"},
		{strings.Repeat("x", 1025), "1025 bytes long; the limit is 1024"},
		{"bad\xffutf8", "not valid UTF-8"},
		{"line\nfeed", "contains a carriage return or line feed"},
		{"cr\r", "contains a carriage return or line feed"},
		{".", `"." and ".." are not allowed`},
		{"..", `"." and ".." are not allowed`},
		{".well-known/acme-challenge/x", "reserved"},
	} {
		err := validateObject(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadName) {
			t.Errorf("validateObject(%q) = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want URL
	}{
		{"gs://bkt", URL{"bkt", ""}},
		{"gs://bkt/", URL{"bkt", ""}},
		{"gs://bkt/a/b.txt", URL{"bkt", "a/b.txt"}},
		{"gs://bkt/dir/", URL{"bkt", "dir/"}},
	} {
		got, err := ParseURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if s := (URL{"b", "o/x"}).String(); s != "gs://b/o/x" {
		t.Errorf("String = %q", s)
	}
	for _, tc := range []struct{ in, want string }{
		{"gs:/bkt/o", `bad URL name "gs:/bkt/o": did you mean gs://bkt/o?`},
		{"gs:bkt/o", `bad URL name "gs:bkt/o": did you mean gs://bkt/o?`},
		{"gcs://bkt/o", `did you mean gs://bkt/o?`},
		{"GS://bkt/o", `did you mean gs://bkt/o?`},
		{"s3://bkt/o", `bad URL name "s3://bkt/o": want gs://bucket/object`},
		{"gs://Bkt/o", `bad bucket name "Bkt"`},
		{"gs:///o", `bad bucket name "": empty`},
		{"gs://bkt/a\nb", `bad object name "a\nb": contains a carriage return or line feed`},
	} {
		_, err := ParseURL(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadName) {
			t.Errorf("ParseURL(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"gs://b/o", "gs://bkt/dir/", "gs:/x", "gs://a.b/../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURL(s)
		if err != nil {
			return
		}
		if validateBucket(u.Bucket) != nil {
			t.Fatalf("ParseURL(%q) accepted bad bucket %q", s, u.Bucket)
		}
		if u.String() != s && u.String() != s+"/" {
			t.Fatalf("ParseURL(%q).String() = %q", s, u.String())
		}
	})
}

// Attrs fill in a content type guessed from the object name and, for
// PreservePOSIX, the file's mtime and mode, keeping the caller's metadata.
func TestAttrsWithDefaults(t *testing.T) {
	p := writeTemp(t, t.TempDir(), "f", []byte("x"))
	os.Chmod(p, 0o640)
	fi, _ := os.Stat(p)
	a := Attrs{Metadata: map[string]string{"k": "v"}}.withDefaults("x.json", fi)
	if a.ContentType != "application/json" || a.Metadata["k"] != "v" || a.Metadata[posix.ModeKey] != "640" {
		t.Errorf("withDefaults = %+v", a)
	}
}

// A batch's error says how many of its transfers failed and the first
// cause, and matches ErrSomeFailed.
func TestBatchError(t *testing.T) {
	err := batchError(context.Background(), []*Result{{Status: StatusUploaded}, {Source: "/x", Status: StatusFailed, Err: errors.New("boom")}})
	if !errors.Is(err, ErrSomeFailed) || err.Error() != "upload: 1 of 2 transfers failed; first: /x: boom" {
		t.Errorf("batchError = %v", err)
	}
}
