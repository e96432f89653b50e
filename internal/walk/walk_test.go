package walk

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
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
	ents, err := List(root)
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
		t.Errorf("List:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWalkSymlinkedRoot(t *testing.T) {
	real := t.TempDir()
	mkfile(t, filepath.Join(real, "sub", "a.txt"), "a")
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(real, link)
	ents, err := List(link)
	if err != nil || len(ents) != 1 || ents[0].Rel != "sub/a.txt" || ents[0].Skip != "" ||
		ents[0].Path != filepath.Join(link, "sub", "a.txt") {
		t.Fatalf("List(link to dir) = %+v, %v", ents, err)
	}
}

func TestWalkBadRoots(t *testing.T) {
	root := t.TempDir()
	f := filepath.Join(root, "file")
	mkfile(t, f, "x")
	if _, err := List(filepath.Join(root, "missing")); err == nil || err.Error() != "stat "+filepath.Join(root, "missing")+": no such file or directory" {
		t.Errorf("missing root: %v", err)
	}
	if _, err := List(f); err == nil || err.Error() != f+" is not a directory" {
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
	want := "cannot read the whole tree under " + tree + ": open " + locked + ": permission denied"
	if os.Geteuid() != 0 {
		if _, err := List(tree); err == nil || err.Error() != want {
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
	if _, err := List(tree); err == nil || err.Error() != want {
		t.Errorf("unreadable dir: %v, want %q", err, want)
	}
}
