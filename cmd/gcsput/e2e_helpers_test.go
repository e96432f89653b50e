package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// The end-to-end tests build gcsput once and run it as a user would, against an
// in-process fakegcs on 127.0.0.1 found through STORAGE_EMULATOR_HOST.

// gcsputBin is the binary built by TestMain; "" when the build failed.
var gcsputBin, buildErr = "", error(nil)

func TestMain(m *testing.M) {
	// Started under nohup (or as a shell's background job), this process ignores SIGHUP
	// (or SIGINT), and so would every gcsput it runs, which keeps an ignored stop signal
	// ignored as nohup asks: the tests that send one would see it have no effect. A
	// handler here makes exec start the children with the default disposition.
	for _, s := range []os.Signal{syscall.SIGHUP, os.Interrupt} {
		if signal.Ignored(s) {
			signal.Notify(make(chan os.Signal, 1), s)
		}
	}
	dir, err := os.MkdirTemp("", "gcsput-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gcsputBin = filepath.Join(dir, "gcsput")
	if out, err := exec.Command("go", "build", "-o", gcsputBin, ".").CombinedOutput(); err != nil {
		buildErr = fmt.Errorf("go build: %v\n%s", err, out)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fastRetry keeps the suite quick: GCS's formula with millisecond waits.
const fastRetry = "--retry=gcs:initial=20ms,max=100ms,jitter=10ms"

// e2e is one test's world: a fake server, a home, a state directory.
type e2e struct {
	t     *testing.T
	srv   *fakegcs.Server
	dir   string // scratch space for local files
	state string
	front string // when set, the host:port gcsput talks to in front of srv (see hooked)
}

func newE2E(t *testing.T, faults ...fakegcs.Fault) *e2e {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Parallel()
	dir := t.TempDir()
	return &e2e{t: t, dir: dir, state: filepath.Join(dir, ".state"),
		srv: fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: faults})}
}

// env is a small, explicit environment: the emulator, and a home with no credentials.
func (e *e2e) env() []string {
	host := e.srv.Host()
	if e.front != "" {
		host = e.front
	}
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "XDG_STATE_HOME=" + e.state,
		"STORAGE_EMULATOR_HOST=" + host,
	}
}

// command prepares gcsput with args, run in the scratch directory.
func (e *e2e) command(stdin io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(gcsputBin, args...)
	cmd.Env, cmd.Dir, cmd.Stdin = e.env(), e.dir, stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	return cmd, &out, &errb
}

// run runs gcsput to the end.
func (e *e2e) run(stdin io.Reader, args ...string) cliResult {
	e.t.Helper()
	cmd, out, errb := e.command(stdin, args...)
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		e.t.Fatalf("gcsput %v: %v", args, err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// must runs gcsput and fails the test unless it exits 0.
func (e *e2e) must(stdin io.Reader, args ...string) cliResult {
	e.t.Helper()
	r := e.run(stdin, args...)
	if r.code != 0 {
		e.t.Fatalf("gcsput %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// write creates a local file of n pseudo-random bytes and returns them.
func (e *e2e) write(rel string, n int) []byte {
	e.t.Helper()
	b := make([]byte, n)
	rng := rand.NewChaCha8([32]byte{byte(n), byte(len(rel))})
	_, _ = rng.Read(b)
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// object returns an object's bytes from the fake server.
func (e *e2e) object(name string) []byte {
	e.t.Helper()
	b, _, err := e.srv.Object("bkt", name)
	if err != nil {
		e.t.Fatalf("object %s: %v", name, err)
	}
	return b
}

// jsonLines parses --json output: file records and the final summary.
func jsonLines(t *testing.T, out string) (map[string]fileRecord, summaryRecord) {
	t.Helper()
	files := map[string]fileRecord{}
	var sum summaryRecord
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var probe struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		switch probe.Type {
		case "file":
			var r fileRecord
			_ = json.Unmarshal(sc.Bytes(), &r)
			files[r.Destination] = r
		case "summary":
			_ = json.Unmarshal(sc.Bytes(), &sum)
		case "warning": // also on stderr, where the tests look for them
		default:
			t.Fatalf("unknown record type in %q", sc.Text())
		}
	}
	if sum.Type != "summary" {
		t.Fatalf("no summary line in:\n%s", out)
	}
	return files, sum
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
