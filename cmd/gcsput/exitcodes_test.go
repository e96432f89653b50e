package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/gcsput/gcsput/fakegcs"
)

// exitCase is one documented exit code (README's table, 'gcsput help', exit.go) and a
// command line that must end with it.
type exitCase struct {
	name string
	code int
	args []string
	// setup prepares the world (files, objects, faults); env, when set, replaces the
	// emulator's environment; signal, when set, is sent once an upload is under way.
	setup  func(e *e2e)
	env    func(e *e2e) []string
	signal syscall.Signal
	stderr string // when set, what stderr must hold
}

// badKey writes a key file cut short: JSON that does not parse.
func badKey(e *e2e) {
	if err := os.WriteFile(filepath.Join(e.dir, "bad-key.json"), []byte(`{"type": "service_account", "private_key": "-----BEGIN`), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// TestE2EExitCodes runs every exit code the README documents through the built binary,
// each with a cause the README names for it.
func TestE2EExitCodes(t *testing.T) {
	t.Parallel()
	three := func(e *e2e) {
		for _, n := range []string{"a", "b", "c"} {
			e.srv.PutObject("bkt", "dst/"+n, []byte(n))
		}
		e.write("src/a", 1)
	}
	cases := []exitCase{
		{name: "all done", code: exitOK, args: []string{"cp", "f.txt", "gs://bkt/f.txt"}},
		{name: "help asked for", code: exitOK, args: []string{"rsync", "--help"}},
		{name: "some transfers failed", code: exitFailed, args: []string{"cp", "-I", "gs://bkt/i/"}},
		{name: "a missing object of several", code: exitFailed, args: []string{"stat", "gs://bkt/nope", "gs://bkt/f.txt"},
			setup: func(e *e2e) { e.srv.PutObject("bkt", "f.txt", []byte("x")) }},
		{name: "bad flag", code: exitUsage, args: []string{"cp", "--frobnicate", "f.txt", "gs://bkt/"}},
		{name: "missing file", code: exitUsage, args: []string{"cp", "nope.txt", "gs://bkt/"}},
		{name: "gs:/ typo", code: exitUsage, args: []string{"cp", "f.txt", "gs:/bkt/f.txt"}},
		{name: "chunk size not a multiple of 256 KiB", code: exitUsage, args: []string{"cp", "--chunk-size", "100KiB", "f.txt", "gs://bkt/"}},
		{name: "no credentials", code: exitUsage, args: []string{"cp", "f.txt", "gs://bkt/f.txt"}, env: noCredentialsEnv},
		{name: "missing --credentials file", code: exitUsage, args: []string{"cp", "--credentials", "missing-key.json", "f.txt", "gs://bkt/f.txt"}, env: tlsEnv(t)},
		{name: "malformed --credentials file", code: exitUsage, args: []string{"cp", "--credentials", "bad-key.json", "f.txt", "gs://bkt/f.txt"}, env: tlsEnv(t),
			setup: badKey, stderr: "gcsput: auth: credentials file bad-key.json: not a JSON key file"},
		{name: "malformed key in GOOGLE_APPLICATION_CREDENTIALS", code: exitUsage, args: []string{"cp", "f.txt", "gs://bkt/f.txt"}, setup: badKey,
			env: func(e *e2e) []string {
				return append(noCredentialsEnv(e), "GOOGLE_APPLICATION_CREDENTIALS=bad-key.json")
			},
			stderr: "gcsput: auth: application default credentials (GOOGLE_APPLICATION_CREDENTIALS file bad-key.json)"},
		{name: "sync refused: empty source", code: exitUsage, args: []string{"sync", "--delete", "empty", "gs://bkt/dst"},
			setup: func(e *e2e) { three(e); os.Mkdir(filepath.Join(e.dir, "empty"), 0o755) }},
		{name: "sync refused: more than --max-delete", code: exitUsage, args: []string{"sync", "--delete", "--max-delete", "1", "src", "gs://bkt/dst"}, setup: three},
		{name: "sync --dry-run of a refused sync", code: exitUsage, args: []string{"rsync", "-n", "-d", "--max-delete", "1", "src", "gs://bkt/dst"}, setup: three},
		{name: "bucket does not exist", code: exitUsage, args: []string{"cp", "-r", "src", "gs://no-such-bucket/"}, setup: three},
		{name: "interrupted: SIGINT", code: exitInterrupted, args: []string{"cp", "--chunk-size", "256KiB", "big.bin", "gs://bkt/big.bin"}, signal: syscall.SIGINT},
		{name: "interrupted: SIGTERM", code: exitInterrupted, args: []string{"cp", "--chunk-size", "256KiB", "big.bin", "gs://bkt/big.bin"}, signal: syscall.SIGTERM},
		{name: "interrupted: SIGHUP", code: exitInterrupted, args: []string{"cp", "--chunk-size", "256KiB", "big.bin", "gs://bkt/big.bin"}, signal: syscall.SIGHUP},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t) })
	}
}

func (c exitCase) run(t *testing.T) {
	e := newE2E(t)
	e.write("f.txt", 100)
	if c.setup != nil {
		c.setup(e)
	}
	args := append(c.args, fastRetry)
	stdin := strings.NewReader("f.txt\nnope.txt\n") // -I's list: one file there, one not
	cmd, out, errb := e.command(stdin, args...)
	if c.env != nil {
		cmd.Env = c.env(e)
	}
	if c.signal != 0 {
		e.write("big.bin", 8<<20)
		e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 2 << 20, Times: -1})
		e.startThenWait(cmd, "big.bin", 256<<10, errb)
		if err := cmd.Process.Signal(c.signal); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	} else {
		_ = cmd.Run()
	}
	if got := cmd.ProcessState.ExitCode(); got != c.code || !strings.Contains(errb.String(), c.stderr) {
		t.Errorf("gcsput %v: exit %d, want %d and stderr holding %q\nstdout:\n%s\nstderr:\n%s", c.args, got, c.code, c.stderr, out, errb)
	}
}

// noCredentialsEnv has no emulator, an empty home, and a metadata server address that
// refuses at once: the credential search ends on loopback without finding anything.
func noCredentialsEnv(e *e2e) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "GCE_METADATA_HOST=127.0.0.1:1"}
}

// tlsEnv points gcsput at a TLS fakegcs whose certificate it trusts: over https a
// --credentials file is read (over plain http it would be ignored, with a warning).
func tlsEnv(t *testing.T) func(e *e2e) []string {
	return func(e *e2e) []string {
		srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, TLS: true})
		cert := filepath.Join(e.dir, "fakegcs.pem")
		if err := os.WriteFile(cert, srv.CertPEM(), 0o600); err != nil {
			t.Fatal(err)
		}
		return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "XDG_STATE_HOME=" + e.state,
			"STORAGE_EMULATOR_HOST=" + srv.URL(), "SSL_CERT_FILE=" + cert, "GCE_METADATA_HOST=127.0.0.1:1"}
	}
}

// TestOperatorKeyThatMayNotWrite: credentials that may list a bucket but not write to it
// are refused before the first upload of a batch, once, with the permission named; the
// server is asked once (testIamPermissions), nothing is uploaded.
func TestOperatorKeyThatMayNotWrite(t *testing.T) {
	e := newE2E(t)
	for _, n := range []string{"a", "b", "c"} {
		e.write("data/"+n, 10)
	}
	var asked atomic.Int32
	gcs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/b/bkt/iam/testPermissions") {
			asked.Add(1) // the server is GCS as a reader-only key sees it
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"kind":"storage#testIamPermissionsResponse","permissions":["storage.objects.list"]}`))
			return
		}
		e.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(gcs.Close)
	for _, args := range [][]string{{"cp", "-r", "data", "gs://bkt/"}, {"sync", "data", "gs://bkt/data"}} {
		cmd, out, errb := e.command(nil, append(args, fastRetry)...)
		cmd.Env = append(e.env(), "STORAGE_EMULATOR_HOST="+gcs.URL)
		_ = cmd.Run()
		want := "gcsput: gs://bkt: these credentials may not write objects (storage.objects.create); nothing was transferred"
		if code := cmd.ProcessState.ExitCode(); code != exitUsage || !strings.HasPrefix(errb.String(), want) || strings.Count(errb.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q\nstderr %q\nwant exit 2 and one line %q...", args, code, out, errb, want)
		}
	}
	if n := asked.Load(); n != 2 {
		t.Errorf("testIamPermissions asked %d times, want once per command", n)
	}
	if n := e.srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d uploads tried by a key that may not write", n)
	}
}
