package upload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// A copy interrupted after its second rewrite call is saved (a 0600 record
// with the token) and listed as a "rewrite" session; Client.Resume later
// continues it from the saved token: fakegcs rewrites only the remainder, and
// the copy has the source's bytes and CRC32C.
func TestCopyInterruptedResumes(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}, RewriteBytesPerCall: 1 << 20})
	data := randBytes(6<<20+3, 1)
	src, _ := srv.PutObject(testBucket, "a/x", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 2<<20)
	from, to := URL{Bucket: testBucket, Object: "a/x"}, URL{Bucket: "dst", Object: "y"}
	r, err := c.Copy(ctx, from, to, CopyOptions{})
	if r.Status != StatusInterrupted || !r.Saved || err == nil {
		t.Fatalf("interrupted copy: %+v", r)
	}
	ss, _ := c.Sessions()
	if len(ss) != 1 || ss[0].Kind != "rewrite" || ss[0].Source != "gs://bkt/a/x" || ss[0].Dest != "gs://dst/y" || ss[0].Offset != 2<<20 || ss[0].Size != int64(len(data)) {
		t.Fatalf("sessions: %+v", ss)
	}
	recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
	if len(recs) != 1 {
		t.Fatalf("records %q", recs)
	}
	if fi, err := os.Stat(recs[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("record mode: %v, %v", fi.Mode(), err)
	}
	srv.ResetStats()
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	rs, err := c2.Resume(context.Background())
	if len(rs) != 1 {
		t.Fatalf("Resume: %d results, %v", len(rs), err)
	}
	if r = rs[0]; err != nil || r.Status != StatusResumed || r.ResumedFrom != 2<<20 || r.Transferred != int64(len(data))-2<<20 || r.CRC32C != src.CRC32C {
		t.Fatalf("resumed copy: %+v", r)
	}
	if st := srv.Stats(); st.BytesRewritten != int64(len(data))-2<<20 {
		t.Errorf("rewritten after the resume: %d, want the remainder %d", st.BytesRewritten, int64(len(data))-2<<20)
	}
	got, attrs, _ := srv.Object("dst", "y")
	if !bytes.Equal(got, data) || attrs.CRC32C != src.CRC32C {
		t.Errorf("destination: %d bytes", len(got))
	}
	if ss, _ := c2.Sessions(); len(ss) != 0 {
		t.Errorf("sessions after the copy: %+v", ss)
	}
}

// A saved copy whose source was overwritten since starts over, copying the
// new generation; one whose token the server refuses starts over too; a
// copy whose source is overwritten during it fails at once, naming both
// generations, and leaves nothing saved.
func TestCopySourceChanges(t *testing.T) {
	srv := newServer(t, fakegcs.Options{RewriteBytesPerCall: 1 << 20})
	srv.PutObject(testBucket, "s", randBytes(3<<20, 2))
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: testBucket, Object: "d"}
	if r, _ := c.Copy(ctx, from, to, CopyOptions{}); !r.Saved {
		t.Fatalf("not saved: %+v", r)
	}
	data := randBytes(2<<20+5, 3)
	srv.PutObject(testBucket, "s", data)
	c2 := newClient(t, srv, func(o *Options) { o.StateDir = state })
	r, err := c2.Copy(context.Background(), from, to, CopyOptions{})
	if err != nil || r.Status != StatusRestarted || !strings.Contains(r.Note, "source changed") || r.ResumedFrom != 0 {
		t.Fatalf("copy after the source changed: %+v", r)
	}
	wantObject(t, srv, "d", data)

	srv.ResetStats()
	c3 := newClient(t, srv, nil)
	var calls int
	c3.opts.Progress = func(Progress) {
		if calls++; calls == 1 {
			srv.PutObject(testBucket, "s", []byte("newer"))
		}
	}
	r, err = c3.Copy(context.Background(), from, URL{Bucket: testBucket, Object: "d2"}, CopyOptions{})
	if !errors.Is(err, resumable.ErrPreconditionFailed) || !strings.Contains(err.Error(), "changed during the copy") || r.Status != StatusFailed || r.Saved {
		t.Fatalf("source overwritten mid-copy: %+v", r)
	}
	if n := srv.Count("storage.objects.rewrite"); n != 2 {
		t.Errorf("%d rewrite calls: the 412 was retried?", n)
	}
	if ss, _ := c3.Sessions(); len(ss) != 0 {
		t.Errorf("sessions: %+v", ss)
	}
}

// NoClobber skips an existing destination without a rewrite;
// IfGenerationMatch of another generation fails, naming it; Attrs replace
// the source's metadata; a prefix copies byte-exact under its new name.
func TestCopyOptionsAndPrefix(t *testing.T) {
	srv := newServer(t, fakegcs.Options{Buckets: []string{"dst"}})
	want := map[string][]byte{"p/a": randBytes(100, 4), "p/sub/b": randBytes(3<<20, 5), "p/": nil}
	for n, b := range want {
		srv.PutObjectFrom(fakegcs.ObjectAttrs{Bucket: testBucket, Name: n, ContentType: "text/x-src"}, bytes.NewReader(b))
	}
	srv.PutObject(testBucket, "px", []byte("outside"))
	var told atomic.Int32
	c := newClient(t, srv, func(o *Options) { o.OnResult = func(*Result) { told.Add(1) } })
	ctx := context.Background()
	results, err := c.CopyPrefix(ctx, URL{Bucket: testBucket, Object: "p"}, URL{Bucket: "dst", Object: "q/"}, CopyOptions{})
	if err != nil || len(results) != 3 || told.Load() != 3 {
		t.Fatalf("CopyPrefix: %v, %d results, %d told", err, len(results), told.Load())
	}
	for _, n := range []string{"a", "sub/b"} {
		got, attrs, err := srv.Object("dst", "q/"+n)
		if err != nil || !bytes.Equal(got, want["p/"+n]) || attrs.ContentType != "text/x-src" {
			t.Errorf("q/%s: %d bytes, %q, %v", n, len(got), attrs.ContentType, err)
		}
	}
	if names, _ := srv.ObjectNames("dst"); len(names) != 2 {
		t.Errorf("dst holds %q", names)
	}
	before := srv.Count("storage.objects.rewrite")
	r, _ := c.Copy(ctx, URL{Bucket: testBucket, Object: "p/a"}, URL{Bucket: "dst", Object: "q/a"}, CopyOptions{NoClobber: true})
	if r.Status != StatusSkipped || r.Note != "exists" || srv.Count("storage.objects.rewrite") != before {
		t.Errorf("-n: %+v", r)
	}
	gen := int64(12345)
	r, err = c.Copy(ctx, URL{Bucket: testBucket, Object: "p/a"}, URL{Bucket: "dst", Object: "q/a"}, CopyOptions{IfGenerationMatch: &gen})
	if !errors.Is(err, resumable.ErrPreconditionFailed) || !strings.Contains(err.Error(), "is not 12345") {
		t.Errorf("if-generation-match: %v", err)
	}
	r, err = c.Copy(ctx, URL{Bucket: testBucket, Object: "p/a"}, URL{Bucket: "dst", Object: "m"}, CopyOptions{Attrs: &Attrs{ContentType: "text/plain", Metadata: map[string]string{"k": "v"}}})
	if a, _ := srv.Attrs("dst", "m"); err != nil || r.Status != StatusCopied || a.ContentType != "text/plain" || a.Metadata["k"] != "v" {
		t.Errorf("attrs: %+v, %+v", r, a)
	}
	if _, err := c.CopyPrefix(ctx, URL{Bucket: testBucket, Object: "p"}, URL{Bucket: testBucket, Object: "p/deeper"}, CopyOptions{}); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("a folder into itself: %v", err)
	}
	if r, err := c.Copy(ctx, URL{Bucket: testBucket, Object: "nope"}, URL{Bucket: "dst", Object: "z"}, CopyOptions{}); err == nil || !strings.Contains(err.Error(), "gs://bkt/nope: no such object") || r.Status != StatusFailed {
		t.Errorf("missing source: %v", err)
	}
}

// Injected 503s on rewrite calls are retried and counted in Attempts.
func TestCopyRetries(t *testing.T) {
	srv := newServer(t, fakegcs.Options{RewriteBytesPerCall: 1 << 20, Faults: []fakegcs.Fault{
		{Op: "storage.objects.rewrite", Skip: 1, Times: 2, Kind: fakegcs.KindStatus, Status: 503},
	}})
	data := randBytes(3<<20, 6)
	srv.PutObject(testBucket, "s", data)
	c := newClient(t, srv, nil)
	r, err := c.Copy(context.Background(), URL{Bucket: testBucket, Object: "s"}, URL{Bucket: testBucket, Object: "d"}, CopyOptions{})
	if err != nil || r.Attempts != 3 || r.Transferred != int64(len(data)) || srv.Count("storage.objects.rewrite") != 5 {
		t.Fatalf("copy under 503s: %+v, %d calls", r, srv.Count("storage.objects.rewrite"))
	}
	wantObject(t, srv, "d", data)
}

// A saved copy whose token came from another endpoint is not trusted: its
// token is sent nowhere, a warning says why, and the copy starts over.
func TestCopySavedTokenOfAnotherEndpoint(t *testing.T) {
	srv := newServer(t, fakegcs.Options{RewriteBytesPerCall: 1 << 20})
	data := randBytes(3<<20, 7)
	srv.PutObject(testBucket, "s", data)
	state := filepath.Join(t.TempDir(), "state")
	c, ctx := stoppingClient(t, srv, state, 1<<20)
	from, to := URL{Bucket: testBucket, Object: "s"}, URL{Bucket: testBucket, Object: "d"}
	if r, _ := c.Copy(ctx, from, to, CopyOptions{}); !r.Saved {
		t.Fatalf("not saved: %+v", r)
	}
	recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
	b, _ := os.ReadFile(recs[0])
	b = bytes.Replace(b, []byte(srv.URL()), []byte("https://evil.example"), 1)
	if err := os.WriteFile(recs[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	var warned []string
	srv.ResetStats()
	c2 := newClient(t, srv, func(o *Options) {
		o.StateDir = state
		o.Warn = func(m string) { warned = append(warned, m) }
	})
	r, err := c2.Copy(context.Background(), from, to, CopyOptions{})
	// The whole object rewritten: the server, where the saved token's
	// rewrite stands at 1 MiB, never saw the token again.
	if err != nil || r.Status != StatusCopied || r.ResumedFrom != 0 || srv.Stats().BytesRewritten != int64(len(data)) {
		t.Fatalf("copy: %+v", r)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "its rewrite token is from https://evil.example") {
		t.Errorf("warnings %q", warned)
	}
}
