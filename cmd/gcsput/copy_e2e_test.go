package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// newCopyE2E is newE2E with a second bucket, "dst", and a server that copies at most
// perCall bytes per rewrite call, as GCS does across locations and storage classes.
func newCopyE2E(t *testing.T, perCall int64, logf func(string, ...any), faults ...fakegcs.Fault) *e2e {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Parallel()
	dir := t.TempDir()
	return &e2e{t: t, dir: dir, state: filepath.Join(dir, ".state"), srv: fakegcs.NewTest(t, fakegcs.Options{
		Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: perCall, Faults: faults, Logf: logf})}
}

// putRandom stores n pseudo-random bytes as bkt/name and returns them with their attributes.
func (e *e2e) putRandom(name string, n int) ([]byte, fakegcs.ObjectAttrs) {
	e.t.Helper()
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(n), byte(len(name))}).Read(b)
	a, err := e.srv.PutObject("bkt", name, b)
	if err != nil {
		e.t.Fatal(err)
	}
	return b, a
}

// killAtCall starts gcsput with args and kills it (SIGKILL: no chance to save anything
// more) once the server has received the n-th rewrite call, which a fault holds: the
// process has checkpointed every call before it.
func (e *e2e) killAtCall(n int, args ...string) {
	t := e.t
	t.Helper()
	cmd, _, errb := e.command(nil, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); e.srv.Count("storage.objects.rewrite") < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the copy never reached rewrite call %d\n%s", n, errb)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// The held call ends when its connection does; wait until the server has recorded it,
	// so that what it did is not counted as the next run's.
	for deadline := time.Now().Add(30 * time.Second); e.rewritesLogged() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the held rewrite call never ended")
		}
	}
}

// rewritesLogged counts the rewrite calls the server has finished with.
func (e *e2e) rewritesLogged() int {
	n := 0
	for _, r := range e.srv.Log() {
		if r.Op == "storage.objects.rewrite" {
			n++
		}
	}
	return n
}

// A 64 MiB copy that takes GCS 32 rewrite calls (2 MiB each) is killed while its third
// call hangs: 'sessions ls' shows the rewrite at 4 MiB, and the same command again resumes
// from the saved token: fakegcs rewrites only what it had not (the held call, served once
// its client is gone, may have done 2 MiB more: GCS's progress is the server's, and the
// token names it), and the copy holds the source's bytes and CRC32C.
func TestE2ECopyKilledResumesFromToken(t *testing.T) {
	e := newCopyE2E(t, 2<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, src := e.putRandom("big.bin", 64<<20)
	args := []string{"cp", "--json", fastRetry, "gs://bkt/big.bin", "gs://dst/copy.bin"}
	e.killAtCall(3, args...)
	hang.Remove()
	var s sessionJSON
	ls := e.must(nil, "sessions", "ls", "--json")
	if err := json.Unmarshal([]byte(ls.stdout), &s); err != nil || s.Kind != "rewrite" || s.Offset != 4<<20 || s.Size != 64<<20 ||
		s.Source != "gs://bkt/big.bin" || s.Destination != "gs://dst/copy.bin" {
		t.Fatalf("sessions ls --json: %q, %v", ls.stdout, err)
	}
	if _, err := e.srv.Attrs("dst", "copy.bin"); err == nil {
		t.Fatal("the destination exists before the copy is done")
	}
	var before int64 // what the server rewrote before the resume
	for _, req := range e.srv.Log() {
		before += req.Rewritten
	}
	if before != 4<<20 && before != 6<<20 {
		t.Fatalf("the server rewrote %d bytes before the kill", before)
	}
	e.srv.ResetStats()
	r := e.must(nil, args...)
	files, sum := jsonLines(t, r.stdout)
	f := files["gs://dst/copy.bin"]
	if f.Op != "copy" || f.Status != "resumed" || f.ResumedFrom != 4<<20 || f.Rewritten != 60<<20 || f.Transferred != 0 ||
		f.Bytes != 64<<20 || sum.Resumed != 1 || sum.Rewritten != 60<<20 {
		t.Fatalf("resumed copy: %+v\nsummary %+v\n%s", f, sum, r.stderr)
	}
	st := e.srv.Stats()
	if rest := 64<<20 - before; st.BytesRewritten != rest || int64(st.Requests["storage.objects.rewrite"]) != rest/(2<<20) {
		t.Errorf("after the resume fakegcs rewrote %d bytes in %d calls; want the remainder, %d", st.BytesRewritten, st.Requests["storage.objects.rewrite"], rest)
	}
	got, attrs, err := e.srv.Object("dst", "copy.bin")
	if err != nil || !bytes.Equal(got, data) || attrs.CRC32C != src.CRC32C || f.CRC32C != resumable.EncodeCRC32C(src.CRC32C) {
		t.Errorf("copy: %d bytes, crc32c %08x (source %08x), %v", len(got), attrs.CRC32C, src.CRC32C, err)
	}
	if r := e.must(nil, "sessions", "ls"); !strings.Contains(r.stderr, "no unfinished transfers") {
		t.Errorf("sessions after the copy: %+v", r)
	}
}

// A saved rewrite run again with other parameters (-n adds ifGenerationMatch=0) starts over
// under its own and says why, without sending the saved token (bound to the first run's
// parameters, GCS would refuse it with a 400, as fakegcs does).
func TestE2ECopyTokenReplayRefused(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	hang := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour})
	data, _ := e.putRandom("o", 5<<20)
	e.killAtCall(3, "cp", fastRetry, "gs://bkt/o", "gs://dst/o")
	hang.Remove()
	e.srv.ResetStats()
	r := e.must(nil, "cp", "-n", "--json", fastRetry, "gs://bkt/o", "gs://dst/o")
	files, _ := jsonLines(t, r.stdout)
	f := files["gs://dst/o"]
	if f.Status != "restarted" || f.Reason != "saved copy was to write the destination with other options (its preconditions): copied from the start" || f.Rewritten != 5<<20 {
		t.Fatalf("rerun with -n: %+v\n%s", f, r.stderr)
	}
	var refused int
	for _, req := range e.srv.Log() {
		if req.Op == "storage.objects.rewrite" && req.Status == 400 {
			refused++
		}
	}
	if refused != 0 || e.srv.Stats().BytesRewritten != 5<<20 {
		t.Errorf("%d refused calls, %d bytes rewritten", refused, e.srv.Stats().BytesRewritten)
	}
	if !bytes.Equal(e.object2("dst", "o"), data) {
		t.Error("the copy differs from its source")
	}
}

// cp -r between buckets copies a folder byte-exact under the name the command line gives
// it, each object verified, and a rerun with -n copies nothing.
func TestE2ECopyRecursive(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	want := map[string][]byte{}
	for _, n := range []string{"p/a.txt", "p/sub/b.bin", "p/sub/deeper/c"} {
		want[n], _ = e.putRandom(n, 1<<20+len(n)*1000)
	}
	e.putRandom("pother", 10) // shares the prefix "p", not the folder "p/"
	r := e.must(nil, "cp", "-r", "--json", fastRetry, "gs://bkt/p", "gs://dst/q/")
	files, sum := jsonLines(t, r.stdout)
	if sum.Copied != 3 || sum.Failed != 0 || len(files) != 3 {
		t.Fatalf("cp -r: %+v\n%s", sum, r.stdout)
	}
	for n, b := range want {
		dst := "q/" + n
		if got := e.object2("dst", dst); !bytes.Equal(got, b) {
			t.Errorf("%s: %d bytes, want %d", dst, len(got), len(b))
		}
		if f := files["gs://dst/"+dst]; f.Op != "copy" || f.Status != "copied" || f.Rewritten != int64(len(b)) || f.Source != "gs://bkt/"+n {
			t.Errorf("%s: %+v", dst, f)
		}
	}
	if names, _ := e.srv.ObjectNames("dst"); len(names) != 3 {
		t.Errorf("dst holds %q", names)
	}
	before := e.srv.Count("storage.objects.rewrite")
	r = e.must(nil, "cp", "-r", "-n", "--json", fastRetry, "gs://bkt/p", "gs://dst/q/")
	if _, sum := jsonLines(t, r.stdout); sum.Skipped != 3 || e.srv.Count("storage.objects.rewrite") != before {
		t.Errorf("rerun with -n: %+v", sum)
	}
}

// A source overwritten between two rewrite calls fails the copy at once with an error that
// names both generations, exit 1, and no retry: the second call is the last.
func TestE2ECopySourceOverwritten(t *testing.T) {
	var srv atomic.Pointer[fakegcs.Server]
	e := newCopyE2E(t, 1<<20, func(format string, args ...any) {
		if s := srv.Load(); s != nil && strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			s.PutObject("bkt", "o", []byte("a new generation"))
		}
	}, fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 1, Kind: fakegcs.KindStall, Delay: time.Millisecond})
	srv.Store(e.srv)
	_, src := e.putRandom("o", 4<<20)
	r := e.run(nil, "cp", fastRetry, "gs://bkt/o", "gs://dst/o")
	now, _ := e.srv.Attrs("bkt", "o")
	want := fmt.Sprintf("the source gs://bkt/o changed during the copy (generation %d, now %d): nothing was written to gs://dst/o", src.Generation, now.Generation)
	if r.code != exitFailed || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant %q", r.code, r.stderr, want)
	}
	if n := e.srv.Count("storage.objects.rewrite"); n != 2 {
		t.Errorf("%d rewrite calls: the 412 was retried", n)
	}
	if _, err := e.srv.Attrs("dst", "o"); err == nil {
		t.Error("a destination was written")
	}
}

// 503s on rewrite calls are retried and counted: attempts in --json, and the copy is whole.
func TestE2ECopyRetries503(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil, fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 1, Times: 3, Kind: fakegcs.KindStatus, Status: 503})
	data, _ := e.putRandom("o", 3<<20)
	r := e.must(nil, "cp", "--json", "-v", fastRetry, "gs://bkt/o", "gs://dst/")
	files, _ := jsonLines(t, r.stdout)
	f := files["gs://dst/o"]
	if f.Status != "copied" || f.Attempts != 4 || !bytes.Equal(e.object2("dst", "o"), data) || strings.Count(r.stderr, "503") < 3 {
		t.Fatalf("copy under 503s: %+v\n%s", f, r.stderr)
	}
	if st := e.srv.Stats(); st.Faults[fakegcs.KindStatus] != 3 || st.Requests["storage.objects.rewrite"] != 6 {
		t.Errorf("stats %+v", st)
	}
}

// object2 returns an object's bytes from any bucket of the fake server.
func (e *e2e) object2(bucket, name string) []byte {
	e.t.Helper()
	b, _, err := e.srv.Object(bucket, name)
	if err != nil {
		e.t.Fatalf("object %s/%s: %v", bucket, name, err)
	}
	return b
}

// sync between two gs:// prefixes copies on the server: what differs is
// rewritten byte-exact, what the source lacks is deleted (--delete), nothing
// is uploaded or downloaded, and a second sync copies nothing.
func TestE2ESyncBetweenBuckets(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	want := map[string][]byte{}
	for _, n := range []string{"p/a.txt", "p/sub/b.bin"} {
		want[n], _ = e.putRandom(n, 2<<20+len(n))
	}
	e.srv.PutObject("dst", "q/stale.txt", []byte("stale"))
	e.srv.PutObject("dst", "q/keep.txt", []byte("kept"))
	e.srv.PutObject("bkt", "p/keep.txt", []byte("kept"))
	r := e.must(nil, "sync", "--delete", "--max-delete", "100%", "--json", fastRetry, "gs://bkt/p", "gs://dst/q")
	files, sum := jsonLines(t, r.stdout)
	if sum.Copied != 2 || sum.Deleted != 1 || sum.Failed != 0 {
		t.Fatalf("sync: %+v\n%s", sum, r.stdout)
	}
	for n, b := range want {
		dst := "q/" + strings.TrimPrefix(n, "p/")
		if got := e.object2("dst", dst); !bytes.Equal(got, b) {
			t.Errorf("%s: %d bytes, want %d", dst, len(got), len(b))
		}
		if f := files["gs://dst/"+dst]; f.Op != "copy" || f.Status != "copied" || f.Source != "gs://bkt/"+n {
			t.Errorf("%s: %+v", dst, f)
		}
	}
	if names, _ := e.srv.ObjectNames("dst"); strings.Join(names, " ") != "q/a.txt q/keep.txt q/sub/b.bin" {
		t.Errorf("dst holds %q", names)
	}
	if n := e.srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d uploads: a sync between buckets copies on the server", n)
	}
	for _, q := range e.srv.Log() {
		if q.BytesOut > 64<<10 {
			t.Errorf("%s answered %d bytes: an object's bytes crossed to the client", q.Op, q.BytesOut)
		}
	}
	before := e.srv.Count("storage.objects.rewrite")
	r = e.must(nil, "sync", "--delete", "--json", fastRetry, "gs://bkt/p", "gs://dst/q")
	if _, sum := jsonLines(t, r.stdout); sum.Copied != 0 || sum.Deleted != 0 || e.srv.Count("storage.objects.rewrite") != before {
		t.Errorf("second sync: %+v", sum)
	}
}
