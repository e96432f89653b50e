package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
)

// A composite upload cut short by Ctrl-C while its third component is in
// flight: 'sessions ls' shows it with its components, 'resume' finishes it
// sending only what the server lacks, and no component is left behind.
func TestRunCompositeInterruptAndResume(t *testing.T) {
	t.Parallel()
	// One component at a time (-j 1): the second chunk of the third component stalls, and
	// the moment it reaches the server the run is interrupted.
	ctx, cancel := context.WithCancelCause(context.Background())
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(256 << 10)), Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour},
	}, Logf: func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
			cancel(errInterrupted)
		}
	}})
	dir := t.TempDir()
	data := writeFile(t, filepath.Join(dir, "big.bin"), 2<<20)
	state := filepath.Join(dir, "state")
	common := []string{"--endpoint", srv.URL(), "--state-dir", state, fastRetry}
	compose := []string{"--parallel-threshold", "1MiB", "--component-size", "512KiB", "--chunk-size", "256KiB"}
	r := runIn(ctx, false, append(append([]string{"cp", "-j", "1", filepath.Join(dir, "big.bin"), "gs://bkt/big.bin"}, compose...), common...)...)
	notice := "gcsput: warning: gs://bkt: large files are uploaded as composite objects: they carry a CRC32C but no MD5 (--parallel-upload off to avoid)\n"
	if r.code != exitInterrupted || !strings.HasPrefix(r.stderr, notice) {
		t.Fatalf("interrupted cp: %+v", r)
	}
	ls := runIn(context.Background(), false, "sessions", "ls", "--state-dir", state)
	if ls.code != 0 || !strings.Contains(ls.stdout, "big.bin -> gs://bkt/big.bin (composite 2/4 components)\n") {
		t.Fatalf("sessions ls: %+v", ls)
	}
	var s sessionJSON
	js := runIn(context.Background(), false, "sessions", "ls", "--json", "--state-dir", state)
	if err := json.Unmarshal([]byte(js.stdout), &s); err != nil || s.Components != 4 || s.ComponentsDone != 2 || s.Offset != 2*512<<10+256<<10 {
		t.Fatalf("sessions ls --json: %q, %v", js.stdout, err)
	}
	res := runIn(context.Background(), false, append([]string{"resume", "--json"}, common...)...)
	files, sum := jsonLines(t, res.stdout)
	f := files["gs://bkt/big.bin"]
	if res.code != 0 || f.Status != "resumed" || f.Reason != "composite of 4 components" || f.Transferred != 256<<10+512<<10 ||
		f.ResumedFrom != 2*512<<10+256<<10 || sum.Failed != 0 {
		t.Fatalf("resume: %+v\n%s", f, res.stderr)
	}
	got, attrs, err := srv.Object("bkt", "big.bin")
	if err != nil || !bytes.Equal(got, data) || attrs.ComponentCount != 4 {
		t.Fatalf("object: %d bytes, %d components, %v", len(got), attrs.ComponentCount, err)
	}
	if names, _ := srv.ObjectNames("bkt"); len(names) != 1 {
		t.Errorf("objects left: %q", names)
	}
}

// The composite flags are checked before anything is sent; off uploads a
// large file whole, with no notice.
func TestCompositeFlags(t *testing.T) {
	t.Parallel()
	wantUsage(t, runCLI(t, "", "cp", "--parallel-upload", "always", "f", "gs://bkt/"), "--parallel-upload must be auto, on or off, got \"always\"")
	wantUsage(t, runCLI(t, "", "cp", "--component-size", "0", "f", "gs://bkt/"), "--component-size must be a positive size such as 64MiB")
	wantUsage(t, runCLI(t, "", "cp", "--parallel-threshold", "lots", "f", "gs://bkt/"), "--parallel-threshold")
	help := runCLI(t, "", "cp", "--help")
	for _, s := range []string{"--parallel-upload auto|on|off", "--parallel-threshold SIZE", "--component-size SIZE"} {
		if !strings.Contains(help.stdout, s) {
			t.Errorf("cp --help lacks %q", s)
		}
	}
	if doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "commands.md")); err != nil || !strings.Contains(string(doc), "no MD5") {
		t.Errorf("docs/commands.md lacks \"no MD5\" (cp --help's long form): %v", err)
	}
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.bin"), 2<<20)
	r := runIn(context.Background(), false, "cp", "--parallel-upload", "off", "--parallel-threshold", "1MiB", "--component-size", "512KiB",
		"--endpoint", srv.URL(), "--state-dir", filepath.Join(dir, "state"), filepath.Join(dir, "big.bin"), "gs://bkt/")
	if _, attrs, err := srv.Object("bkt", "big.bin"); r.code != 0 || strings.Contains(r.stderr, "warning") || err != nil || attrs.ComponentCount != 0 {
		t.Errorf("--parallel-upload off: %+v, %d components, %v", r, attrs.ComponentCount, err)
	}
}

// 'sessions gc gs://BUCKET' deletes orphaned components older than 6.5
// days there, and nothing else; without composite uploads or buckets it
// runs offline.
func TestSessionsGCComponents(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Now().Add(-8 * 24 * time.Hour)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Now: clock})
	old := "gcsput-tmp/0123456789abcdef0123456789abcdef/7"
	srv.PutObject("bkt", old, []byte("orphan"))
	srv.PutObject("bkt", "gcsput-tmp/mine.txt", []byte("not a component"))
	mu.Lock()
	now = time.Now()
	mu.Unlock()
	young := "gcsput-tmp/0123456789abcdef0123456789abcdef/8"
	srv.PutObject("bkt", young, []byte("young"))
	state := filepath.Join(t.TempDir(), "state")
	off := runIn(context.Background(), false, "sessions", "gc", "--state-dir", state, "--endpoint", "http://127.0.0.1:1")
	if off.code != 0 || off.stderr != "nothing expired\n" {
		t.Errorf("offline gc: %+v", off)
	}
	r := runIn(context.Background(), false, "sessions", "gc", "--state-dir", state, "--endpoint", srv.URL(), "gs://bkt")
	if r.code != 0 || r.stdout != "deleted component gs://bkt/"+old+"\n" {
		t.Errorf("gc gs://bkt: %+v", r)
	}
	if names, _ := srv.ObjectNames("bkt"); len(names) != 2 || names[0] != young && names[1] != young {
		t.Errorf("left %q", names)
	}
	wantUsage(t, runCLI(t, "", "sessions", "gc", "gs://bkt/dir/"), "sessions gc sweeps whole buckets: give gs://bkt")
	wantUsage(t, runCLI(t, "", "sessions", "gc", "./local"), `sessions gc takes buckets to sweep (gs://BUCKET), not "./local"`)
}

// 'sessions cancel' and 'sessions gc' without --state-dir work on the user's state directory,
// where cp saved the upload (the metadata client opens none by itself).
func TestSessionsCancelDefaultStateDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}, Faults: []fakegcs.Fault{
		{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(1 << 20)), Kind: fakegcs.KindStatus, Status: 403},
	}})
	writeFile(t, filepath.Join(dir, "big.bin"), 9<<20) // over the 8 MiB of one request
	if r := runIn(context.Background(), false, "cp", "--chunk-size", "1MiB", "--endpoint", srv.URL(), filepath.Join(dir, "big.bin"), "gs://bkt/big.bin"); r.code != 1 {
		t.Fatalf("cp: %+v", r)
	}
	c := runIn(context.Background(), false, "sessions", "cancel", "--all", "--endpoint", srv.URL())
	if c.code != 0 || !strings.HasPrefix(c.stdout, "cancelled upload ") {
		t.Fatalf("sessions cancel: %+v", c)
	}
	if s, _ := srv.LastSession("bkt", "big.bin"); s.State != "cancelled" {
		t.Errorf("session %s, want cancelled", s.State)
	}
	if r := runIn(context.Background(), false, "sessions", "gc", "--endpoint", srv.URL(), "gs://bkt"); r.code != 0 || r.stderr != "nothing expired\n" {
		t.Errorf("sessions gc: %+v", r)
	}
}
