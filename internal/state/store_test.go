package state

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/resumable"
)

func TestStoreRoundTripAndPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	s.Now = func() time.Time { return now }
	r := &Record{Kind: KindUpload, Source: "/data/a.bin", Dest: "gs://b/a.bin", Size: 10, Offset: 4,
		Fingerprint: Fingerprint{Path: "/data/a.bin", Size: 10, ModTime: 7, Inode: 9},
		Upload: &Upload{Session: &resumable.Session{URI: "http://127.0.0.1/x?upload_id=SECRET", Bucket: "b", Object: "a.bin",
			Size: 10, ChunkSize: 256 << 10, Persisted: 4, CRC32CState: []byte{1, 2, 3}}, Options: json.RawMessage(`{"if_absent":true}`)}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state dir mode %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	fi, err := os.Stat(filepath.Join(dir, r.Key()+".json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	got, err := s.Load(r.Key())
	if err != nil {
		t.Fatal(err)
	}
	var opts struct {
		IfAbsent bool `json:"if_absent"`
	}
	if err := json.Unmarshal(got.Upload.Options, &opts); err != nil {
		t.Fatal(err)
	}
	if !got.Created.Equal(now) || got.Fingerprint != r.Fingerprint || !opts.IfAbsent ||
		got.Upload.Session.URI != r.Upload.Session.URI || string(got.Upload.Session.CRC32CState) != "\x01\x02\x03" || got.Offset != 4 {
		t.Errorf("loaded %+v, want %+v", got, r)
	}
	// Saving again keeps Created and moves Updated.
	now = now.Add(time.Hour)
	if err := s.Save(got); err != nil {
		t.Fatal(err)
	}
	again, _ := s.Load(r.Key())
	if !again.Created.Equal(now.Add(-time.Hour)) || !again.Updated.Equal(now) {
		t.Errorf("created %v updated %v", again.Created, again.Updated)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("state dir holds %d files, want 1 (no temporary files left)", len(ents))
	}
	if err := s.Remove(r.Key()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(r.Key()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after Remove, Load = %v", err)
	}
	if err := s.Remove(r.Key()); err != nil {
		t.Errorf("second Remove = %v", err)
	}
}

func TestRecordKeyIsSourceAndDest(t *testing.T) {
	a := Key(KindUpload, "/x/a", "gs://b/o", "")
	for _, other := range []string{
		Key(KindUpload, "/x/b", "gs://b/o", ""),
		Key(KindUpload, "/x/a", "gs://b/p", ""),
		Key(KindDownload, "/x/a", "gs://b/o", ""),
		Key(KindUpload, "/x/a", "gs://b/o", "0/2"),
	} {
		if other == a {
			t.Errorf("keys collide: %s", a)
		}
	}
	if a != Key(KindUpload, "/x/a", "gs://b/o", "") || len(a) != 32 {
		t.Errorf("key %q not stable or not 32 hex digits", a)
	}
}

func TestStoreExpiryListAndGC(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	old := &Record{Kind: KindUpload, Source: "/old", Dest: "gs://b/old", Created: now.Add(-MaxAge - time.Minute)}
	young := &Record{Kind: KindUpload, Source: "/young", Dest: "gs://b/young", Created: now.Add(-MaxAge + time.Minute)}
	for _, r := range []*Record{young, old} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Expired(old) || s.Expired(young) {
		t.Errorf("Expired(old)=%v Expired(young)=%v", s.Expired(old), s.Expired(young))
	}
	if MaxAge != 6*24*time.Hour+12*time.Hour {
		t.Errorf("MaxAge = %v, want 6.5 days", MaxAge)
	}
	// A corrupt record and a stale temporary file are cleaned up.
	os.WriteFile(filepath.Join(s.Dir, "deadbeef.json"), []byte("{not json"), 0o600)
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].Source != "/old" || list[1].Source != "/young" {
		t.Fatalf("List = %v, %v; want old then young", list, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "deadbeef.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("corrupt record not removed: %v", err)
	}
	tmp := filepath.Join(s.Dir, ".x.json.123.tmp")
	os.WriteFile(tmp, nil, 0o600)
	os.Chtimes(tmp, now.Add(-2*time.Hour), now.Add(-2*time.Hour))
	gone, _, err := s.GC()
	if err != nil || len(gone) != 1 || gone[0].Source != "/old" {
		t.Fatalf("GC = %v, %v; want the old record", gone, err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file kept")
	}
	if list, _ := s.List(); len(list) != 1 || list[0].Source != "/young" {
		t.Errorf("after GC: %v", list)
	}
}

func TestFingerprintChange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("hello"), 0o644)
	fi, _ := os.Stat(p)
	a := FingerprintOf(p, fi)
	if a.Inode == 0 || a.Size != 5 {
		t.Errorf("fingerprint %+v lacks inode or size", a)
	}
	if c := a.Change(a); c != "" {
		t.Errorf("same fingerprint reports %q", c)
	}
	os.WriteFile(p, []byte("hello!"), 0o644)
	fi, _ = os.Stat(p)
	if c := a.Change(FingerprintOf(p, fi)); c != "size changed from 5 to 6 bytes" {
		t.Errorf("resized: %q", c)
	}
	b := a
	b.ModTime++
	if c := a.Change(b); c != "modification time changed" {
		t.Errorf("touched: %q", c)
	}
	// Replaced by rename: same size and mtime, new inode.
	q := filepath.Join(dir, "g")
	os.WriteFile(q, []byte("hellO"), 0o644)
	mt := time.Unix(0, a.ModTime)
	os.Chtimes(q, mt, mt)
	os.Rename(q, p)
	fi, _ = os.Stat(p)
	if c := a.Change(FingerprintOf(p, fi)); c != "file was replaced (inode changed)" {
		t.Errorf("replaced: %q", c)
	}
}

func TestOpenStoreErrors(t *testing.T) {
	if _, err := Open(""); err == nil || err.Error() != "empty state directory" {
		t.Errorf("empty dir: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := Open(filepath.Join(f, "sub")); err == nil || !strings.Contains(err.Error(), "state directory: mkdir "+f) {
		t.Errorf("dir under a file: %v", err)
	}
}
