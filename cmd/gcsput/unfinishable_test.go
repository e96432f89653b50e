package main

import (
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

// A saved transfer that can never finish (its source gone, its record edited by hand) is
// reported once by 'gcsput resume', skipped by every later one, and removed by 'gcsput
// sessions gc'. These tests make the records as a user would: a transfer interrupted (the
// in-process equivalent of Ctrl-C) the moment a stall fault fires.

// stuckWorld is a fake server whose stall faults interrupt the running command, and a
// scratch directory with a state directory.
type stuckWorld struct {
	t      *testing.T
	srv    *fakegcs.Server
	dir    string
	state  string
	mu     sync.Mutex
	cancel context.CancelCauseFunc
}

func newStuckWorld(t *testing.T) *stuckWorld {
	t.Helper()
	t.Parallel()
	w := &stuckWorld{t: t, dir: t.TempDir()}
	w.state = filepath.Join(w.dir, "state")
	w.srv = fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt", "dst"}, RewriteBytesPerCall: 1 << 20,
		Logf: func(format string, args ...any) {
			if strings.Contains(fmt.Sprintf(format, args...), "injecting stall") {
				w.mu.Lock()
				if w.cancel != nil {
					w.cancel(errInterrupted)
				}
				w.mu.Unlock()
			}
		}})
	return w
}

// run runs gcsput in-process against the fake server and the state directory.
func (w *stuckWorld) run(args ...string) cliResult {
	return runIn(context.Background(), false, append(args, "--endpoint", w.srv.URL(), "--state-dir", w.state, fastRetry)...)
}

// runState runs gcsput in-process with the state directory alone (sessions ls).
func (w *stuckWorld) runState(args ...string) cliResult {
	return runIn(context.Background(), false, append(args, "--state-dir", w.state)...)
}

// interrupt runs gcsput with args, interrupted when fault (a stall) fires; it must exit
// 130 with one transfer saved.
func (w *stuckWorld) interrupt(fault fakegcs.Fault, args ...string) {
	w.t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	w.mu.Lock()
	w.cancel = cancel
	w.mu.Unlock()
	in := w.srv.Inject(fault)
	r := runIn(ctx, false, append(args, "--endpoint", w.srv.URL(), "--state-dir", w.state, fastRetry)...)
	in.Remove()
	w.mu.Lock()
	w.cancel = nil
	w.mu.Unlock()
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "1 unfinished transfer saved") {
		w.t.Fatalf("interrupted %v: %+v", args, r)
	}
}

// records lists the record files in the state directory.
func (w *stuckWorld) records() []string {
	w.t.Helper()
	got, err := filepath.Glob(filepath.Join(w.state, "*.json"))
	if err != nil {
		w.t.Fatal(err)
	}
	return got
}

// requestsTo lists the requests the server received that name bucket/object.
func (w *stuckWorld) requestsTo(bucket, object string) []string {
	var out []string
	for _, r := range w.srv.Log() {
		if r.Bucket == bucket && r.Object == object {
			out = append(out, r.Op+" "+r.Phase)
		}
	}
	return out
}

// interruptedCopy leaves a saved rewrite of gs://bkt/src.bin to gs://dst/copy.bin, cut
// after its first call.
func (w *stuckWorld) interruptedCopy() {
	w.t.Helper()
	if _, err := w.srv.PutObject("bkt", "src.bin", make([]byte, 4<<20)); err != nil {
		w.t.Fatal(err)
	}
	w.interrupt(fakegcs.Fault{Op: "storage.objects.rewrite", Skip: 1, Kind: fakegcs.KindStall, Delay: time.Hour},
		"cp", "gs://bkt/src.bin", "gs://dst/copy.bin")
}

// (a) A copy whose source was deleted: the first resume fails once and says why; later
// resumes do not fail on it; gc removes it and says so.
func TestUnfinishableCopySourceDeleted(t *testing.T) {
	w := newStuckWorld(t)
	w.interruptedCopy()
	if err := w.srv.DeleteObject("bkt", "src.bin"); err != nil {
		t.Fatal(err)
	}
	first := w.run("resume")
	want := "gcsput: failed: gs://bkt/src.bin -> gs://dst/copy.bin: cannot finish: its source gs://bkt/src.bin is gone; nothing was written to gs://dst/copy.bin; later resumes skip it, and 'gcsput sessions gc' removes its record\n"
	if first.code != exitFailed || !strings.Contains(first.stderr, want) {
		t.Fatalf("first resume: exit %d, want %d\nstderr %q\nwant %q", first.code, exitFailed, first.stderr, want)
	}
	rewrites := w.srv.Count("storage.objects.rewrite")
	second := w.run("resume")
	if second.code != 0 || !strings.Contains(second.stdout, "skipped") || !strings.Contains(second.stdout, "cannot finish: its source gs://bkt/src.bin is gone") {
		t.Fatalf("second resume: %+v", second)
	}
	if n := w.srv.Count("storage.objects.rewrite"); n != rewrites {
		t.Errorf("the second resume sent %d rewrite calls", n-rewrites)
	}
	ls := w.runState("sessions", "ls", "--json")
	var s map[string]any
	if err := json.Unmarshal([]byte(ls.stdout), &s); err != nil || s["unfinishable"] != "its source gs://bkt/src.bin is gone" {
		t.Errorf("sessions ls --json: %q, %v", ls.stdout, err)
	}
	if ls := w.runState("sessions", "ls"); !strings.Contains(ls.stdout, "(cannot finish: its source gs://bkt/src.bin is gone)") {
		t.Errorf("sessions ls: %+v", ls)
	}
	before := len(w.srv.Log())
	gc := w.run("sessions", "gc")
	if gc.code != 0 || gc.stdout != "removed unfinishable rewrite gs://bkt/src.bin -> gs://dst/copy.bin: its source gs://bkt/src.bin is gone\n" || gc.stderr != "" {
		t.Errorf("sessions gc: %+v", gc)
	}
	if n := len(w.srv.Log()) - before; n != 0 {
		t.Errorf("gc sent %d requests", n)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after gc: %v", got)
	}
	if r := w.run("resume"); r.code != 0 || !strings.Contains(r.stderr, "nothing to resume") {
		t.Errorf("resume after gc: %+v", r)
	}
}

// interruptedUpload leaves a saved upload of DIR/vol/big.bin to gs://bkt/big.bin, cut with
// 2 MiB persisted.
func (w *stuckWorld) interruptedUpload() string {
	w.t.Helper()
	src := filepath.Join(w.dir, "vol", "big.bin")
	writeFile(w.t, src, 10<<20)
	w.interrupt(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(2 << 20)), Kind: fakegcs.KindStall, Delay: time.Hour},
		"cp", "--chunk-size", "1MiB", src, "gs://bkt/big.bin")
	return src
}

// (c) An upload whose source file was deleted: reported once, skipped after, removed by gc
// (which keeps it while the file is back: it may resume).
func TestUnfinishableUploadSourceGone(t *testing.T) {
	w := newStuckWorld(t)
	src := w.interruptedUpload()
	// The directory goes, as an unmounted volume does; the file itself is untouched (its
	// status change time too), so that it can resume when it is back.
	vol := filepath.Dir(src)
	if err := os.Rename(vol, vol+".away"); err != nil {
		t.Fatal(err)
	}
	first := w.run("resume")
	want := fmt.Sprintf("gcsput: failed: %s -> gs://bkt/big.bin: cannot finish: its source file %s is gone; nothing was written to gs://bkt/big.bin; later resumes skip it, and 'gcsput sessions gc' removes its record\n", src, src)
	if first.code != exitFailed || !strings.Contains(first.stderr, want) {
		t.Fatalf("first resume: exit %d\nstderr %q\nwant %q", first.code, first.stderr, want)
	}
	if second := w.run("resume"); second.code != 0 || !strings.Contains(second.stdout, "cannot finish: its source file "+src+" is gone") {
		t.Fatalf("second resume: %+v", second)
	}
	if _, err := w.srv.Attrs("bkt", "big.bin"); err == nil {
		t.Error("the object exists")
	}
	// Back (an unmounted volume mounted again): gc keeps the record, resume finishes it.
	if err := os.Rename(vol+".away", vol); err != nil {
		t.Fatal(err)
	}
	if gc := w.run("sessions", "gc"); gc.code != 0 || gc.stdout != "" || len(w.records()) != 1 {
		t.Fatalf("gc with the file back: %+v, records %v", gc, w.records())
	}
	if r := w.run("resume"); r.code != 0 || !strings.HasPrefix(r.stdout, "resumed") {
		t.Fatalf("resume with the file back: %+v", r)
	}
	if len(w.records()) != 0 {
		t.Errorf("records left: %v", w.records())
	}
}

// (c) The same, removed by gc while the file is still gone.
func TestUnfinishableUploadGC(t *testing.T) {
	w := newStuckWorld(t)
	src := w.interruptedUpload()
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	if r := w.run("resume"); r.code != exitFailed {
		t.Fatalf("first resume: %+v", r)
	}
	gc := w.run("sessions", "gc")
	if want := fmt.Sprintf("removed unfinishable upload %s -> gs://bkt/big.bin: its source file %s is gone\n", src, src); gc.code != 0 || gc.stdout != want {
		t.Errorf("sessions gc: %+v\nwant stdout %q", gc, want)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after gc: %v", got)
	}
}

// (c) A download whose object was deleted while its partial file waits: reported once,
// skipped after; gc removes the record and the partial file.
func TestUnfinishableDownloadObjectGone(t *testing.T) {
	w := newStuckWorld(t)
	if _, err := w.srv.PutObject("bkt", "obj.bin", make([]byte, 6<<20)); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(w.dir, "obj.bin")
	w.interrupt(fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindStall, AfterBytes: 1 << 20, Delay: time.Hour},
		"cp", "gs://bkt/obj.bin", dst)
	partials, _ := filepath.Glob(filepath.Join(w.dir, ".*obj.bin*"))
	if len(partials) != 1 {
		t.Fatalf("partial files: %v", partials)
	}
	if err := w.srv.DeleteObject("bkt", "obj.bin"); err != nil {
		t.Fatal(err)
	}
	first := w.run("resume")
	want := fmt.Sprintf("gcsput: failed: gs://bkt/obj.bin -> %s: cannot finish: its source gs://bkt/obj.bin is gone; nothing was written to %s; later resumes skip it, and 'gcsput sessions gc' removes its record\n", dst, dst)
	if first.code != exitFailed || !strings.Contains(first.stderr, want) {
		t.Fatalf("first resume: exit %d\nstderr %q\nwant %q", first.code, first.stderr, want)
	}
	if second := w.run("resume"); second.code != 0 || !strings.Contains(second.stdout, "cannot finish") {
		t.Fatalf("second resume: %+v", second)
	}
	gc := w.run("sessions", "gc")
	if want := fmt.Sprintf("removed unfinishable download gs://bkt/obj.bin -> %s: its source gs://bkt/obj.bin is gone\n", dst); gc.code != 0 || gc.stdout != want {
		t.Errorf("sessions gc: %+v\nwant stdout %q", gc, want)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after gc: %v", got)
	}
	if p, _ := filepath.Glob(filepath.Join(w.dir, ".*obj.bin*")); len(p) != 0 {
		t.Errorf("partial files left after gc: %v", p)
	}
}

// editDest rewrites the destination in the one record file, as a hand edit would.
func (w *stuckWorld) editDest(dest string) string {
	w.t.Helper()
	files := w.records()
	if len(files) != 1 {
		w.t.Fatalf("records: %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatal(err)
	}
	m["dest"] = dest
	if b, err = json.Marshal(m); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		w.t.Fatal(err)
	}
	return files[0]
}

// (b) A record whose destination was edited by hand: never used (not a byte, not a
// request to the edited destination), reported once, cancellable by the name it shows,
// and removed by gc.
func TestUnfinishableEditedRecord(t *testing.T) {
	w := newStuckWorld(t)
	src := w.interruptedUpload()
	w.editDest("gs://dst/elsewhere.bin")
	first := w.run("resume")
	want := fmt.Sprintf("gcsput: failed: %s -> gs://dst/elsewhere.bin: cannot finish: it was edited: its kind, source, destination or shard no longer match its file name; later resumes skip it, and 'gcsput sessions gc' removes its record\n", src)
	if first.code != exitFailed || !strings.Contains(first.stderr, want) {
		t.Fatalf("first resume: exit %d\nstderr %q\nwant %q", first.code, first.stderr, want)
	}
	if second := w.run("resume"); second.code != 0 || !strings.Contains(second.stdout, "cannot finish") {
		t.Fatalf("second resume: %+v", second)
	}
	if got := w.requestsTo("dst", "elsewhere.bin"); len(got) != 0 {
		t.Errorf("requests sent to the edited destination: %v", got)
	}
	if ls := w.runState("sessions", "ls"); !strings.Contains(ls.stdout, "-> gs://dst/elsewhere.bin (cannot finish: ") {
		t.Errorf("sessions ls: %+v", ls)
	}
	c := w.run("sessions", "cancel", "gs://dst/elsewhere.bin")
	if c.code != 0 || !strings.Contains(c.stdout, "cancelled upload ") || c.stderr != "" {
		t.Fatalf("sessions cancel: %+v", c)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after cancel: %v", got)
	}
	if got := w.requestsTo("dst", "elsewhere.bin"); len(got) != 0 {
		t.Errorf("requests sent to the edited destination: %v", got)
	}
}

// (b) An edited record is removed by gc without a resume first (gc sees the edit offline).
func TestUnfinishableEditedRecordGC(t *testing.T) {
	w := newStuckWorld(t)
	src := w.interruptedUpload()
	w.editDest("gs://dst/elsewhere.bin")
	if ls := w.runState("sessions", "ls"); !strings.Contains(ls.stdout, "-> gs://dst/elsewhere.bin (cannot finish: it was edited: ") {
		t.Errorf("sessions ls: %+v", ls)
	}
	before := len(w.srv.Log())
	gc := w.run("sessions", "gc")
	if want := fmt.Sprintf("removed unfinishable upload %s -> gs://dst/elsewhere.bin: it was edited: its kind, source, destination or shard no longer match its file name\n", src); gc.code != 0 || gc.stdout != want {
		t.Errorf("sessions gc: %+v\nwant stdout %q", gc, want)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after gc: %v", got)
	}
	if n := len(w.srv.Log()) - before; n != 0 {
		t.Errorf("gc sent %d requests", n)
	}
}

// (c) A composite upload whose source file is gone: reported once; gc removes the record
// and deletes the components it had uploaded, and nothing else.
func TestUnfinishableCompositeGC(t *testing.T) {
	w := newStuckWorld(t)
	src := filepath.Join(w.dir, "big.bin")
	writeFile(t, src, 2<<20)
	if _, err := w.srv.PutObject("bkt", "keep.txt", []byte("not ours")); err != nil {
		t.Fatal(err)
	}
	w.interrupt(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk, Offset: new(int64(256 << 10)), Skip: 2, Kind: fakegcs.KindStall, Delay: time.Hour},
		"cp", "-j", "1", "--parallel-threshold", "1MiB", "--component-size", "512KiB", "--chunk-size", "256KiB", src, "gs://bkt/big.bin")
	names, _ := w.srv.ObjectNames("bkt")
	if len(names) != 3 { // keep.txt and two components
		t.Fatalf("objects after the interruption: %q", names)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	if r := w.run("resume"); r.code != exitFailed || !strings.Contains(r.stderr, "cannot finish: its source file "+src+" is gone") {
		t.Fatalf("first resume: %+v", r)
	}
	if r := w.run("resume"); r.code != 0 {
		t.Fatalf("second resume: %+v", r)
	}
	gc := w.run("sessions", "gc")
	if gc.code != 0 || !strings.HasPrefix(gc.stdout, "removed unfinishable upload "+src+" -> gs://bkt/big.bin: its source file "+src+" is gone\n") ||
		strings.Count(gc.stdout, "deleted component gs://bkt/gcsput-tmp/") != 2 {
		t.Errorf("sessions gc: %+v", gc)
	}
	if names, _ := w.srv.ObjectNames("bkt"); len(names) != 1 || names[0] != "keep.txt" {
		t.Errorf("objects left: %q", names)
	}
	if got := w.records(); len(got) != 0 {
		t.Errorf("records left after gc: %v", got)
	}
}
