package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A nightly sync whose cron job lost its key: the run without the key
// replaces no encrypted object by an unencrypted one. Each changed object
// fails with a message naming it, its key's SHA256 prefix and the flag; the
// other files are synced; the exit code is 1; the objects keep their key;
// and the next run with the key copies what changed, under the key.
func TestSyncCronLostTheKey(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "db.dump"), 1000)
	writeFile(t, filepath.Join(src, "notes.txt"), 100)
	keyFile := filepath.Join(w.dir, "key.txt")
	if err := os.WriteFile(keyFile, []byte(e2eKeyB64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := w.run("--encryption-key-file", keyFile, src, "gs://bkt/nightly"); r.code != 0 {
		t.Fatalf("sync with the key: exit %d\n%s", r.code, r.stderr)
	}

	if err := os.WriteFile(filepath.Join(src, "db.dump"), []byte("tonight's dump"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(src, "new.txt"), 10)
	inserts := w.srv.Count("storage.objects.insert")
	r := w.run(src, "gs://bkt/nightly")
	want := "gs://bkt/nightly/db.dump is encrypted with a customer-supplied encryption key, and no key to write with was given (its SHA256 begins " +
		e2eSHA(e2eKey)[:8] + "): not replaced by an unencrypted object; give the key with --encryption-key or $GCSPUT_ENCRYPTION_KEY"
	if r.code != exitFailed || !strings.Contains(r.stdout+r.stderr, want) {
		t.Errorf("sync without the key: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", r.code, exitFailed, want, r.stdout, r.stderr)
	}
	if n := w.srv.Count("storage.objects.insert") - inserts; n != 1 {
		t.Errorf("the sync without the key made %d inserts, want 1 (new.txt)", n)
	}
	for _, name := range []string{"nightly/db.dump", "nightly/notes.txt"} {
		if a, err := w.srv.Attrs("bkt", name); err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) {
			t.Errorf("%s after the sync without the key: key SHA256 %q (%v), want the key's", name, a.CustomerKeySHA256, err)
		}
	}
	if got := w.names(); got != "nightly/db.dump nightly/new.txt nightly/notes.txt" {
		t.Errorf("objects %q", got)
	}
	assertNoKey(t, e2eKey, w.state, r.stdout, r.stderr)

	r = w.run("--encryption-key-file", keyFile, "--json", src, "gs://bkt/nightly")
	if _, sum := jsonLines(t, r.stdout); r.code != 0 || sum.Uploaded != 2 || sum.Skipped != 1 || sum.Failed != 0 {
		t.Errorf("sync with the key again: exit %d, %+v; want db.dump and new.txt uploaded, notes.txt unchanged\n%s", r.code, sum, r.stderr)
	}
	if b, a, err := w.srv.Object("bkt", "nightly/db.dump"); err != nil || string(b) != "tonight's dump" || a.CustomerKeySHA256 != e2eSHA(e2eKey) {
		t.Errorf("db.dump: %q under %q (%v)", b, a.CustomerKeySHA256, err)
	}
}

// A dry run of that cron job says the entry would fail: its summary counts it (text and
// --json), rather than "0 to copy" alone, which reads as "all synced".
func TestSyncDryRunCountsRefusals(t *testing.T) {
	w := newSyncWorld(t)
	src := filepath.Join(w.dir, "src")
	writeFile(t, filepath.Join(src, "db.dump"), 1000)
	keyFile := filepath.Join(w.dir, "key.txt")
	if err := os.WriteFile(keyFile, []byte(e2eKeyB64+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := w.run("--encryption-key-file", keyFile, src, "gs://bkt/nightly"); r.code != 0 {
		t.Fatalf("sync with the key: exit %d\n%s", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(src, "db.dump"), []byte("tonight's dump"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := w.run("--dry-run", src, "gs://bkt/nightly")
	if want := "dry run: 0 to copy (0 B), 0 unchanged, 0 to delete, 1 would fail (above); nothing was changed\n"; r.code != 0 || !strings.HasSuffix(r.stderr, want) {
		t.Errorf("dry run: exit %d, stderr:\n%s\nwant it to end %q", r.code, r.stderr, want)
	}
	r = w.run("--dry-run", "--json", src, "gs://bkt/nightly")
	if want := `{"bytes":0,"copy":0,"delete":0,"dry_run":true,"failed":1,"skip":0,"type":"summary"}`; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("dry run --json: exit %d, stdout:\n%s\nwant %s", r.code, r.stdout, want)
	}
	if n := w.srv.Count("storage.objects.insert"); n != 1 {
		t.Errorf("%d inserts, want the first sync's 1", n)
	}
}
