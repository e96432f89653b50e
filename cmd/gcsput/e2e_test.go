package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

func TestE2EBulkUploadDirectory(t *testing.T) {
	ins := "storage.objects.insert"
	e := newE2E(t,
		fakegcs.Fault{Op: ins, Object: "up/tree/big.bin", Phase: fakegcs.PhaseInitiate, Kind: fakegcs.KindStatus, Status: 503},
		fakegcs.Fault{Op: ins, Object: "up/tree/big.bin", Phase: fakegcs.PhaseChunk, Offset: new(int64(4 << 20)),
			Kind: fakegcs.KindReset, AfterBytes: 700 << 10, Persist: 512 << 10},
		// Small files go up in one multipart request whose object name is in the body, so
		// this fault cannot pick one by name: it hits whichever insert comes next.
		fakegcs.Fault{Op: ins, Kind: fakegcs.KindStatus, Status: 502},
	)
	want := map[string][]byte{
		"up/tree/empty":        e.write("tree/empty", 0),
		"up/tree/one":          e.write("tree/one", 1),
		"up/tree/q-1":          e.write("tree/q-1", 256<<10-1),
		"up/tree/q+1":          e.write("tree/q+1", 256<<10+1),
		"up/tree/sub/b.txt":    e.write("tree/sub/b.txt", 5000),
		"up/tree/sub/deep/c":   e.write("tree/sub/deep/c", 70000),
		"up/tree/big.bin":      e.write("tree/big.bin", 9<<20+12345), // above the 8 MiB multipart limit: resumable
		"up/tree/sub/deep/d.x": e.write("tree/sub/deep/d.x", 3<<20),
	}
	r := e.must(nil, "cp", "-r", "-j", "4", "-v", "--json", "--chunk-size", "1MiB", fastRetry, "tree", "gs://bkt/up/")
	files, sum := jsonLines(t, r.stdout)
	if sum.Files != len(want) || sum.Uploaded != len(want) || sum.Failed != 0 {
		t.Errorf("summary %+v, want %d uploaded", sum, len(want))
	}
	for name, data := range want {
		if got := e.object(name); !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes on the server, want %d identical", name, len(got), len(data))
		}
		rec, ok := files["gs://bkt/"+name]
		if !ok || rec.Status != "uploaded" || rec.Bytes != int64(len(data)) || rec.CRC32C == "" || rec.Op != "upload" {
			t.Errorf("%s: record %+v", name, rec)
		}
	}
	if rec := files["gs://bkt/up/tree/big.bin"]; rec.Attempts < 3 || rec.Transferred <= rec.Bytes {
		t.Errorf("big.bin: attempts %d, transferred %d: the faults should show", rec.Attempts, rec.Transferred)
	}
	if strings.Contains(r.stderr, "\r") || strings.Contains(r.stderr, "%|") {
		t.Errorf("a progress bar was drawn on a stderr that is not a terminal:\n%q", r.stderr)
	}
	for _, s := range []string{"big.bin: retry 1/12 in", "503 Service Unavailable", "502 Bad Gateway", "resuming at 4.5 MiB"} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
		}
	}
	// The reset reaches the client as a failed read or a failed write, depending on
	// whether its body was still going out: either is a transport error, retried.
	if !strings.Contains(r.stderr, "connection reset by peer") && !strings.Contains(r.stderr, "use of closed network connection") &&
		!strings.Contains(r.stderr, "broken pipe") {
		t.Errorf("stderr shows no retried reset:\n%s", r.stderr)
	}
}

func TestE2EStdinUploadAndStdoutDownload(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(1 << 20)),
		Kind: fakegcs.KindReset, AfterBytes: 300 << 10, Persist: 256 << 10})
	data := e.write("stream.src", 3<<20+77)
	r := e.must(bytes.NewReader(data), "cp", "--chunk-size", "1MiB", fastRetry, "-", "gs://bkt/streams/s.bin")
	if !bytes.Equal(e.object("streams/s.bin"), data) {
		t.Fatal("stdin upload differs")
	}
	if !strings.HasPrefix(r.stdout, "uploaded ") || !strings.Contains(r.stdout, "- -> gs://bkt/streams/s.bin") {
		t.Errorf("stdout %q", r.stdout)
	}
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "streams/s.bin", Offset: new(int64(0)),
		Kind: fakegcs.KindTruncate, AfterBytes: 1 << 20, Times: -1})
	got := e.must(nil, "cp", "-v", fastRetry, "gs://bkt/streams/s.bin", "-")
	if !bytes.Equal([]byte(got.stdout), data) {
		t.Errorf("stdout download: %d bytes, want the %d uploaded", len(got.stdout), len(data))
	}
	if !strings.Contains(got.stderr, "resuming at") {
		t.Errorf("the cut stream should have been resumed:\n%s", got.stderr)
	}
	if !strings.Contains(got.stderr, "downloaded") {
		t.Errorf("the record belongs on stderr when stdout carries the data: %q", got.stderr)
	}
}

func TestE2EDownloadPrefix(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.get", Object: "pre/b/two", Offset: new(int64(0)),
		Kind: fakegcs.KindTruncate, AfterBytes: 100 << 10, Times: -1})
	want := map[string][]byte{"a": bytes.Repeat([]byte("a"), 10), "b/two": bytes.Repeat([]byte("xyz"), 200<<10), "b/c/three": nil}
	for name, data := range want {
		if _, err := e.srv.PutObject("bkt", "pre/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.srv.PutObject("bkt", "prefix-not-under/x", []byte("no")); err != nil {
		t.Fatal(err)
	}
	r := e.must(nil, "cp", "-r", "--json", fastRetry, "gs://bkt/pre", "restore")
	files, sum := jsonLines(t, r.stdout)
	if sum.Downloaded != 3 || sum.Failed != 0 {
		t.Errorf("summary %+v", sum)
	}
	for name, data := range want {
		got, err := os.ReadFile(filepath.Join(e.dir, "restore", filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("restore/%s: %d bytes, %v", name, len(got), err)
		}
	}
	if rec := files[filepath.Join(e.dir, "restore", "b", "two")]; rec.Attempts < 2 {
		t.Errorf("b/two should have been resumed after the cut: %+v", rec)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "restore", "x")); err == nil {
		t.Error("an object outside the prefix was downloaded")
	}
	// The same command again resolves the same names, although restore/ now exists:
	// nothing nests under restore/pre/.
	r = e.must(nil, "cp", "-r", "--json", "--skip-unchanged", fastRetry, "gs://bkt/pre", "restore")
	if _, sum := jsonLines(t, r.stdout); sum.Skipped != 3 {
		t.Errorf("rerun: %+v", sum)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "restore", "pre")); err == nil {
		t.Error("the rerun nested the tree under restore/pre")
	}
	// A trailing slash names a folder to copy into: the prefix keeps its name.
	e.must(nil, "cp", "-r", "-q", fastRetry, "gs://bkt/pre/", "restore/")
	if got, err := os.ReadFile(filepath.Join(e.dir, "restore", "pre", "a")); err != nil || string(got) != "aaaaaaaaaa" {
		t.Errorf("restore/pre/a: %q, %v", got, err)
	}
}

// An interrupted cp -r, run again as the help says, uploads into the same names: the
// first run made objects under gs://bkt/p/, and the rerun does not nest the tree as
// p/tree/... (gsutil's probe would). The saved session resumes.
func TestE2EUploadRerunKeepsNames(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
		Kind: fakegcs.KindThrottle, BytesPerSecond: 4 << 20, Times: -1})
	small := e.write("tree/a.txt", 100)
	big := e.write("tree/big.bin", 10<<20) // above the 8 MiB of a one-request upload
	args := []string{"cp", "-r", "-j", "1", "--json", "--chunk-size", "256KiB", fastRetry, "tree", "gs://bkt/p"}
	e.interruptAt("p/big.bin", 1<<20, args...)
	r := e.must(nil, args...)
	files, sum := jsonLines(t, r.stdout)
	if sum.Failed != 0 || !bytes.Equal(e.object("p/big.bin"), big) || !bytes.Equal(e.object("p/a.txt"), small) {
		t.Fatalf("summary %+v", sum)
	}
	if rec := files["gs://bkt/p/big.bin"]; rec.Status != "resumed" {
		t.Errorf("big.bin: %+v, want resumed", rec)
	}
	if names, _ := e.srv.ObjectNames("bkt"); len(names) != 2 {
		t.Errorf("objects %q, want p/a.txt and p/big.bin only", names)
	}
}

func TestE2ENoClobberAndSkipUnchanged(t *testing.T) {
	e := newE2E(t)
	e.write("d/a", 1000)
	e.write("d/b", 2000)
	e.write("d/c/x", 3000)
	e.must(nil, "cp", "-r", "-q", "d", "gs://bkt/")
	inserts := e.srv.Count("storage.objects.insert")

	r := e.must(nil, "cp", "-r", "-n", "--json", "d", "gs://bkt/")
	files, sum := jsonLines(t, r.stdout)
	if sum.Skipped != 3 || sum.Uploaded != 0 {
		t.Errorf("-n: summary %+v", sum)
	}
	for _, f := range files {
		if f.Status != "skipped" || f.Reason == "" {
			t.Errorf("-n: %+v", f)
		}
	}

	changed := e.write("d/b", 2001)
	r = e.must(nil, "cp", "-r", "--skip-unchanged", "--json", "d", "gs://bkt/")
	files, sum = jsonLines(t, r.stdout)
	if sum.Uploaded != 1 || sum.Skipped != 2 || files["gs://bkt/d/b"].Status != "uploaded" {
		t.Errorf("--skip-unchanged after a change: %+v %+v", sum, files)
	}
	if !bytes.Equal(e.object("d/b"), changed) {
		t.Error("d/b was not replaced")
	}

	before := e.srv.Count("storage.objects.insert")
	r = e.must(nil, "cp", "-r", "--skip-unchanged", "--json", "d", "gs://bkt/")
	_, sum = jsonLines(t, r.stdout)
	if sum.Uploaded != 0 || sum.Skipped != 3 || sum.Transferred != 0 {
		t.Errorf("second --skip-unchanged run: %+v, want nothing uploaded", sum)
	}
	if n := e.srv.Count("storage.objects.insert"); n != before || before != inserts+1 {
		t.Errorf("insert requests: %d after the first run, %d before and %d after the last; want +1 then +0", inserts, before, n)
	}
}

func TestE2EPartialFailureExit1(t *testing.T) {
	// With -j 1 the files go in lexical order, so the one 403 hits p/bad (a multipart
	// upload carries its name in the body, where a fault cannot match it).
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403})
	e.write("p/good", 100)
	e.write("p/bad", 100)
	r := e.run(nil, "cp", "-r", "-j", "1", "--json", fastRetry, "p", "gs://bkt/")
	if r.code != exitFailed {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	files, sum := jsonLines(t, r.stdout)
	if sum.Failed != 1 || sum.Uploaded != 1 {
		t.Errorf("summary %+v", sum)
	}
	bad := files["gs://bkt/p/bad"]
	if bad.Status != "failed" || !strings.Contains(bad.Error, "403") || bad.Attempts != 1 {
		t.Errorf("bad: %+v (a 403 is not retried)", bad)
	}
	if !strings.Contains(r.stderr, "gcsput: failed: p/bad -> gs://bkt/p/bad: ") || !strings.Contains(r.stderr, "1 of 2 transfers failed") {
		t.Errorf("stderr must name the failure:\n%s", r.stderr)
	}
	if got := e.object("p/good"); len(got) != 100 {
		t.Errorf("p/good: %d bytes, want 100", len(got))
	}
}

func TestE2EUsageErrorsExit2(t *testing.T) {
	e := newE2E(t)
	e.write("f.txt", 10)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"cp", "missing.txt", "gs://bkt/"}, "gcsput cp: missing.txt: no such file or directory"},
		{[]string{"cp", "f.txt", "gs:/bkt/x"}, `gcsput cp: bad URL name "gs:/bkt/x": did you mean gs://bkt/x?`},
		{[]string{"cp", "--chunk-size", "1000KiB", "f.txt", "gs://bkt/"}, "1000.0 KiB is not a multiple of 256 KiB"},
		{[]string{"cp", "f.txt", "gs://Bad_Bucket/x"}, `bad bucket name "Bad_Bucket"`},
		{[]string{"stat", "gs://bkt/"}, "names a bucket or folder, not an object"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	} {
		r := e.run(nil, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("gcsput %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
		}
	}
	if st := e.srv.Stats(); len(st.Requests) != 0 {
		t.Errorf("usage errors must be found before any request; the server saw %v", st.Requests)
	}
}

func TestE2EInterruptThenResume(t *testing.T) {
	e := newE2E(t)
	// Throttled so the upload is still running when the signal comes: 12 MiB at 8 MiB/s.
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
	data := e.write("big.bin", 12<<20)
	e.interrupt(3<<20, "cp", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	persisted, _ := e.srv.LastSession("bkt", "big.bin")

	ls := e.must(nil, "sessions", "ls", "--json")
	var sess sessionJSON
	// The signal came once the server held 3 MiB; the record holds what the
	// client had been told by then, which may be one 1 MiB chunk less (the
	// 308 of the last chunk can still be on its way), never more than the server.
	if err := json.Unmarshal([]byte(ls.stdout), &sess); err != nil || sess.Kind != "upload" || sess.Offset < 2<<20 || sess.Offset > persisted.Persisted || sess.Size != 12<<20 {
		t.Fatalf("sessions ls: %q, %v (the server holds %d)", ls.stdout, err, persisted.Persisted)
	}
	if strings.Contains(ls.stdout, "upload_id") {
		t.Error("sessions ls shows the session URI")
	}

	throttle.Remove()
	r := e.must(nil, "resume", "--json")
	files, sum := jsonLines(t, r.stdout)
	rec := files["gs://bkt/big.bin"]
	if sum.Resumed != 1 || rec.Status != "resumed" || rec.ResumedFrom < persisted.Persisted {
		t.Errorf("resume: %+v %+v; the server had %d bytes", sum, rec, persisted.Persisted)
	}
	if !bytes.Equal(e.object("big.bin"), data) {
		t.Error("resumed object differs")
	}
	final, _ := e.srv.LastSession("bkt", "big.bin")
	if final.Seq != persisted.Seq {
		t.Errorf("resume started a new session (%d, was %d)", final.Seq, persisted.Seq)
	}
	// Bytes received beyond the object's size: at most the chunk cut by the signal.
	if extra := final.Received - int64(len(data)); extra > 1<<20 {
		t.Errorf("the server received %d bytes more than the object's size", extra)
	}
	if r := e.must(nil, "sessions", "ls"); !strings.Contains(r.stderr, "no unfinished transfers") {
		t.Errorf("after resume: %+v", r)
	}
}

// interrupt starts gcsput with args, sends SIGINT once the server has persisted at
// least after bytes of big.bin, and checks the exit code and message of an interruption.
func (e *e2e) interrupt(after int64, args ...string) {
	e.t.Helper()
	e.interruptAt("big.bin", after, args...)
}

// interruptAt is interrupt for the upload of object.
func (e *e2e) interruptAt(object string, after int64, args ...string) {
	t := e.t
	t.Helper()
	cmd, out, errb := e.command(nil, args...)
	e.startThenWait(cmd, object, after, errb)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d after SIGINT, want 130\nstdout:\n%s\nstderr:\n%s", code, out, errb)
	}
	for _, s := range []string{"interrupted", "gcsput resume"} {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, errb)
		}
	}
}

func TestE2EMetadataCommands(t *testing.T) {
	e := newE2E(t)
	e.write("m.html", 50)
	e.must(nil, "cp", "-h", "Cache-Control: no-cache", "--metadata", "owner=ops", "m.html", "gs://bkt/site/")
	r := e.must(nil, "stat", "--json", "gs://bkt/site/m.html")
	var o objectJSON
	if err := json.Unmarshal([]byte(r.stdout), &o); err != nil {
		t.Fatal(err)
	}
	if o.Size != 50 || o.CacheControl != "no-cache" || o.Metadata["owner"] != "ops" || !strings.HasPrefix(o.ContentType, "text/html") {
		t.Errorf("stat: %+v", o)
	}
	e.must(nil, "meta", "set", "--content-type", "text/plain", "--metadata", "ticket=42", "gs://bkt/site/m.html")
	attrs, err := e.srv.Attrs("bkt", "site/m.html")
	if err != nil || attrs.ContentType != "text/plain" || attrs.Metadata["ticket"] != "42" || attrs.Metadata["owner"] != "ops" {
		t.Errorf("after meta set: %+v, %v", attrs, err)
	}
	if r := e.must(nil, "ls", "gs://bkt/site"); r.stdout != "gs://bkt/site/m.html\n" {
		t.Errorf("ls: %q", r.stdout)
	}
	r = e.run(nil, "stat", "gs://bkt/site/nope", "gs://bkt/site/m.html")
	if r.code != exitFailed || !strings.Contains(r.stderr, "gs://bkt/site/nope: no such object") || !strings.Contains(r.stdout, "Content-Length:") {
		t.Errorf("stat of a missing and an existing object: %+v", r)
	}
}

func TestE2ENoCredentialsExit2(t *testing.T) {
	e := newE2E(t)
	e.write("f.txt", 10)
	cmd, out, errb := e.command(nil, "cp", "f.txt", "gs://bkt/f.txt")
	// No emulator, an empty home, and a metadata server address that refuses at once, so
	// the credential search ends on loopback without finding anything.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "GCE_METADATA_HOST=127.0.0.1:1"}
	_ = cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != exitUsage || out.Len() != 0 {
		t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
	}
	for _, s := range []string{"no Google Cloud credentials found", "gcloud auth application-default login", "--credentials"} {
		if !strings.Contains(errb.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, errb)
		}
	}
}
