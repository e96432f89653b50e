//go:build unix

package fakegcs_test

// These tests run Google's own command-line clients, `gcloud storage` and
// `gsutil`, against the standalone fakegcs program (cmd/fakegcs, built here)
// with no credentials. They skip when the Cloud SDK is not installed, except
// on CI (CI=true), where a missing SDK is a failure. What each client sends
// and expects is written down in the comments below; each gcloud or gsutil
// start costs ~1.5 s of Python, so invocations are few.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

const (
	rcBucket = "bkt"
	kib      = 1 << 10
	mib      = 1 << 20
	// cmdTimeout bounds one client invocation; a hung client fails the test.
	cmdTimeout = 90 * time.Second
)

func TestRealClients(t *testing.T) {
	gcloud, gsutil := needTool(t, "gcloud"), needTool(t, "gsutil")
	bin := buildFakeGCS(t)
	t.Run("gcloud", func(t *testing.T) {
		t.Parallel()
		testGcloud(t, bin, gcloud)
	})
	t.Run("gsutil", func(t *testing.T) {
		t.Parallel()
		testGsutil(t, bin, gsutil)
	})
}

// testGcloud: a file above the resumable threshold (one session, the whole
// file in one PUT), a small file (multipart), stdin (1 MiB chunks, size
// unknown until the last), downloads, ls, objects describe, and gcloud's
// own resume after being killed mid-upload. Over TLS, with h2 offered as GCS
// does, gcloud trusting fakegcs's certificate (core/custom_ca_certs_file).
func testGcloud(t *testing.T, bin, gcloud string) {
	// Rewrites take a call per MiB, as GCS's across locations do: a copy
	// must follow the rewriteTokens (testServerCopy).
	srv := startFakeGCS(t, bin, "-tls", "-rewrite-per-call", "1M")
	dir := t.TempDir()
	env := gcloudEnv(t, dir, srv)
	big, small := randomBytes(1, 3*mib+12345), randomBytes(2, 1000)
	stdin := randomBytes(3, 2*mib+300*kib)
	writeFile(t, dir, "big.bin", big)
	writeFile(t, dir, "small.bin", small)

	run(t, env, dir, nil, gcloud, "storage", "cp", "big.bin", "small.bin", "gs://bkt/")
	sess := onlySession(t, srv.stats(t), "big.bin")
	if sess.DeclaredSize != int64(len(big)) || sess.Chunks != 1 || sess.State != "finalized" {
		t.Errorf("big.bin session = %+v, want declared %d, 1 chunk, finalized", sess, len(big))
	}
	if !slices.ContainsFunc(srv.log(t), func(r fakegcs.Request) bool {
		return r.Method == "POST" && r.Path == "/resumable/upload/storage/v1/b/bkt/o" && r.Status == 200
	}) {
		t.Error("gcloud did not initiate on its /resumable/upload path")
	}
	run(t, env, dir, bytes.NewReader(stdin), gcloud, "storage", "cp", "-", "gs://bkt/stdin.bin")
	sess = onlySession(t, srv.stats(t), "stdin.bin")
	if sess.DeclaredSize != -1 || sess.Chunks != 3 || sess.Persisted != int64(len(stdin)) {
		t.Errorf("stdin.bin session = %+v, want no declared size, 3 chunks, %d persisted", sess, len(stdin))
	}
	for name, want := range map[string][]byte{"big.bin": big, "small.bin": small, "stdin.bin": stdin} {
		assertBytes(t, "stored "+name, srv.object(t, name), want)
	}

	out := mkdir(t, dir, "out")
	run(t, env, dir, nil, gcloud, "storage", "cp", "gs://bkt/big.bin", "gs://bkt/stdin.bin", out+"/")
	assertBytes(t, "gcloud download of big.bin", readFile(t, out, "big.bin"), big)
	assertBytes(t, "gcloud download of stdin.bin", readFile(t, out, "stdin.bin"), stdin)

	ls := run(t, env, dir, nil, gcloud, "storage", "ls", "gs://bkt")
	assertLines(t, "gcloud storage ls", ls, "gs://bkt/big.bin", "gs://bkt/small.bin", "gs://bkt/stdin.bin")
	desc := run(t, env, dir, nil, gcloud, "storage", "objects", "describe", "gs://bkt/big.bin", "--format=json")
	assertDescribe(t, desc, big)
	testServerCopy(t, srv, "gcloud", big, func() {
		run(t, env, dir, nil, gcloud, "storage", "cp", "gs://bkt/big.bin", "gs://bkt/copies/gcloud.bin")
	})

	testGcloudResume(t, srv, env, dir, gcloud)
	testGcloudTree(t, srv, env, dir, gcloud)
	logProtocols(t, srv)
}

// logProtocols says which protocols a client took over TLS, and fails if it
// used none: every request must have been counted under one.
func logProtocols(t *testing.T, srv *standalone) {
	st := srv.stats(t)
	if len(st.Protocols) == 0 {
		t.Fatalf("no requests counted per protocol: %+v", st)
	}
	t.Logf("over TLS offering h2 and http/1.1: %d connections, %+v", st.Connections, st.Protocols)
}

// testGcloudTree runs the tree commands, which first ask for the bucket's
// storageLayout: cp -r, du, mv, rsync with deletion, rm -r.
func testGcloudTree(t *testing.T, srv *standalone, env []string, dir, gcloud string) {
	a, b := randomBytes(5, 3000), randomBytes(6, 70*kib)
	writeFile(t, filepath.Join(dir, "tree"), "a.txt", a)
	writeFile(t, filepath.Join(dir, "tree", "sub"), "b.txt", b)
	run(t, env, dir, nil, gcloud, "storage", "cp", "-r", "tree", "gs://bkt/t/")
	assertBytes(t, "cp -r a.txt", srv.object(t, "t/tree/a.txt"), a)
	assertBytes(t, "cp -r sub/b.txt", srv.object(t, "t/tree/sub/b.txt"), b)
	du := run(t, env, dir, nil, gcloud, "storage", "du", "-s", "gs://bkt/t")
	if f := strings.Fields(du); len(f) < 1 || f[0] != strconv.Itoa(len(a)+len(b)) {
		t.Errorf("du -s: %q, want %d bytes", du, len(a)+len(b))
	}
	run(t, env, dir, nil, gcloud, "storage", "mv", "gs://bkt/t/tree/a.txt", "gs://bkt/t/moved.txt")
	assertBytes(t, "mv", srv.object(t, "t/moved.txt"), a)
	writeFile(t, filepath.Join(dir, "tree"), "new.txt", []byte("new"))
	run(t, env, dir, nil, gcloud, "storage", "rsync", "-r", "--delete-unmatched-destination-objects", "tree", "gs://bkt/t/tree")
	assertLines(t, "after rsync", strings.Join(srv.names(t, "t/"), "\n"),
		"t/moved.txt", "t/tree/a.txt", "t/tree/new.txt", "t/tree/sub/b.txt")
	run(t, env, dir, nil, gcloud, "storage", "rm", "-r", "gs://bkt/t/tree")
	assertLines(t, "after rm -r", strings.Join(srv.names(t, "t/"), "\n"), "t/moved.txt")
}

// testGcloudResume kills `gcloud storage cp` mid-upload and reruns it.
// gcloud sends a known-size file as ONE PUT, so the first PUT is throttled
// to 512 KiB/s and gcloud is killed (SIGKILL) once fakegcs has persisted
// 512 KiB. The file is 8 MiB, more than gcloud's socket can buffer, so
// gcloud is still writing when it dies and the dead request ends there (a
// RST; had gcloud handed everything to its kernel, fakegcs would receive
// the rest and the upload would complete). The rerun must find its tracker
// file, ask with "bytes */*", and send only the bytes from the offset
// fakegcs reported.
func testGcloudResume(t *testing.T, srv *standalone, env []string, dir, gcloud string) {
	data := randomBytes(4, 8*mib)
	writeFile(t, dir, "resume.bin", data)
	srv.inject(t, fakegcs.Fault{Op: "storage.objects.insert", Object: "resume.bin",
		Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindThrottle, BytesPerSecond: 512 * kib})

	cmd := command(t, env, dir, nil, gcloud, "storage", "cp", "resume.bin", "gs://bkt/resume.bin")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	atKill := srv.waitPersisted(t, "resume.bin", 512*kib)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // gcloud and any workers it forked
	if err := cmd.Wait(); err == nil {
		t.Fatalf("gcloud finished before it was killed:\n%s", cmd.Stderr)
	}
	trackers := filepath.Join(dir, "gcloud", "surface_data", "storage", "tracker_files", "upload_TRACKER_*")
	if m, _ := filepath.Glob(trackers); len(m) != 1 {
		t.Fatalf("after the kill, %d gcloud upload tracker files, want 1", len(m))
	}

	t.Logf("gcloud killed with %d bytes persisted", atKill)
	run(t, env, dir, nil, gcloud, "storage", "cp", "resume.bin", "gs://bkt/resume.bin")
	assertBytes(t, "resumed object", srv.object(t, "resume.bin"), data)
	if m, _ := filepath.Glob(trackers); len(m) != 0 {
		t.Errorf("tracker file left after the resumed upload succeeded: %d", len(m))
	}
	st := srv.stats(t)
	if n := st.Faults[fakegcs.KindThrottle]; n != 1 {
		t.Errorf("throttle fault fired %d times, want 1 (the first PUT only)", n)
	}
	sess := onlySession(t, st, "resume.bin") // resumed, not restarted
	if sess.StatusQueries < 1 || sess.State != "finalized" || sess.Persisted != int64(len(data)) {
		t.Errorf("resume.bin session = %+v, want >= 1 status query and %d bytes finalized", sess, len(data))
	}
	assertResumedFrom(t, srv.log(t), int64(len(data)), atKill)
}

// assertResumedFrom checks the rerun's wire trace: a status query answered
// 308 with Range bytes=0-(P-1), then one PUT of exactly bytes P..N-1, with
// P a 256 KiB multiple no smaller than what was persisted at the kill.
func assertResumedFrom(t *testing.T, log []fakegcs.Request, total, atKill int64) {
	t.Helper()
	var status, final *fakegcs.Request
	for i, r := range log {
		switch {
		case r.Object != "resume.bin" || r.Op != "storage.objects.insert":
		case r.ContentRange == "bytes */*":
			status = &log[i]
		case status != nil && r.Status == http.StatusOK:
			final = &log[i]
		}
	}
	if status == nil || final == nil {
		t.Fatalf("no status query followed by a final PUT for resume.bin in the log: %+v", log)
	}
	var p int64
	if _, err := fmt.Sscanf(status.RangeHeader, "bytes=0-%d", &p); err != nil || status.Status != 308 {
		t.Fatalf("status query answered %d Range %q, want 308 with a Range", status.Status, status.RangeHeader)
	}
	p++
	if p < atKill || p >= total || p%(256*kib) != 0 {
		t.Errorf("resume offset %d: want a 256 KiB multiple in [%d, %d)", p, atKill, total)
	}
	if want := fmt.Sprintf("bytes %d-%d/%d", p, total-1, total); final.ContentRange != want || final.BytesIn != total-p {
		t.Errorf("rerun sent %q (%d bytes), want %q (%d bytes): persisted bytes re-sent",
			final.ContentRange, final.BytesIn, want, total-p)
	}
}

// testGsutil: gsutil's JSON API is https-only, so fakegcs runs with -tls
// (offering h2 as GCS does) and the boto config makes gsutil trust its
// certificate (ca_certificates_file). gsutil downloads from the object's
// mediaLink verbatim, so this also proves mediaLink is right.
func testGsutil(t *testing.T, bin, gsutil string) {
	srv := startFakeGCS(t, bin, "-tls", "-rewrite-per-call", "1M")
	dir := t.TempDir()
	env := gsutilEnv(t, dir, srv)
	big, small := randomBytes(5, 2*mib+777), randomBytes(6, 1000)
	writeFile(t, dir, "big.bin", big)
	writeFile(t, dir, "small.bin", small)

	run(t, env, dir, nil, gsutil, "-q", "cp", "big.bin", "small.bin", "gs://bkt/")
	sess := onlySession(t, srv.stats(t), "big.bin")
	if sess.DeclaredSize != int64(len(big)) || sess.State != "finalized" {
		t.Errorf("big.bin session = %+v, want a finalized resumable upload of %d bytes", sess, len(big))
	}
	assertBytes(t, "stored big.bin", srv.object(t, "big.bin"), big)
	assertBytes(t, "stored small.bin", srv.object(t, "small.bin"), small)

	out := mkdir(t, dir, "out")
	run(t, env, dir, nil, gsutil, "-q", "cp", "gs://bkt/big.bin", "gs://bkt/small.bin", out)
	assertBytes(t, "gsutil download of big.bin", readFile(t, out, "big.bin"), big)
	assertBytes(t, "gsutil download of small.bin", readFile(t, out, "small.bin"), small)
	ls := run(t, env, dir, nil, gsutil, "ls", "gs://bkt")
	assertLines(t, "gsutil ls", ls, "gs://bkt/big.bin", "gs://bkt/small.bin")
	testServerCopy(t, srv, "gsutil", big, func() {
		run(t, env, dir, nil, gsutil, "-q", "cp", "gs://bkt/big.bin", "gs://bkt/copies/gsutil.bin")
	})
	logProtocols(t, srv)
}

// testServerCopy runs copy, a client's server-side copy of big.bin (data) to
// copies/CLIENT.bin, on a server that rewrites 1 MiB per call: the client
// must follow the rewriteTokens to the end, every call answered 200, and
// the copy must hold the source's bytes.
func testServerCopy(t *testing.T, srv *standalone, client string, data []byte, copy func()) {
	t.Helper()
	before := srv.stats(t).Requests["storage.objects.rewrite"]
	copy()
	calls := srv.stats(t).Requests["storage.objects.rewrite"] - before
	if want := (len(data) + mib - 1) / mib; calls != want {
		t.Errorf("%s copy: %d rewrite calls, want %d (1 MiB each)", client, calls, want)
	}
	for _, r := range srv.log(t) {
		if r.Op == "storage.objects.rewrite" && r.Status != 200 {
			t.Errorf("%s copy: a rewrite call answered %d", client, r.Status)
		}
	}
	assertBytes(t, client+" copy", srv.object(t, "copies/"+client+".bin"), data)
}

// gcloudEnv writes a private gcloud configuration from
// testdata/realclients/gcloud.config (faster than `gcloud config set`) and
// returns the environment to run gcloud or gsutil in: nothing from the
// user's own gcloud, boto, Google credentials or proxies leaks in. Over
// https gcloud trusts srv's certificate.
func gcloudEnv(t *testing.T, dir string, srv *standalone) []string {
	cfg := filepath.Join(dir, "gcloud")
	writeFile(t, cfg, "active_config", []byte("default")) // read verbatim: no newline
	writeFile(t, cfg, "gce", []byte("False"))             // skip the GCE metadata probe
	writeTemplate(t, filepath.Join(cfg, "configurations", "config_default"), "gcloud.config",
		map[string]string{"Endpoint": srv.url, "CACerts": srv.certFile})
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		k = strings.ToUpper(k)
		return k == "HOME" || k == "STORAGE_EMULATOR_HOST" || strings.HasSuffix(k, "_PROXY") ||
			strings.HasPrefix(k, "CLOUDSDK_") || strings.HasPrefix(k, "BOTO_") || strings.HasPrefix(k, "GOOGLE_") ||
			strings.HasSuffix(k, "_CA_BUNDLE") || strings.HasPrefix(k, "SSL_CERT_")
	})
	// `gcloud storage` verifies with python-requests, for which
	// REQUESTS_CA_BUNDLE overrides the session's core/custom_ca_certs_file: set
	// in a machine's environment (to the system's bundle), it made gcloud
	// refuse fakegcs's certificate and retry until killed.
	return append(env, "HOME="+dir, "CLOUDSDK_CONFIG="+cfg, "CLOUDSDK_CORE_DISABLE_PROMPTS=1",
		"NO_PROXY=127.0.0.1,localhost", "BOTO_CONFIG="+filepath.Join(dir, "boto"), "REQUESTS_CA_BUNDLE="+srv.certFile)
}

// gsutilEnv adds testdata/realclients/boto.config for an https endpoint;
// gsutil runs through gcloud's wrapper, so it needs gcloud's config too.
func gsutilEnv(t *testing.T, dir string, srv *standalone) []string {
	host, port, ok := strings.Cut(strings.TrimPrefix(srv.url, "https://"), ":")
	if !ok {
		t.Fatalf("fakegcs URL %q is not https://host:port", srv.url)
	}
	writeTemplate(t, filepath.Join(dir, "boto"), "boto.config",
		map[string]string{"Host": host, "Port": port, "StateDir": filepath.Join(dir, "gsutil-state"), "CACerts": srv.certFile})
	return gcloudEnv(t, dir, srv)
}

// writeTemplate fills testdata/realclients/name into path.
func writeTemplate(t *testing.T, path, name string, data map[string]string) {
	t.Helper()
	tmpl, err := template.ParseFiles(filepath.Join("testdata", "realclients", name))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Dir(path), filepath.Base(path), b.Bytes())
}

// needTool finds a client on PATH. Without it the test skips, except on CI,
// whose machine image ships the Cloud SDK: there a missing client is a
// failure, so the test cannot pass by not running.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not on PATH, and CI=true: CI must run the real-client tests", name)
	}
	t.Skipf("%s is not on PATH (install the Google Cloud SDK to run the real-client tests)", name)
	return ""
}

// buildFakeGCS builds cmd/fakegcs into a temporary directory.
func buildFakeGCS(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "fakegcs")
	cmd := exec.Command(goBin, "build", "-o", bin, "github.com/gcsput/gcsput/cmd/fakegcs")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/fakegcs: %v\n%s", err, out)
	}
	return bin
}

// standalone is a running cmd/fakegcs and a client for its control API.
type standalone struct {
	url      string
	certFile string // its certificate (PEM), when it serves https
	client   *http.Client
}

// startFakeGCS runs the fakegcs program with bucket "bkt", reads its URL from
// the first line of stdout, and at cleanup stops it with SIGTERM and
// checks that it exits 0.
func startFakeGCS(t *testing.T, bin string, args ...string) *standalone {
	t.Helper()
	certFile := filepath.Join(t.TempDir(), "cert.pem")
	cmd := exec.Command(bin, append([]string{"-bucket", rcBucket, "-cert-out", certFile}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("fakegcs did not stop cleanly on SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("fakegcs still running 10s after SIGTERM")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading fakegcs's URL: %v\n%s", err, stderr.String())
	}
	s := &standalone{url: strings.TrimSpace(line), certFile: certFile, client: &http.Client{Timeout: 30 * time.Second}}
	if strings.HasPrefix(s.url, "https://") {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(readFile(t, filepath.Dir(certFile), "cert.pem")) {
			t.Fatal("fakegcs -cert-out wrote no usable certificate")
		}
		s.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	return s
}

// get fetches path from fakegcs and decodes JSON into v (raw bytes if v is
// a *[]byte).
func (s *standalone) get(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := s.client.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v %.300s", path, resp.StatusCode, err, body)
	}
	if b, ok := v.(*[]byte); ok {
		*b = body
	} else if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// names lists the object names under prefix.
func (s *standalone) names(t *testing.T, prefix string) []string {
	var l struct{ Items []struct{ Name string } }
	s.get(t, "/storage/v1/b/"+rcBucket+"/o?prefix="+url.QueryEscape(prefix), &l)
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Name)
	}
	return out
}

func (s *standalone) stats(t *testing.T) (st fakegcs.Stats) { s.get(t, "/_fakegcs/stats", &st); return }

func (s *standalone) log(t *testing.T) (l []fakegcs.Request) { s.get(t, "/_fakegcs/log", &l); return }

// object reads an object's bytes straight from fakegcs.
func (s *standalone) object(t *testing.T, name string) (b []byte) {
	s.get(t, "/download/storage/v1/b/"+rcBucket+"/o/"+name+"?alt=media", &b)
	return b
}

// inject adds a fault over the control API.
func (s *standalone) inject(t *testing.T, f fakegcs.Fault) {
	t.Helper()
	b, _ := json.Marshal(f)
	resp, err := s.client.Post(s.url+"/_fakegcs/faults", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("injecting %s: status %d", f, resp.StatusCode)
	}
}

// waitPersisted polls until object's newest session has persisted at least
// n bytes and returns how many it has.
func (s *standalone) waitPersisted(t *testing.T, object string, n int64) int64 {
	t.Helper()
	for deadline := time.Now().Add(cmdTimeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, sess := range s.stats(t).Sessions {
			if sess.Object == object && sess.Persisted >= n {
				return sess.Persisted
			}
		}
	}
	t.Fatalf("%s: %d bytes never persisted", object, n)
	return 0
}

// onlySession returns the one resumable session of object.
func onlySession(t *testing.T, st fakegcs.Stats, object string) fakegcs.SessionStats {
	t.Helper()
	var found []fakegcs.SessionStats
	for _, s := range st.Sessions {
		if s.Object == object {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d upload sessions for %s, want 1: %+v", len(found), object, found)
	}
	return found[0]
}

// command prepares a client invocation in its own process group (so a kill
// reaches the Python workers it forks), bounded by cmdTimeout.
func command(t *testing.T, env []string, dir string, stdin io.Reader, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir, cmd.Stdin = env, dir, stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), new(bytes.Buffer)
	return cmd
}

// run runs a client and returns its stdout; its stderr (progress, warnings)
// is shown only when it fails.
func run(t *testing.T, env []string, dir string, stdin io.Reader, name string, args ...string) string {
	t.Helper()
	cmd := command(t, env, dir, stdin, name, args...)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, cmd.Stdout, cmd.Stderr)
	}
	t.Logf("%s %s: %v", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return cmd.Stdout.(*bytes.Buffer).String()
}

// randomBytes is n reproducible pseudo-random bytes.
func randomBytes(seed byte, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(mkdir(t, dir, "."), name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func assertBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

// assertLines checks that out lists exactly want, one per line.
func assertLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	got := strings.Fields(out)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%s printed %q, want %q", what, got, want)
	}
}

// assertDescribe checks `gcloud storage objects describe --format=json`
// against the content's own size and hashes.
func assertDescribe(t *testing.T, out string, content []byte) {
	t.Helper()
	var d struct {
		Name   string `json:"name"`
		Size   int64  `json:"size"`
		MD5    string `json:"md5_hash"`
		CRC32C string `json:"crc32c_hash"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("objects describe: %v\n%s", err, out)
	}
	sum := md5.Sum(content)
	crc := binary.BigEndian.AppendUint32(nil, crc32.Checksum(content, crc32.MakeTable(crc32.Castagnoli)))
	want := fmt.Sprintf("{big.bin %d %s %s}", len(content),
		base64.StdEncoding.EncodeToString(sum[:]), base64.StdEncoding.EncodeToString(crc))
	if got := fmt.Sprintf("{%s %d %s %s}", d.Name, d.Size, d.MD5, d.CRC32C); got != want {
		t.Errorf("objects describe = %s, want %s", got, want)
	}
}
