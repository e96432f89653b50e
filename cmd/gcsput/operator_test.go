package main

import (
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
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
