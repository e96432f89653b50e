package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// cp writes objects under the holds it is given; a batch that meets held objects fails
// them, each once (never retried), and says so in one line, not one per file.
func TestE2EHoldsCpAndBatchSaysOnce(t *testing.T) {
	e := newE2E(t)
	for _, n := range []string{"d/a", "d/b", "d/c"} {
		e.write(n, 1000+len(n))
	}
	e.must(nil, "cp", fastRetry, "-r", "--temporary-hold", "--event-based-hold", "d", "gs://bkt/")
	for _, n := range []string{"d/a", "d/b", "d/c"} {
		if a, err := e.srv.Attrs("bkt", n); err != nil || !a.TemporaryHold || !a.EventBasedHold {
			t.Fatalf("%s: %+v, %v", n, a, err)
		}
	}
	e.srv.ResetStats()
	r := e.run(nil, "cp", fastRetry, "-r", "d", "gs://bkt/")
	if r.code != exitFailed || !strings.Contains(r.stderr, "3 files: 0 uploaded, 3 failed") && !strings.Contains(r.stderr, "3 failed") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "under a hold or retention"); n != 1 {
		t.Fatalf("the batch says %d times that objects are held, want once:\n%s", n, r.stderr)
	}
	for _, w := range []string{"3 objects are under a hold or retention", "not retried", "is under active Temporary hold", "--no-temporary-hold"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
	if n := e.srv.Count("storage.objects.insert"); n != 3 {
		t.Fatalf("%d inserts for 3 refused files, want 3 (none retried)", n)
	}
	// meta set releases both holds; then the same cp overwrites.
	e.must(nil, "meta", "set", "--no-temporary-hold", "--no-event-based-hold", "gs://bkt/d/a", "gs://bkt/d/b", "gs://bkt/d/c")
	e.must(nil, "cp", fastRetry, "-r", "d", "gs://bkt/")
}

// rm and sync --delete meet a held object: one delete request each, the object stays,
// exit 1, and the rest is done.
func TestE2EHoldsRmAndSyncDeleteDoNotLoop(t *testing.T) {
	e := newE2E(t)
	e.write("src/keep", 10)
	e.must(nil, "cp", fastRetry, "--temporary-hold", "src/keep", "gs://bkt/p/held")
	e.srv.ResetStats()
	r := e.run(nil, "rm", fastRetry, "gs://bkt/p/held")
	if r.code != exitFailed || !e.has("p/held") || e.srv.Count("storage.objects.delete") != 1 ||
		!strings.Contains(r.stderr, "is under active Temporary hold") {
		t.Fatalf("rm: exit %d, still there %v, %d deletes\n%s", r.code, e.has("p/held"), e.srv.Count("storage.objects.delete"), r.stderr)
	}
	e.srv.ResetStats()
	r = e.run(nil, "sync", fastRetry, "--delete", "--max-delete", "5", "src", "gs://bkt/p")
	if r.code != exitFailed || !e.has("p/held") || !e.has("p/keep") || e.srv.Count("storage.objects.delete") != 1 {
		t.Fatalf("sync --delete: exit %d, held there %v, keep there %v, %d deletes\n%s", r.code, e.has("p/held"), e.has("p/keep"),
			e.srv.Count("storage.objects.delete"), r.stderr)
	}
	if n := strings.Count(r.stderr, "under a hold or retention"); n != 1 {
		t.Fatalf("sync says %d times that an object is held, want once:\n%s", n, r.stderr)
	}
}

// Object retention: cp --retain-until into a bucket with object retention; rm is refused
// with GCS's words; meta set cannot clear an Unlocked retention without the override, and
// can with it; then rm works. Usage errors are exit 2 with nothing sent.
func TestE2EObjectRetention(t *testing.T) {
	e := newE2E(t)
	req, _ := http.NewRequest("POST", e.srv.Endpoint()+"b?project=p&enableObjectRetention=true", strings.NewReader(`{"name":"ret"}`))
	if resp, err := e.srv.Client().Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("creating a bucket with object retention: %v %v", resp, err)
	}
	e.write("f", 100)
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, bad := range [][]string{{"--retention-mode", "Locked"}, {"--retain-until", "tomorrow"}, {"--retain-until", until, "--retention-mode", "forever"}} {
		r := e.run(nil, append(append([]string{"cp"}, bad...), "f", "gs://ret/f")...)
		if r.code != exitUsage || e.srv.Count("storage.objects.insert") != 0 {
			t.Fatalf("cp %q: exit %d (want 2)\n%s", bad, r.code, r.stderr)
		}
	}
	e.must(nil, "cp", "--retain-until", until, "f", "gs://ret/f")
	if a, err := e.srv.Attrs("ret", "f"); err != nil || a.Retention == nil || a.Retention.Mode != "Unlocked" {
		t.Fatalf("retention: %+v, %v", a, err)
	}
	r := e.run(nil, "rm", "gs://ret/f")
	if r.code != exitFailed || !strings.Contains(r.stderr, "is subject to bucket's retention policy or object retention") {
		t.Fatalf("rm: exit %d\n%s", r.code, r.stderr)
	}
	r = e.run(nil, "meta", "set", "--clear-retention", "gs://ret/f")
	if r.code != exitFailed || !strings.Contains(r.stderr, "overrideUnlockedRetention") {
		t.Fatalf("clear without override: exit %d\n%s", r.code, r.stderr)
	}
	e.must(nil, "meta", "set", "--clear-retention", "--override-unlocked-retention", "gs://ret/f")
	e.must(nil, "rm", "gs://ret/f")
	// A bucket without object retention refuses one: GCS's 400, exit 1.
	r = e.run(nil, "cp", "--retain-until", until, "f", "gs://bkt/f")
	if r.code != exitFailed || e.has("f") {
		t.Fatalf("retention into a bucket without it: exit %d\n%s", r.code, r.stderr)
	}
}

// mv inside one bucket with holds to add copies (a move cannot add them) and deletes.
func TestE2EHoldsMvInBucketCopies(t *testing.T) {
	e := newE2E(t)
	if _, err := e.srv.PutObject("bkt", "s", []byte("moving")); err != nil {
		t.Fatal(err)
	}
	e.must(nil, "mv", fastRetry, "--event-based-hold", "gs://bkt/s", "gs://bkt/d")
	if a, err := e.srv.Attrs("bkt", "d"); err != nil || !a.EventBasedHold || e.has("s") || e.srv.Count("storage.objects.move") != 0 {
		t.Fatalf("destination %+v, %v; source there %v; %d moves", a, err, e.has("s"), e.srv.Count("storage.objects.move"))
	}
}
