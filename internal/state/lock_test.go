//go:build unix

package state

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLock: a held lock is busy to a second taker, with the holder's pid; released, it
// can be taken again and its file is gone; a lock file a killed holder left is reused.
func TestLock(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Lock("k")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Lock("k")
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) || busy.PID != os.Getpid() {
		t.Fatalf("second Lock: %v, want a BusyError with pid %d", err, os.Getpid())
	}
	l.Release()
	if _, err := os.Stat(s.lockPath("k")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Release: %v", err)
	}
	// A killed holder leaves its file, unlocked.
	if err := os.WriteFile(s.lockPath("k"), []byte("99999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = s.Lock("k")
	if err != nil {
		t.Fatalf("Lock over a dead holder's file: %v", err)
	}
	l.Release()
	if s.RequestStop("k") != nil || !s.StopRequested("k") {
		t.Fatal("RequestStop did not register")
	}
	s.ClearStop("k")
	if s.StopRequested("k") {
		t.Error("ClearStop left the request")
	}
}

// TestGCLeavesLockedRecords: an expired record a live transfer holds is not removed.
func TestGCLeavesLockedRecords(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-MaxAge - time.Hour)
	held := &Record{Kind: KindUpload, Source: "/held", Dest: "gs://b/held", Created: old}
	free := &Record{Kind: KindUpload, Source: "/free", Dest: "gs://b/free", Created: old}
	for _, r := range []*Record{held, free} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	l, err := s.Lock(held.Key())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	gone, inUse, err := s.GC()
	if err != nil || len(gone) != 1 || gone[0].Source != "/free" || len(inUse) != 1 || inUse[0].Source != "/held" {
		t.Fatalf("GC: gone %v, in use %v, %v; want /free gone and /held in use", gone, inUse, err)
	}
	if _, err := s.Load(held.Key()); err != nil {
		t.Errorf("the held record: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, held.Key()+".lock")); err != nil {
		t.Errorf("GC removed a held lock file: %v", err)
	}
}
