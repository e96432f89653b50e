package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// A copy under a customer-supplied key, killed between rewrite calls, is saved with the
// key's SHA256 only. 'gcsput resume' without the key, or with another, refuses (exit 1),
// naming the saved key's SHA256 prefix, writes nothing and keeps the record; so does the
// same cp without the key. With the key, resume continues the saved token and the
// destination is encrypted with it.
func TestE2ECopyKilledResumeNeedsTheKey(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, _ := e.putRandom("o", 5<<20)
	keyFile := e.keyFile("key.txt", e2eKeyB64+"\n")
	cp := []string{"cp", fastRetry, "gs://bkt/o", "gs://dst/o"}
	e.killAtCall(3, append([]string{"cp", "--encryption-key-file", keyFile}, cp[1:]...)...)
	hang.Remove()
	want := "the copy was started with the customer-supplied encryption key whose SHA256 begins " + e2eSHA(e2eKey)[:8]
	var refused []string
	for name, args := range map[string][]string{
		"resume":                  {"resume", fastRetry},
		"resume with another key": {"resume", "--encryption-key", e2eOtherB64, fastRetry},
		"cp again":                cp,
	} {
		r := e.run(nil, args...)
		if r.code != exitFailed || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "give that key to resume it") {
			t.Fatalf("%s: exit %d, want 1 and %q\n%s", name, r.code, want, r.stderr)
		}
		if _, err := e.srv.Attrs("dst", "o"); err == nil {
			t.Fatalf("%s wrote the destination", name)
		}
		if ls := e.must(nil, "sessions", "ls"); !strings.Contains(ls.stdout, "gs://dst/o") {
			t.Fatalf("%s: the record is gone: %+v", name, ls)
		}
		refused = append(refused, r.stdout, r.stderr)
	}
	e.srv.ResetStats()
	r := e.must(nil, "resume", "--json", "--encryption-key-file", keyFile, fastRetry)
	files, _ := jsonLines(t, r.stdout)
	if f := files["gs://dst/o"]; f.Status != "resumed" || f.ResumedFrom == 0 {
		t.Fatalf("resume with the key: %+v\n%s", f, r.stderr)
	}
	a, err := e.srv.Attrs("dst", "o")
	if err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) || a.KMSKeyName != "" || !bytes.Equal(e.object2("dst", "o"), data) {
		t.Fatalf("destination %+v, %v: want the source's bytes under the key", a, err)
	}
	assertNoKey(t, e2eKey, e.state, append(refused, r.stdout, r.stderr)...)
}

// A copy under a Cloud KMS key, killed between rewrite calls, is resumed by 'gcsput resume'
// given no key under the KMS key the record keeps.
func TestE2ECopyKilledResumeKeepsKMSKey(t *testing.T) {
	const kms = "projects/p/locations/global/keyRings/r/cryptoKeys/k"
	e := newCopyE2E(t, 1<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, _ := e.putRandom("o", 5<<20)
	e.killAtCall(3, "cp", "--encryption-key", kms, fastRetry, "gs://bkt/o", "gs://dst/o")
	hang.Remove()
	r := e.must(nil, "resume", "--json", fastRetry)
	if files, _ := jsonLines(t, r.stdout); files["gs://dst/o"].Status != "resumed" {
		t.Fatalf("resume: %s\n%s", r.stdout, r.stderr)
	}
	a, err := e.srv.Attrs("dst", "o")
	if err != nil || a.KMSKeyName != kms || !bytes.Equal(e.object2("dst", "o"), data) {
		t.Fatalf("destination %+v, %v: want it under %s", a, err, kms)
	}
}

// mv between buckets of an object under a customer-supplied key, with the key given, moves
// it as cp copies it (before, every rewrite was GCS's 400: the source's key was not sent).
func TestE2EMvAcrossCSEK(t *testing.T) {
	e := newCopyE2E(t, 0, nil)
	data, _ := e.putRandom("plain", 300<<10)
	keyFile := e.keyFile("key.txt", e2eKeyB64+"\n")
	e.must(nil, "cp", "--encryption-key-file", keyFile, fastRetry, "gs://bkt/plain", "gs://bkt/k")
	r := e.must(nil, "mv", "--json", "--encryption-key-file", keyFile, fastRetry, "gs://bkt/k", "gs://dst/k")
	if files, _ := jsonLines(t, r.stdout); files["gs://dst/k"].Status != "moved" {
		t.Fatalf("mv: %s\n%s", r.stdout, r.stderr)
	}
	a, err := e.srv.Attrs("dst", "k")
	if err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) || !bytes.Equal(e.object2("dst", "k"), data) || e.has("k") {
		t.Fatalf("destination %+v, %v; source there: %v", a, err, e.has("k"))
	}
}

// mv between buckets killed between rewrite calls saves its rewrite token as cp does; the
// same mv again continues from it (fakegcs rewrites only the rest) and removes the source.
func TestE2EMvAcrossKilledResumes(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, _ := e.putRandom("o", 6<<20)
	args := []string{"mv", "--json", fastRetry, "gs://bkt/o", "gs://dst/o"}
	e.killAtCall(3, args...)
	hang.Remove()
	if ls := e.must(nil, "sessions", "ls"); !strings.Contains(ls.stdout, "gs://dst/o") {
		t.Fatalf("no saved rewrite after the killed mv: %+v", ls)
	}
	var before int64
	for _, req := range e.srv.Log() {
		before += req.Rewritten
	}
	e.srv.ResetStats()
	r := e.must(nil, args...)
	files, _ := jsonLines(t, r.stdout)
	if f := files["gs://dst/o"]; f.Status != "moved" || f.ResumedFrom != 2<<20 {
		t.Fatalf("mv again: %+v\n%s", f, r.stderr)
	}
	if got := e.srv.Stats().BytesRewritten; got != 6<<20-before {
		t.Errorf("mv again rewrote %d bytes; want the rest, %d", got, 6<<20-before)
	}
	if !bytes.Equal(e.object2("dst", "o"), data) || e.has("o") {
		t.Fatalf("after the mv: the destination differs, or the source is there (%v)", e.has("o"))
	}
}

// mv between buckets killed between rewrite calls is finished by 'gcsput resume': the copy
// continues from its token, and the source is removed.
func TestE2EMvAcrossKilledResumeFinishes(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, _ := e.putRandom("o", 6<<20)
	e.killAtCall(3, "mv", fastRetry, "gs://bkt/o", "gs://dst/o")
	hang.Remove()
	r := e.must(nil, "resume", "--json", fastRetry)
	files, _ := jsonLines(t, r.stdout)
	if f := files["gs://dst/o"]; f.Status != "moved" || f.ResumedFrom != 2<<20 {
		t.Fatalf("resume: %+v\n%s", f, r.stderr)
	}
	if !bytes.Equal(e.object2("dst", "o"), data) || e.has("o") {
		t.Fatalf("after the resume: the destination differs, or the source is there (%v)", e.has("o"))
	}
}
