package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// These tests run gcsput as a function against fakegcs, so the race detector sees the
// CLI's own concurrency: workers reporting progress, events and results at once.

// runIn runs gcsput in-process with ctx, pretending stderr is a terminal when tty is set.
func runIn(ctx context.Context, tty bool, args ...string) cliResult {
	return runInWith(ctx, tty, "", args...)
}

// runInWith is runIn with stdin.
func runInWith(ctx context.Context, tty bool, stdin string, args ...string) cliResult {
	var out, errb syncBuffer
	a := &app{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		isTerminal: func(io.Writer) bool { return tty }}
	code := a.run(ctx, args)
	return cliResult{code: code, stdout: out.String(), stderr: errb.String()}
}

func writeFile(t *testing.T, path string, n int) []byte {
	t.Helper()
	b := bytes.Repeat([]byte(filepath.Base(path)), n/len(filepath.Base(path))+1)[:n]
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunCopyRoundTripWithProgress(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(1 << 20)), Kind: fakegcs.KindStatus, Status: 503},
	}})
	dir := t.TempDir()
	want := map[string][]byte{}
	for i, n := range []int{0, 10, 300 << 10, 9 << 20, 2 << 20, 70000} {
		rel := filepath.Join("src", string(rune('a'+i)), "f.bin")
		want[rel] = writeFile(t, filepath.Join(dir, rel), n)
	}
	common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), fastRetry}
	up := runIn(context.Background(), true, append([]string{"cp", "-r", "-j", "4", "-v", "--chunk-size", "1MiB",
		filepath.Join(dir, "src"), "gs://bkt/x/"}, common...)...)
	if up.code != 0 {
		t.Fatalf("upload: exit %d\n%s", up.code, up.stderr)
	}
	if n := strings.Count(up.stdout, "\nuploaded ") + strings.Count(up.stdout[:min(9, len(up.stdout))], "uploaded "); n != len(want) {
		t.Errorf("%d 'uploaded' lines, want %d:\n%s", n, len(want), up.stdout)
	}
	for _, s := range []string{"100%", "MiB", "retry 1/12 in", "503 Service Unavailable", "6 files: 6 uploaded, 0 failed"} {
		if !strings.Contains(up.stderr, s) {
			t.Errorf("stderr lacks %q:\n%q", s, up.stderr)
		}
	}
	down := runIn(context.Background(), false, append([]string{"cp", "-r", "-q", "gs://bkt/x/src", filepath.Join(dir, "back")}, common...)...)
	if down.code != 0 || down.stdout != "" || down.stderr != "" {
		t.Fatalf("download -q: %+v", down)
	}
	for rel, data := range want {
		got, err := os.ReadFile(filepath.Join(dir, "back", strings.TrimPrefix(rel, "src/")))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes back, %v; want %d", rel, len(got), err, len(data))
		}
	}
}

func TestRunInterruptSessionsCancel(t *testing.T) {
	t.Parallel()
	// The chunk at 2 MiB stalls; the moment it reaches the server (2 MiB persisted), the
	// run is interrupted as Ctrl-C would interrupt it.
	ctx, cancel := context.WithCancelCause(context.Background())
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(2 << 20)), Kind: fakegcs.KindStall, Delay: time.Hour},
	}, Logf: func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			cancel(errInterrupted)
		}
	}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.bin"), 10<<20)
	common := []string{"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state")}
	r := runIn(ctx, false, append([]string{"cp", "--chunk-size", "1MiB", filepath.Join(dir, "big.bin"), "gs://bkt/big.bin"}, common...)...)
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "1 unfinished transfer saved: 'gcsput resume'") {
		t.Fatalf("interrupted cp: %+v", r)
	}

	ls := runIn(context.Background(), false, "sessions", "ls", "--state-dir", filepath.Join(dir, "state"))
	if ls.code != 0 || !strings.Contains(ls.stdout, "upload") || !strings.Contains(ls.stdout, "2.0 MiB / 10.0 MiB") ||
		!strings.Contains(ls.stdout, "big.bin -> gs://bkt/big.bin") {
		t.Fatalf("sessions ls: %+v", ls)
	}
	bad := runIn(context.Background(), false, append([]string{"sessions", "cancel", "gs://bkt/other"}, common...)...)
	if bad.code != exitUsage || !strings.Contains(bad.stderr, `no saved transfer has source or destination "gs://bkt/other"`) {
		t.Errorf("cancel of an unknown transfer: %+v", bad)
	}
	c := runIn(context.Background(), false, append([]string{"sessions", "cancel", "gs://bkt/big.bin"}, common...)...)
	if c.code != 0 || !strings.Contains(c.stdout, "cancelled upload ") {
		t.Fatalf("sessions cancel: %+v", c)
	}
	if s, _ := srv.LastSession("bkt", "big.bin"); s.State != "cancelled" {
		t.Errorf("server session state %q, want cancelled", s.State)
	}
	if ls := runIn(context.Background(), false, "sessions", "ls", "--json", "--state-dir", filepath.Join(dir, "state")); ls.stdout != "" {
		t.Errorf("sessions remain after cancel: %q", ls.stdout)
	}
	if r := runIn(context.Background(), false, append([]string{"resume"}, common...)...); r.code != 0 || !strings.Contains(r.stderr, "nothing to resume") {
		t.Errorf("resume with nothing saved: %+v", r)
	}
}

func TestDemoInProcess(t *testing.T) {
	t.Parallel()
	r := runIn(context.Background(), true, "demo", "--size", "5MiB", "--chunk-size", "512KiB")
	if r.code != 0 {
		t.Fatalf("demo: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for _, s := range []string{
		"⚡ fakegcs injected: 503 Service Unavailable when the session is created",
		"⚡ fakegcs injected: 503 Service Unavailable twice on a chunk",
		"⚡ fakegcs injected: 429 Too Many Requests with Retry-After: 1",
		"⚡ fakegcs injected: connection reset before a chunk is read",
		"⚡ fakegcs injected: 308 that acknowledges only 256.0 KiB of a chunk",
		"⚡ fakegcs injected: connection reset after 384.0 KiB of a chunk, of which 256.0 KiB is persisted",
		"retry 1/12 in 1s: 429 Too Many Requests (Retry-After: 1)",
		"Interrupting the upload at", "Resumed from", "the server will cut the connection after sending 2.0 MiB", "(the bytes already written)",
		"Verified: the downloaded copy is identical to the original (5242880 bytes)",
	} {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("stderr lacks %q", s)
		}
	}
	for _, s := range []string{"Summary", "5.0 MiB, verified byte for byte", "short-308 ×1"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, r.stdout)
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", r.stderr)
	}
}

func TestRunSourcesFromStdinAndEventLog(t *testing.T) {
	t.Parallel()
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(256 << 10)),
			Kind: fakegcs.KindReset, AfterBytes: 100 << 10},
	}})
	dir := t.TempDir()
	a := writeFile(t, filepath.Join(dir, "one", "a.txt"), 100)
	b := writeFile(t, filepath.Join(dir, "two", "b.bin"), 9<<20)
	log := filepath.Join(dir, "events.ndjson")
	missing := filepath.Join(dir, "gone.txt")
	list := filepath.Join(dir, "one", "a.txt") + "\n\n" + missing + "\n" + filepath.Join(dir, "two", "b.bin") + "\n"
	r := runInWith(context.Background(), false, list, "cp", "-I", "--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "s"),
		"--chunk-size", "256KiB", "--log", log, fastRetry, "gs://bkt/list/")
	// The missing path fails; the others go up; the exit code says some failed.
	if r.code != exitFailed || !strings.Contains(r.stderr, "gcsput: failed: "+missing+" -> gs://bkt/list/: "+missing+": no such file or directory") {
		t.Fatalf("cp -I with a missing path: %+v", r)
	}
	for name, want := range map[string][]byte{"list/a.txt": a, "list/b.bin": b} {
		if got, _, err := srv.Object("bkt", name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		kinds[ev["event"].(string)]++
		if typ, ok := ev["type"]; ok && typ == "" {
			t.Errorf("log line with an empty type: %s", line)
		}
	}
	for _, k := range []string{"started", "chunk", "retry", "status", "resumed", "finished", "result", "summary"} {
		if kinds[k] == 0 {
			t.Errorf("no %q event in the log: %v", k, kinds)
		}
	}
	if kinds["result"] != 3 || kinds["chunk"] < 36 {
		t.Errorf("events %v: want 3 results and a chunk event per 256 KiB", kinds)
	}
	for _, m := range regexp.MustCompile(`upload_id=[^&"\s\\]*`).FindAllString(string(raw), -1) {
		if m != "upload_id=REDACTED" {
			t.Errorf("the log holds a session ID: %s", m)
		}
	}
}
