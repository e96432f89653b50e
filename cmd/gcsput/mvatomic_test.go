package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// mv inside one bucket is one objects.move call per object: nothing copied,
// nothing deleted, the moved objects' bytes where they were sent.
func TestE2EMvInBucketIsOneCall(t *testing.T) {
	e := newE2E(t)
	want := map[string][]byte{}
	for _, n := range []string{"t/a.bin", "t/sub/b.bin"} {
		want[n] = e.write(n, 100<<10+len(n))
		if _, err := e.srv.PutObject("bkt", "src/"+n, want[n]); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.ResetStats()
	r := e.must(nil, "mv", fastRetry, "-r", "gs://bkt/src/t", "gs://bkt/dst/")
	if !strings.Contains(r.stderr, "2 files: 2 moved, 0 failed") {
		t.Fatalf("stderr:\n%s", r.stderr)
	}
	st := e.srv.Stats()
	if st.Requests["storage.objects.move"] != 2 || st.Requests["storage.objects.rewrite"] != 0 ||
		st.Requests["storage.objects.delete"] != 0 || st.BytesRewritten != 0 {
		t.Fatalf("requests %v, %d bytes rewritten", st.Requests, st.BytesRewritten)
	}
	for n, b := range want {
		if !bytes.Equal(e.object("dst/"+n), b) || e.has("src/"+n) {
			t.Errorf("%s: destination equal %v, source still there %v", n, bytes.Equal(e.object("dst/"+n), b), e.has("src/"+n))
		}
	}
}

// A move call that keeps failing leaves the source whole and says so:
// exit 1, the source there, no destination.
func TestE2EMvInBucketFails(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.move", Kind: fakegcs.KindStatus, Status: 503, Times: -1})
	data := e.write("x", 50<<10)
	if _, err := e.srv.PutObject("bkt", "src.bin", data); err != nil {
		t.Fatal(err)
	}
	r := e.run(nil, "mv", fastRetry, "gs://bkt/src.bin", "gs://bkt/dst.bin")
	if r.code != exitFailed || !bytes.Equal(e.object("src.bin"), data) || e.has("dst.bin") {
		t.Fatalf("exit %d, source equal %v, destination there %v\n%s", r.code, bytes.Equal(e.object("src.bin"), data), e.has("dst.bin"), r.stderr)
	}
	for _, w := range []string{"objects.move", "503", "the source is untouched", "1 file: 1 failed"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
}

// Another writer replaces the source between mv's read of it and its move:
// the move carries ifSourceGenerationMatch of the generation read, so GCS
// refuses it (412) and nothing moves; the new source stays, no destination.
func TestE2EMvInBucketSourceReplaced(t *testing.T) {
	e := newE2E(t)
	if _, err := e.srv.PutObject("bkt", "src.bin", []byte("old generation")); err != nil {
		t.Fatal(err)
	}
	e.hooked(func(r *http.Request) bool { return strings.Contains(r.URL.EscapedPath(), "/moveTo/") }, func() {
		if _, err := e.srv.PutObject("bkt", "src.bin", []byte("new generation")); err != nil {
			t.Error(err)
		}
	})
	r := e.run(nil, "mv", fastRetry, "gs://bkt/src.bin", "gs://bkt/dst.bin")
	if r.code != exitFailed || string(e.object("src.bin")) != "new generation" || e.has("dst.bin") {
		t.Fatalf("exit %d (want 1), source %q, destination there %v\n%s", r.code, e.object("src.bin"), e.has("dst.bin"), r.stderr)
	}
	for _, w := range []string{"objects.move", "Error 412", "the source is untouched"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
}
