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
)

// editField changes one field of the record file of key, as a hand edit would.
func editField(t *testing.T, s *Store, key, field, value string) {
	t.Helper()
	b, err := os.ReadFile(s.Path(key))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m[field] = value
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Path(key), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A record whose destination was edited is not the transfer its file name says: Load
// refuses it (with one warning naming the file), List shows it under its file, GC
// removes that file.
func TestEditedRecordRefusedListedCollected(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	s.Warn = func(msg string) { warned = append(warned, msg) }
	r := &Record{Kind: KindRewrite, Source: "gs://a/src", Dest: "gs://b/dst", Rewrite: &Rewrite{Token: "T", Endpoint: "http://127.0.0.1:1"}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	key := r.Key()
	editField(t, s, key, "dest", "gs://elsewhere/dst")
	for range 2 {
		if got, err := s.Load(key); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Load of an edited record: %+v, %v", got, err)
		}
	}
	if len(warned) != 1 || !strings.Contains(warned[0], s.Path(key)) || !strings.Contains(warned[0], EditedWhy) {
		t.Errorf("warnings %q", warned)
	}
	recs, err := s.List()
	if err != nil || len(recs) != 1 || !recs[0].Edited() || recs[0].FileKey() != key || recs[0].Stuck() != EditedWhy {
		t.Fatalf("List: %+v, %v", recs, err)
	}
	gone, inUse, err := s.GC()
	if err != nil || len(gone) != 1 || len(inUse) != 0 || gone[0].Dest != "gs://elsewhere/dst" {
		t.Fatalf("GC: %+v %+v %v", gone, inUse, err)
	}
	if _, err := os.Stat(s.Path(key)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the edited record is still there: %v", err)
	}
}

// GC removes a record marked unfinishable, except an upload whose source file is back;
// an unmarked young record stays.
func TestGCRemovesUnfinishable(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(dir, "back.bin")
	if err := os.WriteFile(back, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	recs := map[string]*Record{
		"copy": {Kind: KindRewrite, Source: "gs://a/gone", Dest: "gs://b/x", Rewrite: &Rewrite{}},
		"lost": {Kind: KindUpload, Source: filepath.Join(dir, "lost.bin"), Dest: "gs://b/lost", Upload: &Upload{}},
		"back": {Kind: KindUpload, Source: back, Dest: "gs://b/back", Upload: &Upload{}},
		"live": {Kind: KindDownload, Source: "gs://a/live", Dest: filepath.Join(dir, "live"), Download: &Download{}},
	}
	for name, r := range recs {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
		if name != "live" {
			if err := s.MarkUnfinishable(r, "its source is gone"); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone, _, err := s.GC()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range gone {
		if g.Unfinishable != "its source is gone" {
			t.Errorf("%s removed with mark %q", g.Source, g.Unfinishable)
		}
		names = append(names, g.Source)
	}
	if len(gone) != 2 || strings.Join(names, " ") != "gs://a/gone "+recs["lost"].Source && strings.Join(names, " ") != recs["lost"].Source+" gs://a/gone" {
		t.Errorf("removed %q, want the copy and the lost upload", names)
	}
	for _, name := range []string{"back", "live"} {
		if _, err := s.Load(recs[name].Key()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A transfer that saves again has moved: the mark of an earlier run goes, and GC keeps it.
func TestSaveClearsUnfinishable(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Record{Kind: KindRewrite, Source: "gs://a/src", Dest: "gs://b/dst", Rewrite: &Rewrite{}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUnfinishable(r, "its source gs://a/src is gone"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(r.Key())
	if err != nil || got.Unfinishable != "its source gs://a/src is gone" || got.Stuck() != got.Unfinishable {
		t.Fatalf("marked: %+v, %v", got, err)
	}
	if err := s.Save(got); err != nil {
		t.Fatal(err)
	}
	if gone, _, err := s.GC(); err != nil || len(gone) != 0 {
		t.Errorf("GC removed %+v, %v", gone, err)
	}
	if again, err := s.Load(r.Key()); err != nil || again.Unfinishable != "" {
		t.Errorf("after Save: %+v, %v", again, err)
	}
}

// GC decides from a listing, but another process may resume a marked transfer between
// that listing and GC's lock (its Save clears the mark: the transfer moved). GC must judge
// the record it holds locked, not the one it listed: the resumed record stays.
func TestGCRechecksUnderLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir) // another process on the same directory
	if err != nil {
		t.Fatal(err)
	}
	r := &Record{Kind: KindRewrite, Source: "gs://a/src", Dest: "gs://b/dst", Rewrite: &Rewrite{Token: "T"}}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUnfinishable(r, "its source gs://a/src is gone"); err != nil {
		t.Fatal(err)
	}
	// GC asks the clock once it has listed the records (Expired): the other process
	// resumes the transfer then, and saves it again.
	resumed := false
	s.Now = func() time.Time {
		if !resumed {
			resumed = true
			l, err := other.Lock(r.Key())
			if err != nil {
				t.Fatal(err)
			}
			rec, err := other.Load(r.Key())
			if err != nil {
				t.Fatal(err)
			}
			rec.Rewrite.Token = "T2"
			if err := other.Save(rec); err != nil {
				t.Fatal(err)
			}
			l.Release()
		}
		return time.Now()
	}
	gone, inUse, err := s.GC()
	if !resumed {
		t.Fatal("GC never asked the clock: the test did not interleave")
	}
	if err != nil || len(gone) != 0 || len(inUse) != 0 {
		t.Errorf("GC: removed %+v, in use %+v, %v; want the resumed record kept", gone, inUse, err)
	}
	if got, err := s.Load(r.Key()); err != nil || got.Rewrite.Token != "T2" || got.Unfinishable != "" {
		t.Errorf("the resumed record after GC: %+v, %v", got, err)
	}
}
