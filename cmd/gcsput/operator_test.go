package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/state"
)

// Operator mistakes played end to end against the built binary: an unmounted volume, a typo,
// a second process, a closing terminal.

// TestOperatorHangupAndTermSaveAndSummarize: a terminal that closes (SIGHUP) or a batch
// engine's stop (SIGTERM) mid-upload is an interruption like Ctrl-C: exit 130, the --json
// summary line, the session saved, and a rerun resumes from the server's offset.
func TestOperatorHangupAndTermSaveAndSummarize(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			e := newE2E(t)
			throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
			data := e.write("big.bin", 12<<20)
			cmd, out, errb := e.command(nil, "cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
			e.startThenWait(cmd, "big.bin", 2<<20, errb)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
				t.Fatalf("exit %d after %v, want %d\nstdout:\n%s\nstderr:\n%s", code, sig, exitInterrupted, out, errb)
			}
			files, sum := jsonLines(t, out.String())
			if rec := files["gs://bkt/big.bin"]; sum.Interrupted != 1 || sum.Files != 1 || rec.Status != "interrupted" || !rec.Saved {
				t.Errorf("after %v: summary %+v, file %+v", sig, sum, rec)
			}
			if !strings.Contains(errb.String(), "gcsput resume") {
				t.Errorf("stderr does not say how to finish:\n%s", errb)
			}
			persisted, _ := e.srv.LastSession("bkt", "big.bin")
			throttle.Remove()
			r := e.must(nil, "cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
			files, _ = jsonLines(t, r.stdout)
			if rec := files["gs://bkt/big.bin"]; rec.Status != "resumed" || rec.ResumedFrom < persisted.Persisted || rec.ResumedFrom == 0 {
				t.Errorf("rerun: %+v; the server had %d bytes", rec, persisted.Persisted)
			}
			if !bytes.Equal(e.object("big.bin"), data) {
				t.Error("resumed object differs")
			}
		})
	}
}

// startThenWait starts cmd and returns once the server has persisted at least after bytes
// of object's upload.
func (e *e2e) startThenWait(cmd *exec.Cmd, object string, after int64, errb *bytes.Buffer) {
	t := e.t
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, ok := e.srv.LastSession("bkt", object)
		if ok && s.Persisted >= after {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("upload never got going: %+v\n%s", s, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOperatorStateDirUnwritable: a state directory that refuses the upload's record (a
// full disk; here the record's path is a directory, which refuses even root) is said at
// once, on stderr and as a --json warning line, before anything else happens to the
// process; the interrupted file says it is not resumable, and the summary counts it.
func TestOperatorStateDirUnwritable(t *testing.T) {
	e := newE2E(t)
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
	e.write("big.bin", 12<<20)
	st := filepath.Join(e.dir, "st")
	key := state.Key(state.KindUpload, filepath.Join(e.dir, "big.bin"), "gs://bkt/big.bin", "")
	blocker := filepath.Join(st, key+".json")
	if err := os.MkdirAll(filepath.Join(blocker, "full"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd, out, errb := e.start("cp", "--json", "--state-dir", st, "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	// The warning is printed on stderr, then as a --json line.
	waitFor(t, cmd, errb, "the --json warning line", func() bool {
		return strings.Contains(out.String(), `{"type":"warning","message":"cannot save transfer state in the state directory `+st)
	})
	if !strings.Contains(errb.String(), "gcsput: warning: cannot save transfer state") {
		t.Errorf("no warning on stderr while the upload runs:\n%s", errb)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want %d\n%s", code, exitInterrupted, errb)
	}
	files, sum := jsonLines(t, out.String())
	rec := files["gs://bkt/big.bin"]
	if rec.Status != "interrupted" || rec.Saved || !strings.Contains(rec.SaveError, "transfer state not saved") || sum.NotResumable != 1 {
		t.Errorf("file %+v, summary %+v: want interrupted, not saved, with save_error, counted not resumable", rec, sum)
	}
	if n := strings.Count(errb.String(), "gcsput: warning: cannot save transfer state"); n != 1 {
		t.Errorf("%d warnings about the state directory, want 1:\n%s", n, errb)
	}
	if !strings.Contains(errb.String(), "not resumable: big.bin -> gs://bkt/big.bin") {
		t.Errorf("stderr does not say the file is not resumable:\n%s", errb)
	}
	// Honest: with the directory freed, the rerun starts over, as the warning said.
	if err := os.RemoveAll(blocker); err != nil {
		t.Fatal(err)
	}
	throttle.Remove()
	r := e.must(nil, "cp", "--json", "--state-dir", st, "big.bin", "gs://bkt/big.bin")
	if files, _ := jsonLines(t, r.stdout); files["gs://bkt/big.bin"].Status != "uploaded" {
		t.Errorf("rerun: %+v", files["gs://bkt/big.bin"])
	}
}

// start starts gcsput with args; its output can be read while it runs.
func (e *e2e) start(args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	e.t.Helper()
	cmd := exec.Command(gcsputBin, args...)
	cmd.Env, cmd.Dir = e.env(), e.dir
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	return cmd, out, errb
}

// waitFor polls cond until it holds; if it never does (20s), cmd is killed and the test
// fails naming what.
func waitFor(t *testing.T, cmd *exec.Cmd, errb *syncBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("never saw %s; stderr:\n%s", what, errb)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOperatorCancelRunningUpload: 'sessions cancel' from a second terminal while the upload
// runs leaves it alone, says so with the holder's pid, and exits 1; the upload goes on in
// the same session and finishes (it restarted from 0 before).
func TestOperatorCancelRunningUpload(t *testing.T) {
	e := newE2E(t)
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	data := e.write("big.bin", 12<<20)
	cmd, out, errb := e.start("cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	waitFor(t, cmd, errb, "1 MiB on the server", func() bool { s, _ := e.srv.LastSession("bkt", "big.bin"); return s.Persisted >= 1<<20 })
	during, _ := e.srv.LastSession("bkt", "big.bin")

	c := e.run(nil, "sessions", "cancel", "gs://bkt/big.bin")
	want := fmt.Sprintf("not cancelling %s -> gs://bkt/big.bin: in use by a running transfer (pid %d); stop it first, or use --force", filepath.Join(e.dir, "big.bin"), cmd.Process.Pid)
	if c.code != exitFailed || !strings.Contains(c.stderr, want) || strings.Contains(c.stdout, "cancelled") {
		t.Errorf("cancel during the upload: exit %d\nstdout: %s\nstderr: %s\nwant exit 1 and %q", c.code, c.stdout, c.stderr, want)
	}
	// A second process given the same file and destination refuses it too.
	second := e.run(nil, "cp", "big.bin", "gs://bkt/big.bin")
	if want := fmt.Sprintf("in use by a running transfer (pid %d)", cmd.Process.Pid); second.code != exitFailed || !strings.Contains(second.stderr, want) {
		t.Errorf("a second cp during the upload: exit %d, stderr:\n%s\nwant exit 1 and %q", second.code, second.stderr, want)
	}
	throttle.Remove()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the upload: %v\n%s", err, errb)
	}
	files, _ := jsonLines(t, out.String())
	if rec := files["gs://bkt/big.bin"]; rec.Status != "uploaded" {
		t.Errorf("upload after the refused cancel: %+v", rec)
	}
	if !bytes.Equal(e.object("big.bin"), data) {
		t.Error("object differs")
	}
	if after, _ := e.srv.LastSession("bkt", "big.bin"); after.Seq != during.Seq || after.State != "finalized" {
		t.Errorf("session %d (%s) finished the upload; the one running was %d", after.Seq, after.State, during.Seq)
	}
	if r := e.must(nil, "sessions", "ls"); !strings.Contains(r.stderr, "no unfinished transfers") {
		t.Errorf("after the upload: %+v", r)
	}
}

// TestOperatorCancelRunningDownload: the same for a download, which before lost its partial
// file, failed at the rename, and saved its record again.
func TestOperatorCancelRunningDownload(t *testing.T) {
	e := newE2E(t)
	data := e.write("src.bin", 12<<20)
	if _, err := e.srv.PutObject("bkt", "big.bin", data); err != nil {
		t.Fatal(err)
	}
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	dst := filepath.Join(e.dir, "out.bin")
	cmd, out, errb := e.start("cp", "--json", "gs://bkt/big.bin", dst)
	waitFor(t, cmd, errb, "the download's saved record", func() bool { return savedRecords(e.state) > 0 })

	c := e.run(nil, "sessions", "cancel", dst)
	if c.code != exitFailed || !strings.Contains(c.stderr, "in use by a running transfer (pid "+strconv.Itoa(cmd.Process.Pid)+")") || strings.Contains(c.stdout, "cancelled") {
		t.Errorf("cancel during the download: exit %d\nstdout: %s\nstderr: %s", c.code, c.stdout, c.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".out.bin.gcsput-partial")); err != nil {
		t.Errorf("the running download's partial file: %v", err)
	}
	throttle.Remove()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the download: %v\n%s", err, errb)
	}
	if files, _ := jsonLines(t, out.String()); files[dst].Status != "downloaded" {
		t.Errorf("download after the refused cancel: %+v", files[dst])
	}
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, data) {
		t.Errorf("downloaded file differs (%v)", err)
	}
	if n := savedRecords(e.state); n != 0 {
		t.Errorf("%d records left after the download", n)
	}
}

// TestOperatorForceCancelRunning: --force stops the running transfer (which saves its state
// and says it was stopped), then cancels it: the session is cancelled on the server, no
// object is made, no partial file and no record is left.
func TestOperatorForceCancelRunning(t *testing.T) {
	e := newE2E(t)
	e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
	e.write("big.bin", 12<<20)
	cmd, out, errb := e.start("cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	waitFor(t, cmd, errb, "1 MiB on the server", func() bool { s, _ := e.srv.LastSession("bkt", "big.bin"); return s.Persisted >= 1<<20 })

	c := e.run(nil, "sessions", "cancel", "--force", "gs://bkt/big.bin")
	if c.code != 0 || !strings.Contains(c.stdout, "cancelled upload "+filepath.Join(e.dir, "big.bin")+" -> gs://bkt/big.bin") {
		t.Errorf("cancel --force: exit %d\nstdout: %s\nstderr: %s", c.code, c.stdout, c.stderr)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitFailed {
		t.Errorf("the stopped upload exited %d, want %d", code, exitFailed)
	}
	files, _ := jsonLines(t, out.String())
	if rec := files["gs://bkt/big.bin"]; rec.Status != "failed" || !strings.Contains(rec.Error, "stopped: another process cancelled this transfer") {
		t.Errorf("the stopped upload: %+v", rec)
	}
	if s, _ := e.srv.LastSession("bkt", "big.bin"); s.State != "cancelled" {
		t.Errorf("session %d is %s, want cancelled", s.Seq, s.State)
	}
	if _, _, err := e.srv.Object("bkt", "big.bin"); err == nil {
		t.Error("an object was made")
	}
	if n := savedRecords(e.state); n != 0 {
		t.Errorf("%d records left (the stopped upload saved its again?)", n)
	}
}

// savedRecords counts the records in the state directory under XDG_STATE_HOME=home.
func savedRecords(home string) int {
	m, _ := filepath.Glob(filepath.Join(home, "gcsput", "*.json"))
	return len(m)
}
