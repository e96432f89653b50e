package state

import (
	"os"
	"path/filepath"
	"testing"
)

// A split is saved and read back under its job; a missing, unreadable,
// foreign-looking or linked one reads as none, and an ID that is not hex
// names no file at all.
func TestSplit(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.LoadSplit("0123456789abcdef"); ok {
		t.Fatal("a split before any was saved")
	}
	if err := s.SaveSplit("0123456789abcdef", Split{Shards: 16, Job: "sync /a -> gs://b/p"}); err != nil {
		t.Fatal(err)
	}
	if sp, ok := s.LoadSplit("0123456789abcdef"); !ok || sp.Shards != 16 || sp.Job != "sync /a -> gs://b/p" {
		t.Fatalf("LoadSplit = %+v, %v", sp, ok)
	}
	path := filepath.Join(s.Dir, "splits", "0123456789abcdef.json")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("split file %v, %v; want mode 0600", fi, err)
	}
	if recs, _ := s.List(); len(recs) != 0 {
		t.Errorf("List sees the split as a session: %v", recs)
	}
	for name, body := range map[string]string{"garbage": "{", "zero": `{"shards":0}`} {
		os.WriteFile(path, []byte(body), 0o600)
		if sp, ok := s.LoadSplit("0123456789abcdef"); ok {
			t.Errorf("%s: LoadSplit = %+v", name, sp)
		}
	}
	os.Remove(path)
	target := filepath.Join(t.TempDir(), "planted")
	os.WriteFile(target, []byte(`{"shards":3}`), 0o600)
	os.Symlink(target, path)
	if sp, ok := s.LoadSplit("0123456789abcdef"); ok {
		t.Errorf("a linked split was read: %+v", sp)
	}
	for _, id := range []string{"", "../x", "ABC", "0123/4"} {
		if _, ok := s.LoadSplit(id); ok {
			t.Errorf("LoadSplit(%q) found one", id)
		}
		if err := s.SaveSplit(id, Split{Shards: 2}); err == nil {
			t.Errorf("SaveSplit(%q) wrote one", id)
		}
	}
	if err := s.SaveSplit("ab", Split{}); err == nil {
		t.Error("SaveSplit of 0 shards")
	}
}
