package naming

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestObjectName(t *testing.T) {
	for _, tc := range [][3]string{
		{"", "a/b", "a/b"},
		{"backup", "a/b", "backup/a/b"},
		{"backup/", "a", "backup/a"},
	} {
		if got := ObjectName(tc[0], tc[1]); got != tc[2] {
			t.Errorf("ObjectName(%q, %q) = %q, want %q", tc[0], tc[1], got, tc[2])
		}
	}
}

func TestLocalPath(t *testing.T) {
	dir := "/dst"
	for _, tc := range []struct {
		prefix, object, want string
		ok                   bool
	}{
		{"", "a.txt", "a.txt", true},
		{"p", "p/sub/a.txt", "sub/a.txt", true},
		{"p/", "p/x/../y", "y", true},
		{"p/", "p/", "", false},
		{"", "dir/", "", false},
	} {
		got, ok, err := LocalPath(dir, tc.prefix, tc.object)
		if err != nil || ok != tc.ok || got != filepath.FromSlash(tc.want) {
			t.Errorf("LocalPath(%q, %q) = %q, %v, %v; want %q, %v", tc.prefix, tc.object, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct{ prefix, object, want string }{
		{"", "../x", `refusing to download object "../x": its name climbs out with "..", so it would be written outside /dst`},
		{"", "a/../../x", `its name climbs out with ".."`},
		{"", "/etc/x", `refusing to download object "/etc/x": its name is an absolute path, so it would be written outside /dst`},
		{"p/", "p//etc/x", `its name is an absolute path`},
		{"", "..", `its name climbs out with ".."`},
		{"p/", "p/a/..", `its name is the destination directory itself`},
		{"p/", "p/.", `its name is the destination directory itself`},
		{"", "a\x00b", "its name contains a NUL byte"},
		{"p/", "q/x", `its name is not under the prefix p/`},
	} {
		_, _, err := LocalPath(dir, tc.prefix, tc.object)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrUnsafePath) {
			t.Errorf("LocalPath(%q, %q) = %v, want %q", tc.prefix, tc.object, err, tc.want)
		}
	}
}

func TestIsURL(t *testing.T) {
	for s, want := range map[string]bool{"gs://b": true, "gs:/b": true, "GS://b": true, "gcs://b": true, "./gs:": false, "file.txt": false, "-": false} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
}

func TestContentType(t *testing.T) {
	for name, want := range map[string]string{
		"index.html": "text/html; charset=utf-8", "photo.JPG": "image/jpeg", "data.json": "application/json",
		"noext": "application/octet-stream", "x.unknownext": "application/octet-stream",
	} {
		if got := ContentType(name); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", name, got, want)
		}
	}
}

func FuzzLocalPath(f *testing.F) {
	for _, s := range []string{"p/a", "p/../x", "p//etc/x", "p/a/../../b", "p/", "p/.", "p/a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, object string) {
		rel, ok, err := LocalPath("/dst", "p/", object)
		if err != nil || !ok {
			return
		}
		joined := filepath.Join("/dst", rel)
		if !strings.HasPrefix(joined, "/dst/") || !filepath.IsLocal(rel) || rel == "." {
			t.Fatalf("object %q → %q escapes /dst", object, joined)
		}
	})
}

// IsRemote, AllRemote and Folder are the operand rules the command and the
// library share (each kept its own copy before).
func TestRemoteAndFolder(t *testing.T) {
	for op, want := range map[string]bool{"gs://b/o": true, "gs://b": true, "gs:/b/o": false, "GS://b": false, "-": false, "./gs://b": false, "": false} {
		if got := IsRemote(op); got != want {
			t.Errorf("IsRemote(%q) = %v, want %v", op, got, want)
		}
	}
	if !AllRemote([]string{"gs://a/x", "gs://b/"}) || AllRemote([]string{"gs://a/x", "x"}) || !AllRemote(nil) {
		t.Error("AllRemote: want true only when every operand is gs://")
	}
	for name, want := range map[string]string{"": "", "a": "a/", "a/": "a/", "a/b": "a/b/"} {
		if got := Folder(name); got != want {
			t.Errorf("Folder(%q) = %q, want %q", name, got, want)
		}
	}
}
