package state

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Temporary record files left by a writer killed mid-save (they hold live
// session URIs) are removed when the store is opened; a live writer's
// (locked) is kept.
func TestStaleTempRecordsSwept(t *testing.T) {
	dir := t.TempDir()
	stale, live := filepath.Join(dir, ".0123abcd.json.4242.tmp"), filepath.Join(dir, ".4567cdef.json.4343.tmp")
	os.WriteFile(stale, []byte(`{"upload":{"session":{"uri":"https://x/?upload_id=SECRET"}}}`), 0o600)
	os.WriteFile(live, []byte(`{}`), 0o600)
	f, _ := os.Open(live)
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temporary record still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live writer's temporary record removed: %v", err)
	}
}

// A rewrite record that also carries an upload part is checked for both: its
// token is not sent to the endpoint in use when it came from another (a
// hand-made or damaged record; found in review).
func TestTrustedChecksRewriteBesideUpload(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rec := &Record{Kind: KindRewrite, Upload: &Upload{}, Rewrite: &Rewrite{Token: "T", Endpoint: "https://elsewhere.example"}}
	if s.Trusted(rec, "https://storage.googleapis.com") {
		t.Error("a rewrite token saved from another endpoint was trusted because its record also had an upload part")
	}
}
