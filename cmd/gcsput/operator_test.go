package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
	waitFor(t, cmd, errb, "the warning", func() bool { return strings.Contains(errb.String(), "cannot save transfer state") })
	if !strings.Contains(out.String(), `{"type":"warning","message":"cannot save transfer state in the state directory `+st) {
		t.Errorf("no --json warning line while the upload runs:\n%s", out)
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
