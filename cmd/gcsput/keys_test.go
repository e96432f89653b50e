package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/gcsput/gcsput/fakegcs"
)

// A test key and another: 32 bytes each, in base64 as the flags take them.
var (
	e2eKey      = bytes.Repeat([]byte{0xc5}, 32)
	e2eKeyB64   = base64.StdEncoding.EncodeToString(e2eKey)
	e2eOther    = bytes.Repeat([]byte{0x3e}, 32)
	e2eOtherB64 = base64.StdEncoding.EncodeToString(e2eOther)
)

func e2eSHA(k []byte) string {
	s := sha256.Sum256(k)
	return base64.StdEncoding.EncodeToString(s[:])
}

// runEnv is run with more environment.
func (e *e2e) runEnv(extra []string, args ...string) cliResult {
	e.t.Helper()
	cmd, out, errb := e.command(nil, args...)
	cmd.Env = append(cmd.Env, extra...)
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		e.t.Fatalf("gcsput %v: %v", args, err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
}

// mustEnv is must with more environment.
func (e *e2e) mustEnv(extra []string, args ...string) cliResult {
	e.t.Helper()
	r := e.runEnv(extra, args...)
	if r.code != 0 {
		e.t.Fatalf("gcsput %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	return r
}

// keyFile writes a key file (mode 0600) and returns its path.
func (e *e2e) keyFile(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// assertNoKey fails if the key (base64 or raw) is in any file under dir or in texts.
func assertNoKey(t *testing.T, key []byte, dir string, texts ...string) {
	t.Helper()
	b64 := []byte(base64.StdEncoding.EncodeToString(key))
	for i, s := range texts {
		if bytes.Contains([]byte(s), b64) || bytes.Contains([]byte(s), key) {
			t.Errorf("output %d holds the key:\n%s", i, s)
		}
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, b64) || bytes.Contains(b, key) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
}

// A CSEK round trip through the binary: a small file (one request), a large one
// (resumable, many chunks), and a composite upload go up under --encryption-key-file;
// fakegcs binds each object (and each component) to the key's SHA256, and every request
// that carried object bytes carried the key. They come down with --decryption-keys
// (from the environment), the large one in slices, each range with the key. Without a
// key, or with another, the read is refused. The key is in no state file, no --log
// line, no output.
func TestE2ECSEKRoundTrip(t *testing.T) {
	e := newE2E(t)
	small := e.write("up/small.bin", 1000)
	large := e.write("up/large.bin", 9<<20)
	comp := e.write("comp.bin", 3<<20)
	keyFile := e.keyFile("key.txt", e2eKeyB64+"\n")
	logFile := filepath.Join(e.dir, "events.ndjson")
	up := e.must(nil, "cp", "-r", "--json", "--chunk-size", "256KiB", "--encryption-key-file", keyFile, "--log", logFile, fastRetry, "up", "gs://bkt/")
	upc := e.must(nil, "cp", "--parallel-upload", "on", "--parallel-threshold", "1MiB", "--component-size", "1MiB",
		"--encryption-key-file", keyFile, "--log", logFile, fastRetry, "comp.bin", "gs://bkt/comp.bin")
	for _, name := range []string{"up/small.bin", "up/large.bin", "comp.bin"} {
		a, err := e.srv.Attrs("bkt", name)
		if err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) {
			t.Fatalf("%s: key hash %q (%v), want the key's", name, a.CustomerKeySHA256, err)
		}
	}
	if a, _ := e.srv.Attrs("bkt", "comp.bin"); a.ComponentCount < 3 {
		t.Fatalf("comp.bin has %d components: not a composite upload", a.ComponentCount)
	}
	chunks := 0
	for _, r := range e.srv.Log() {
		carries := r.Op == "storage.objects.insert" || r.Op == "storage.objects.compose"
		if carries && r.KeySHA256 != e2eSHA(e2eKey) {
			t.Errorf("%s %s %s carried no key", r.Op, r.Phase, r.ContentRange)
		}
		if r.Phase == fakegcs.PhaseChunk {
			chunks++
		}
	}
	if chunks < 30 {
		t.Errorf("%d chunks: the large file did not go up in many", chunks)
	}

	e.srv.ResetStats()
	env := []string{"GCSPUT_DECRYPTION_KEYS=" + e2eOtherB64 + "," + e2eKeyB64}
	down := e.mustEnv(env, "cp", "-r", "--slice-threshold", "1MiB", "--max-slices", "4", "--log", logFile, fastRetry, "gs://bkt/up", "gs://bkt/comp.bin", "down/")
	for name, want := range map[string][]byte{"up/small.bin": small, "up/large.bin": large, "comp.bin": comp} {
		if got, err := os.ReadFile(filepath.Join(e.dir, "down", name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("down/%s: %d bytes (%v), not the file uploaded", name, len(got), err)
		}
	}
	ranges := 0
	for _, r := range e.srv.Log() {
		if r.Phase == fakegcs.PhaseMedia {
			if r.KeySHA256 != e2eSHA(e2eKey) {
				t.Errorf("GET %s %s carried no key", r.Object, r.Range)
			}
			if r.Object == "up/large.bin" && r.Range != "" {
				ranges++
			}
		}
	}
	if ranges < 2 {
		t.Errorf("large.bin came down in %d ranged GETs, want slices", ranges)
	}

	bare := e.run(nil, "cp", fastRetry, "gs://bkt/up/small.bin", "bare.bin")
	if bare.code != exitFailed || !strings.Contains(bare.stderr, "The target object is encrypted by a customer-supplied encryption key.") {
		t.Errorf("read without a key: exit %d\n%s", bare.code, bare.stderr)
	}
	wrong := e.run(nil, "cp", "--decryption-keys", e2eOtherB64, fastRetry, "gs://bkt/up/small.bin", "wrong.bin")
	if wrong.code != exitFailed || !strings.Contains(wrong.stderr, "encrypted with a customer-supplied encryption key that was not given (its SHA256 begins "+e2eSHA(e2eKey)[:8]+")") {
		t.Errorf("read with another key: exit %d\n%s", wrong.code, wrong.stderr)
	}
	for _, f := range []string{"bare.bin", "wrong.bin"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err == nil {
			t.Errorf("a refused read left %s", f)
		}
	}
	logText, _ := os.ReadFile(logFile)
	assertNoKey(t, e2eKey, e.state, up.stdout, up.stderr, upc.stdout, upc.stderr, down.stdout, down.stderr,
		bare.stderr, wrong.stderr, string(logText))
	assertNoKey(t, e2eOther, e.state, down.stdout, down.stderr, wrong.stderr, string(logText))
}

// An interrupted CSEK upload is saved with the key's SHA256, not the key: 'gcsput resume'
// without the key refuses it, naming the SHA256's first characters, and keeps the record;
// with the key (from $GCSPUT_ENCRYPTION_KEY) it continues the same session to an object
// bound to the key.
func TestE2ECSEKResumeNeedsTheKey(t *testing.T) {
	e := newE2E(t)
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
	data := e.write("big.bin", 12<<20)
	cmd, out, errb := e.command(nil, "cp", "--chunk-size", "1MiB", fastRetry, "big.bin", "gs://bkt/big.bin")
	cmd.Env = append(cmd.Env, "GCSPUT_ENCRYPTION_KEY="+e2eKeyB64)
	e.startThenWait(cmd, "big.bin", 3<<20, errb)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d after SIGINT\n%s\n%s", code, out, errb)
	}
	first, _ := e.srv.LastSession("bkt", "big.bin")
	throttle.Remove()
	assertNoKey(t, e2eKey, e.state, out.String(), errb.String())

	bare := e.run(nil, "resume")
	prefix := e2eSHA(e2eKey)[:8]
	if bare.code == 0 || !strings.Contains(bare.stderr, "customer-supplied encryption key whose SHA256 begins "+prefix) {
		t.Fatalf("resume without the key: exit %d\n%s", bare.code, bare.stderr)
	}
	if ls := e.must(nil, "sessions", "ls"); !strings.Contains(ls.stdout+ls.stderr, "big.bin") {
		t.Fatalf("the record is gone after the refused resume: %+v", ls)
	}
	r := e.mustEnv([]string{"GCSPUT_ENCRYPTION_KEY=" + e2eKeyB64}, "resume", "--json")
	if files, _ := jsonLines(t, r.stdout); files["gs://bkt/big.bin"].Status != "resumed" {
		t.Fatalf("resume with the key: %s", r.stdout)
	}
	final, _ := e.srv.LastSession("bkt", "big.bin")
	a, err := e.srv.Attrs("bkt", "big.bin")
	if err != nil || final.Seq != first.Seq || a.CustomerKeySHA256 != e2eSHA(e2eKey) || !bytes.Equal(e.object("big.bin"), data) {
		t.Fatalf("resumed object: session %d (was %d), key hash %q, err %v", final.Seq, first.Seq, a.CustomerKeySHA256, err)
	}
	assertNoKey(t, e2eKey, e.state, bare.stderr, r.stdout, r.stderr)
}

// A requester-pays bucket without --billing-project: one error for the whole batch, naming
// the flag (exit 2), not one per file. With gsutil's global -u, or --billing-project, every
// request names the project, and fakegcs bills it for each.
func TestE2ERequesterPays(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.CreateBucket("rpbkt"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.SetRequesterPays("rpbkt", true); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for i, n := range []int{10, 2000, 3 << 20} {
		name := "data/" + string(rune('a'+i))
		want[name] = bytes.Repeat([]byte{byte(i + 1)}, n)
		if _, err := e.srv.PutObject("rpbkt", name, want[name]); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"cp", "-r", fastRetry, "gs://rpbkt/data", "nobill/"},
		{"cp", fastRetry, "gs://rpbkt/data/a", "gs://rpbkt/data/b", "gs://rpbkt/data/c", "nobill/"},
		{"ls", "gs://rpbkt/data/"},
	} {
		r := e.run(nil, args...)
		if r.code != exitUsage || strings.Count(r.stderr, "--billing-project") != 1 ||
			!strings.Contains(r.stderr, "requester pays") || strings.Contains(r.stderr, "failed:") {
			t.Errorf("%v without a billing project: exit %d, want 2 and one error naming --billing-project\n%s", args, r.code, r.stderr)
		}
	}
	e.srv.ResetStats()
	e.must(nil, "-u", "payer", "cp", "-r", fastRetry, "gs://rpbkt/data", "billed/")
	e.must(nil, "cp", "--billing-project", "payer", fastRetry, "billed/data/b", "gs://rpbkt/back/b")
	for name, b := range want {
		if got, err := os.ReadFile(filepath.Join(e.dir, "billed", name)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("billed/%s: %d bytes (%v)", name, len(got), err)
		}
	}
	st := e.srv.Stats()
	total := 0
	for _, n := range st.Requests {
		total += n
	}
	if st.Billed["payer"] != total || total == 0 || len(st.Billed) != 1 {
		t.Errorf("billed %v for %d requests: want every request billed to payer", st.Billed, total)
	}
}

// The official Go client (ObjectHandle.Key) and gcloud storage (--decryption-keys) read an
// object gcsput wrote under a CSEK, over fakegcs; without the key both are refused.
func TestE2ECSEKReadByRealClients(t *testing.T) {
	e := newE2E(t)
	data := e.write("obj.bin", 2<<20+5)
	e.mustEnv([]string{"GCSPUT_ENCRYPTION_KEY=" + e2eKeyB64}, "cp", fastRetry, "obj.bin", "gs://bkt/obj.bin")

	ctx := context.Background()
	c, err := storage.NewClient(ctx, option.WithEndpoint(e.srv.Endpoint()), option.WithoutAuthentication(), option.WithHTTPClient(e.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.Bucket("bkt").Object("obj.bin")
	if _, err := o.NewReader(ctx); err == nil {
		t.Error("the official client read the CSEK object without its key")
	}
	rd, err := o.Key(e2eKey).NewReader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd)
	rd.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("official client with the key: %d bytes, %v", len(got), err)
	}
	attrs, err := o.Key(e2eKey).Attrs(ctx)
	if err != nil || attrs.CustomerKeySHA256 != e2eSHA(e2eKey) || attrs.CRC32C == 0 {
		t.Fatalf("official client attrs: %+v, %v", attrs, err)
	}

	gcloud, err := exec.LookPath("gcloud")
	if err != nil {
		t.Skip("gcloud is not installed: its half of the test is skipped")
	}
	cfg := filepath.Join(e.dir, "gcloud")
	conf := "[api_endpoint_overrides]\nstorage = " + e.srv.URL() + "/\n[auth]\ndisable_credentials = true\n[core]\nproject = fakeproj\n" +
		"disable_usage_reporting = true\n[component_manager]\ndisable_update_check = true\n"
	for name, body := range map[string]string{"active_config": "default", "gce": "False", "configurations/config_default": conf} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(cfg, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gc := func(args ...string) ([]byte, error) {
		cmd := exec.Command(gcloud, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.dir, "CLOUDSDK_CONFIG=" + cfg, "CLOUDSDK_CORE_DISABLE_PROMPTS=1", "NO_PROXY=127.0.0.1,localhost"}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, &gcloudError{err: err, stderr: stderr.String()}
		}
		return out, nil
	}
	if _, err := gc("storage", "cat", "gs://bkt/obj.bin"); err == nil {
		t.Error("gcloud storage cat read the CSEK object without its key")
	}
	out, err := gc("storage", "cat", "--decryption-keys="+e2eKeyB64, "gs://bkt/obj.bin")
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("gcloud storage cat --decryption-keys: %d bytes, %v", len(out), err)
	}
	// Their own copies (rewrite) of what gcsput wrote, under the key, read back by gcsput.
	if _, err := c.Bucket("bkt").Object("official-copy.bin").Key(e2eKey).CopierFrom(o.Key(e2eKey)).Run(ctx); err != nil {
		t.Fatalf("the official client's copy: %v", err)
	}
	if _, err := gc("storage", "cp", "--decryption-keys="+e2eKeyB64, "--encryption-key="+e2eKeyB64, "gs://bkt/obj.bin", "gs://bkt/gcloud-copy.bin"); err != nil {
		t.Fatalf("gcloud storage cp of the CSEK object: %v", err)
	}
	for _, name := range []string{"official-copy.bin", "gcloud-copy.bin"} {
		r := e.mustEnv([]string{"GCSPUT_DECRYPTION_KEYS=" + e2eKeyB64}, "cat", "gs://bkt/"+name)
		if r.stdout != string(data) {
			t.Errorf("%s: gcsput read %d bytes, want %d", name, len(r.stdout), len(data))
		}
		if a, err := e.srv.Attrs("bkt", name); err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) {
			t.Errorf("%s: key hash %q, %v", name, a.CustomerKeySHA256, err)
		}
	}
}

type gcloudError struct {
	err    error
	stderr string
}

func (e *gcloudError) Error() string { return e.err.Error() + ": " + e.stderr }

// --encryption-key takes a Cloud KMS key name too (kmsKeyName); a key that is not one is
// a usage error that never quotes it; stat shows a CSEK object's key SHA256, and its
// CRC32C only with the key.
func TestE2EEncryptionKeyFlags(t *testing.T) {
	e := newE2E(t)
	e.write("f.bin", 5000)
	const kms = "projects/p/locations/global/keyRings/r/cryptoKeys/k"
	e.must(nil, "cp", "--encryption-key", kms, "f.bin", "gs://bkt/kms.bin")
	if a, err := e.srv.Attrs("bkt", "kms.bin"); err != nil || a.KMSKeyName != kms || a.CustomerKeySHA256 != "" {
		t.Fatalf("kms.bin: kmsKeyName %q, key hash %q (%v)", a.KMSKeyName, a.CustomerKeySHA256, err)
	}
	if r := e.must(nil, "stat", "gs://bkt/kms.bin"); !strings.Contains(r.stdout, "KMS key:") || !strings.Contains(r.stdout, kms) {
		t.Errorf("stat of kms.bin:\n%s", r.stdout)
	}
	const bad = "not-a-key!!secret-looking"
	for _, args := range [][]string{
		{"cp", "--encryption-key", bad, "f.bin", "gs://bkt/x"},
		{"cp", "--decryption-keys", e2eKeyB64 + "," + bad, "gs://bkt/kms.bin", "x"},
		{"cp", "--encryption-key", base64.StdEncoding.EncodeToString([]byte("sixteen byte key")), "f.bin", "gs://bkt/x"},
		{"cp", "--encryption-key", e2eKeyB64, "--encryption-key-file", "f.bin", "f.bin", "gs://bkt/x"},
	} {
		r := e.run(nil, args...)
		if r.code != exitUsage || strings.Contains(r.stderr, bad) || strings.Contains(r.stderr, e2eKeyB64) || !strings.Contains(r.stderr, "key") {
			t.Errorf("%v: exit %d, want 2 with an error that does not quote the key\n%s", args, r.code, r.stderr)
		}
	}
	e.mustEnv([]string{"GCSPUT_ENCRYPTION_KEY=" + e2eKeyB64}, "cp", "f.bin", "gs://bkt/csek.bin")
	bare := e.must(nil, "stat", "--json", "gs://bkt/csek.bin")
	keyed := e.must(nil, "stat", "--json", "--decryption-keys", e2eKeyB64, "gs://bkt/csek.bin")
	if !strings.Contains(bare.stdout, `"encryption_key_sha256":"`+e2eSHA(e2eKey)+`"`) || strings.Contains(bare.stdout, `"crc32c"`) {
		t.Errorf("stat without the key: %s", bare.stdout)
	}
	if !strings.Contains(keyed.stdout, `"crc32c"`) {
		t.Errorf("stat with the key shows no crc32c: %s", keyed.stdout)
	}
}

// A copy between gs:// locations of an object under a customer-supplied key
// sends the key as the copy source's on every rewrite call (fakegcs refuses a
// call without it) and writes the destination under --encryption-key; the
// copy reads back only with the key, byte-exact. Without the key the copy is
// refused and nothing is written.
func TestE2ECSEKCopyBetweenBuckets(t *testing.T) {
	e := newCopyE2E(t, 1<<20, nil)
	src := e.write("src.bin", 3<<20+17)
	keyFile := e.keyFile("key.txt", e2eKeyB64+"\n")
	e.must(nil, "cp", "--encryption-key-file", keyFile, fastRetry, "src.bin", "gs://bkt/src.bin")
	if r := e.run(nil, "cp", fastRetry, "gs://bkt/src.bin", "gs://bkt/nokey.bin"); r.code == 0 {
		t.Fatalf("a copy of a CSEK object without its key succeeded:\n%s", r.stderr)
	}
	if _, err := e.srv.Attrs("bkt", "nokey.bin"); err == nil {
		t.Errorf("a refused copy wrote its destination")
	}
	e.must(nil, "cp", "--encryption-key-file", keyFile, fastRetry, "gs://bkt/src.bin", "gs://bkt/copy.bin")
	a, err := e.srv.Attrs("bkt", "copy.bin")
	if err != nil || a.CustomerKeySHA256 != e2eSHA(e2eKey) {
		t.Fatalf("copy.bin: key hash %q (%v), want the key's", a.CustomerKeySHA256, err)
	}
	calls := 0
	for _, r := range e.srv.Log() {
		if r.Op == "storage.objects.rewrite" && r.Status == 200 {
			calls++
		}
	}
	if calls < 4 {
		t.Errorf("%d rewrite calls answered 200; want the 3 MiB copy in several 1 MiB calls", calls)
	}
	got := e.must(nil, "cat", "--decryption-keys-file", keyFile, "gs://bkt/copy.bin")
	if got.stdout != string(src) {
		t.Errorf("copy.bin read back %d bytes, want the source's %d", len(got.stdout), len(src))
	}
}

// A gs→gs copy into a requester-pays bucket without a billing project: the rewrite's first
// call (with no token yet) is refused, and that refusal is one error naming the flag (exit 2),
// with the server's message intact in stderr and in --json, not one failure per file.
func TestE2ERequesterPaysCopyInto(t *testing.T) {
	e := newE2E(t)
	if err := e.srv.CreateBucket("rpbkt"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.SetRequesterPays("rpbkt", true); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"src/a", "src/b", "src/c"} {
		if _, err := e.srv.PutObject("bkt", name, []byte("data of "+name)); err != nil {
			t.Fatal(err)
		}
	}
	r := e.run(nil, "cp", "-r", fastRetry, "gs://bkt/src", "gs://rpbkt/dst")
	if r.code != exitUsage || strings.Count(r.stderr, "--billing-project") != 1 ||
		!strings.Contains(r.stderr, "requester pays") || strings.Contains(r.stderr, "REDACTED") || strings.Contains(r.stderr, "failed:") {
		t.Errorf("cp -r gs→gs into a requester-pays bucket: exit %d, want 2 and one error naming --billing-project\n%s", r.code, r.stderr)
	}
	r = e.run(nil, "cp", "--json", fastRetry, "gs://bkt/src/a", "gs://rpbkt/dst/a")
	if r.code != exitUsage || strings.Contains(r.stdout+r.stderr, "REDACTED") ||
		!strings.Contains(r.stdout, "Bucket is a requester pays bucket but no user project provided") {
		t.Errorf("cp --json gs→gs into a requester-pays bucket: exit %d, want 2 and GCS's message unchanged\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if names, err := e.srv.ObjectNames("rpbkt"); err != nil || len(names) != 0 {
		t.Errorf("objects in the requester-pays bucket: %v (%v), want none", names, err)
	}
}
