package posix

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file's mtime and mode go into metadata under gcloud's keys and come back
// onto another file; values that do not parse are left alone.
func TestMetadataAndRestore(t *testing.T) {
	mt, dir := time.Unix(1700000000, 0), t.TempDir()
	for _, name := range []string{"f", "g"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "f")
	os.Chmod(p, 0o640)
	os.Chtimes(p, mt, mt)
	fi, _ := os.Stat(p)
	md := Metadata(fi)
	if md[MTimeKey] != "1700000000" || md[ModeKey] != "640" || len(md) != 2 {
		t.Errorf("Metadata = %v", md)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := Restore(root, "g", md); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(dir, "g"))
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("restored mode %v mtime %v", fi.Mode().Perm(), fi.ModTime())
	}
	// Invalid values are ignored.
	if err := Restore(root, "g", map[string]string{ModeKey: "9999", MTimeKey: "-5"}); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(dir, "g"))
	if fi.Mode().Perm() != 0o640 || !fi.ModTime().Equal(mt) {
		t.Errorf("invalid values changed the file: %v %v", fi.Mode().Perm(), fi.ModTime())
	}
}
