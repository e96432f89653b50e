package upload

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mkfile(t *testing.T, p string, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWalkRule(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	mkfile(t, filepath.Join(root, "a.txt"), "a")
	mkfile(t, filepath.Join(root, "sub", "deep", "b.bin"), "bb")
	mkfile(t, filepath.Join(outside, "target.txt"), "ccc")
	os.MkdirAll(filepath.Join(root, "empty"), 0o755)
	os.Symlink(filepath.Join(outside, "target.txt"), filepath.Join(root, "link-file"))
	os.Symlink(outside, filepath.Join(root, "link-dir"))
	os.Symlink(root, filepath.Join(root, "sub", "loop"))
	os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "link-broken"))
	if err := syscall.Mkfifo(filepath.Join(root, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	ents, err := Walk(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		s := e.Rel
		switch {
		case e.Err != nil:
			s += " ERR " + e.Err.Error()
		case e.Skip != "":
			s += " SKIP " + e.Skip
		default:
			s += " size " + string(rune('0'+e.Info.Size()))
			if e.Path != filepath.Join(root, filepath.FromSlash(e.Rel)) {
				t.Errorf("%s: path %s", e.Rel, e.Path)
			}
		}
		got = append(got, s)
	}
	want := []string{
		"a.txt size 1",
		"link-broken ERR broken symlink " + filepath.Join(root, "link-broken") + ": stat " + filepath.Join(root, "link-broken") + ": no such file or directory",
		"link-dir SKIP symlink to a directory (not followed)",
		"link-file size 3",
		"pipe SKIP not a regular file (named pipe)",
		"sub/deep/b.bin size 2",
		"sub/loop SKIP symlink to a directory (not followed)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	mkfile(t, filepath.Join(real, "sub", "a.txt"), "a")
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(real, link)
	ents, err := Walk(link)
	if err != nil || len(ents) != 1 || ents[0].Rel != "sub/a.txt" || ents[0].Skip != "" ||
		ents[0].Path != filepath.Join(link, "sub", "a.txt") {
		t.Fatalf("Walk(link to dir) = %+v, %v", ents, err)
	}
}

func TestWalkBadRoots(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "file")
	mkfile(t, f, "x")
	if _, err := Walk(filepath.Join(root, "missing")); err == nil || err.Error() != "upload: stat "+filepath.Join(root, "missing")+": no such file or directory" {
		t.Errorf("missing root: %v", err)
	}
	if _, err := Walk(f); err == nil || err.Error() != "upload: "+f+" is not a directory" {
		t.Errorf("file root: %v", err)
	}
}

// TestWalkUnreadableDir checks the error for a directory that cannot be read.
// Root reads any directory, so under root the check runs in a copy of the
// test binary started as the user nobody.
func TestWalkUnreadableDir(t *testing.T) {
	root, err := os.MkdirTemp("", "gcsput-walk-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "tree", "locked"), 0o755); os.RemoveAll(root) })
	tree := filepath.Join(root, "tree")
	locked := filepath.Join(tree, "locked")
	mkfile(t, filepath.Join(locked, "secret"), "x")
	mkfile(t, filepath.Join(tree, "open"), "x")
	os.Chmod(locked, 0)
	want := "upload: cannot read the whole tree under " + tree + ": open " + locked + ": permission denied"
	if os.Geteuid() != 0 {
		if _, err := Walk(tree); err == nil || err.Error() != want {
			t.Errorf("unreadable dir: %v, want %q", err, want)
		}
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("root reads unreadable directories; dropping to nobody is done on Linux only")
	}
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("root reads unreadable directories, and nobody cannot reach %s to try", root)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	// The binary goes where nobody can run it, the tree where nobody can reach it.
	bin := filepath.Join(root, "walk.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, tree} {
		os.Chmod(d, 0o755)
	}
	cmd := exec.Command(bin, "-test.run=^TestWalkAsNobody$", "-test.v")
	cmd.Env = append(os.Environ(), "GCSPUT_WALK_TREE="+tree, "GCSPUT_WALK_WANT="+want)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWalkAsNobody") {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// TestWalkAsNobody is TestWalkUnreadableDir's check, run by it as nobody.
func TestWalkAsNobody(t *testing.T) {
	tree, want := os.Getenv("GCSPUT_WALK_TREE"), os.Getenv("GCSPUT_WALK_WANT")
	if tree == "" {
		t.Skip("run by TestWalkUnreadableDir")
	}
	if os.Geteuid() == 0 {
		t.Fatal("still root")
	}
	if _, err := Walk(tree); err == nil || err.Error() != want {
		t.Errorf("unreadable dir: %v, want %q", err, want)
	}
}

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

func TestContentTypeAndPOSIX(t *testing.T) {
	for name, want := range map[string]string{
		"index.html": "text/html; charset=utf-8", "photo.JPG": "image/jpeg", "data.json": "application/json",
		"noext": "application/octet-stream", "x.unknownext": "application/octet-stream",
	} {
		if got := ContentTypeFor(name); got != want {
			t.Errorf("ContentTypeFor(%q) = %q, want %q", name, got, want)
		}
	}
	p := filepath.Join(t.TempDir(), "f")
	mkfile(t, p, "x")
	mt := time.Unix(1700000000, 0)
	os.Chmod(p, 0o640)
	os.Chtimes(p, mt, mt)
	fi, _ := os.Stat(p)
	md := POSIXMetadata(fi)
	if md[MetaMTime] != "1700000000" || md[MetaMode] != "640" || len(md) != 2 {
		t.Errorf("POSIXMetadata = %v", md)
	}
	a := Attrs{Metadata: map[string]string{"k": "v"}}.withDefaults("x.json", fi)
	if a.ContentType != "application/json" || a.Metadata["k"] != "v" || a.Metadata[MetaMode] != "640" {
		t.Errorf("withDefaults = %+v", a)
	}
	q := filepath.Join(t.TempDir(), "g")
	mkfile(t, q, "y")
	if err := RestorePOSIX(q, md); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(q)
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("restored mode %v mtime %v", fi.Mode().Perm(), fi.ModTime())
	}
	// Invalid values are ignored.
	if err := RestorePOSIX(q, map[string]string{MetaMode: "9999", MetaMTime: "-5"}); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(q)
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("invalid values changed the file: %v %v", fi.Mode().Perm(), fi.ModTime())
	}
}

func TestResultJSON(t *testing.T) {
	r := &Result{Source: "/a", Dest: "gs://b/a", Status: StatusFailed, Err: errors.New("boom"), Elapsed: 1500 * time.Millisecond}
	b, _ := r.MarshalJSON()
	want := `{"source":"/a","dest":"gs://b/a","status":"failed","size":0,"transferred":0,"attempts":0,"seconds":1.5,"error":"boom"}`
	if string(b) != want {
		t.Errorf("json %s\nwant %s", b, want)
	}
	r = &Result{Status: StatusUploaded, Bucket: "b", Object: "o", Generation: 7, Size: 3, CRC32C: 0x12345678}
	b, _ = r.MarshalJSON()
	if !strings.Contains(string(b), `"crc32c":"EjRWeA=="`) || !strings.Contains(string(b), `"generation":7`) {
		t.Errorf("json %s", b)
	}
	err := batchError([]*Result{{Status: StatusUploaded}, {Source: "/x", Status: StatusFailed, Err: errors.New("boom")}})
	if !errors.Is(err, ErrSomeFailed) || err.Error() != "upload: 1 of 2 transfers failed; first: /x: boom" {
		t.Errorf("batchError = %v", err)
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
