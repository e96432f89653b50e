package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/jobrec"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/state"
)

// Operator mistakes, played end to end through the built binary: an unmounted
// volume, a mistyped prefix, a second process, another job's files.

// --- sync --delete: failures, the delete guard, gcsput's own files (issue 22) ---

// newOperatorE2E is newE2E with the fake server's options (LaxNames for hostile names).
func newOperatorE2E(t *testing.T, o fakegcs.Options) *e2e {
	t.Helper()
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Parallel()
	dir := t.TempDir()
	o.Buckets = []string{"bkt"}
	return &e2e{t: t, dir: dir, state: filepath.Join(dir, ".state"), srv: fakegcs.NewTest(t, o)}
}

// objects lists the bucket's object names, space-separated.
func (e *e2e) objects() string {
	names, _ := e.srv.ObjectNames("bkt")
	return strings.Join(names, " ")
}

// wantWithheld checks a sync --delete that met a failure: exit 1, the failure
// named, the deletes withheld and said so, in text and in --json.
func (e *e2e) wantWithheld(args []string, withheld int, because string, check func()) {
	t := e.t
	t.Helper()
	r := e.run(nil, args...)
	want := fmt.Sprintf("sync --delete withheld %s (%s): deletes run only after a sync without failures", plural(withheld, "delete"), because)
	if r.code != exitFailed || !strings.Contains(r.stderr, "gcsput: failed: ") || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, plural(withheld, "delete")+" withheld;") {
		t.Errorf("gcsput %v: exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", args, r.code, want, r.stdout, r.stderr)
	}
	check()
	r = e.run(nil, append([]string{args[0], "--json"}, args[1:]...)...)
	files, sum := jsonLines(t, r.stdout)
	if r.code != exitFailed || sum.Deleted != 0 || sum.DeletesWithheld != withheld || sum.WithheldBecause != because || sum.Failed == 0 {
		t.Errorf("--json: exit %d, summary %+v", r.code, sum)
	}
	for _, f := range files {
		if f.Status == "deleted" {
			t.Errorf("--json: deleted %s", f.Destination)
		}
	}
	check()
}

// unreadable replaces path by a file of size 0 whose every read fails with EIO
// (a link to /proc/self/mem, whose address 0 is never mapped): an unreadable
// file even for root, who may read a file of mode 000.
func unreadable(e *e2e, path string) {
	e.t.Helper()
	if runtime.GOOS != "linux" {
		e.t.Skip("needs /proc/self/mem")
	}
	os.Remove(path)
	if err := os.Symlink("/proc/self/mem", path); err != nil {
		e.t.Fatal(err)
	}
}

// A failure of any kind in an upload sync (the walk, a file that cannot be
// read, a name GCS refuses, the server) means no delete at all, not even of the objects whose files are gone.
func TestOperatorSyncUploadFailureWithholdsDeletes(t *testing.T) {
	for _, c := range []struct {
		name     string
		fault    *fakegcs.Fault
		break_   func(e *e2e) // makes victim.txt fail
		withheld int          // gone.txt's delete, and victim.txt's when its file failed
	}{
		{name: "dangling symlink", withheld: 2, break_: func(e *e2e) {
			// Its volume is not mounted.
			os.Remove(filepath.Join(e.dir, "src", "victim.txt"))
			os.Symlink("/mnt/not-mounted/victim.txt", filepath.Join(e.dir, "src", "victim.txt"))
		}},
		{name: "unreadable file", withheld: 1, break_: func(e *e2e) {
			// Same size as its object (0), so its CRC32C must be read: EIO, as from a failing disk.
			e.srv.PutObject("bkt", "b/victim.txt", nil)
			unreadable(e, filepath.Join(e.dir, "src", "victim.txt"))
		}},
		{name: "name GCS refuses", withheld: 2, break_: func(e *e2e) {
			e.write("src/bad\nname.txt", 7)
			os.Remove(filepath.Join(e.dir, "src", "victim.txt")) // its object would go too
		}},
		// The only upload is victim.txt's.
		{name: "upload refused by the server", withheld: 1, fault: &fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403, Times: -1},
			break_: func(e *e2e) { e.write("src/victim.txt", 99) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newOperatorE2E(t, fakegcs.Options{})
			for _, f := range []string{"keep.txt", "gone.txt", "victim.txt"} {
				e.write("src/"+f, 10)
			}
			e.must(nil, "sync", "--delete", "src", "gs://bkt/b", fastRetry)
			os.Remove(filepath.Join(e.dir, "src", "gone.txt"))
			c.break_(e)
			if c.fault != nil {
				e.srv.Inject(*c.fault)
			}
			e.wantWithheld([]string{"sync", "--delete", "src", "gs://bkt/b", fastRetry}, c.withheld, plural(1, "failure"), func() {
				if got := e.objects(); got != "b/gone.txt b/keep.txt b/victim.txt" {
					t.Errorf("objects %q: a delete ran after a failure", got)
				}
			})
			if n := e.srv.Count("storage.objects.delete"); n != 0 {
				t.Errorf("%d delete requests", n)
			}
		})
	}
}

// A failure of any kind in a download sync (a name that cannot be a local
// path, a local file that cannot be read, a link out of the destination, an
// object gone since the listing, the server) means no local file is deleted.
func TestOperatorSyncDownloadFailureWithholdsDeletes(t *testing.T) {
	for _, c := range []struct {
		name   string
		break_ func(e *e2e) // makes one object fail
	}{
		{name: "name that cannot be a local path", break_: func(e *e2e) { e.srv.PutObject("bkt", "p/../escape.txt", []byte("evil")) }},
		{name: "unreadable destination file", break_: func(e *e2e) {
			e.srv.PutObject("bkt", "p/victim.txt", nil)
			unreadable(e, filepath.Join(e.dir, "dst", "victim.txt"))
		}},
		{name: "symlink out of the destination", break_: func(e *e2e) {
			os.MkdirAll(filepath.Join(e.dir, "outside"), 0o755)
			os.Symlink(filepath.Join(e.dir, "outside"), filepath.Join(e.dir, "dst", "link"))
			e.srv.PutObject("bkt", "p/link/x.txt", []byte("x"))
		}},
		{name: "object vanished after the listing", break_: func(e *e2e) {
			e.srv.PutObject("bkt", "p/victim.txt", []byte("changed"))
			e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "p/victim.txt", Kind: fakegcs.KindStatus, Status: 404, Times: -1})
		}},
		{name: "download refused by the server", break_: func(e *e2e) {
			e.srv.PutObject("bkt", "p/victim.txt", []byte("changed"))
			e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "p/victim.txt", Kind: fakegcs.KindStatus, Status: 403, Times: -1})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newOperatorE2E(t, fakegcs.Options{LaxNames: true})
			for _, f := range []string{"keep.txt", "victim.txt"} {
				e.srv.PutObject("bkt", "p/"+f, []byte(f))
			}
			e.must(nil, "sync", "--delete", "gs://bkt/p", "dst", fastRetry)
			e.write("dst/extra.txt", 5) // the source lacks it: a delete
			c.break_(e)
			e.wantWithheld([]string{"sync", "--delete", "gs://bkt/p", "dst", fastRetry}, 1, plural(1, "failure"), func() {
				for _, f := range []string{"extra.txt", "keep.txt", "victim.txt"} {
					if _, err := os.Stat(filepath.Join(e.dir, "dst", f)); err != nil {
						t.Errorf("dst/%s: %v", f, err)
					}
				}
			})
		})
	}
}

// An empty source (an unmounted volume, a mistyped prefix) is refused before
// anything changes, with exit 2, whatever --max-delete says; --dry-run shows
// the refusal.
func TestOperatorSyncDeleteRefusesAnEmptySource(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	for i := range 3 {
		e.srv.PutObject("bkt", fmt.Sprintf("backup/f%d", i), []byte("precious"))
	}
	os.MkdirAll(filepath.Join(e.dir, "mnt", "data"), 0o755) // the volume is not mounted
	want := "refusing to sync --delete: the source mnt/data holds no files, so all 3 objects of gs://bkt/backup/ would be deleted; " +
		"an unmounted volume or a mistyped prefix looks exactly like this. Nothing was changed. To empty gs://bkt/backup/ on purpose, run 'gcsput rm -r gs://bkt/backup/'"
	for _, extra := range [][]string{nil, {"--max-delete", "100%"}, {"--dry-run"}} {
		r := e.run(nil, append([]string{"sync", "--delete", "mnt/data", "gs://bkt/backup/"}, extra...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, want) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s", extra, r.code, want, r.stderr)
		}
		if len(extra) > 0 && extra[0] == "--dry-run" && (!strings.Contains(r.stdout, "would delete        8 B  gs://bkt/backup/f2") ||
			!strings.Contains(r.stderr, "dry run: 0 to copy (0 B), 0 unchanged, 3 to delete; the delete guard would refuse this sync (below); nothing was changed")) {
			t.Errorf("dry run:\n%s\n%s", r.stdout, r.stderr)
		}
	}
	// Filters that take nothing look the same.
	e.write("mnt/data/a.txt", 3)
	e.srv.PutObject("bkt", "backup/p.jpg", []byte("photo"))
	r := e.run(nil, "sync", "--delete", "--include", "*.jpg", "mnt/data", "gs://bkt/backup/")
	if r.code != exitUsage || !strings.Contains(r.stderr, "holds no files that --include/--exclude take") {
		t.Errorf("filtered: exit %d\n%s", r.code, r.stderr)
	}
	if got := e.objects(); got != "backup/f0 backup/f1 backup/f2 backup/p.jpg" || e.srv.Count("storage.objects.delete") != 0 {
		t.Errorf("objects %q after the refusals", got)
	}

	// A mistyped prefix would empty the restore directory.
	restore := e.write("restore/a.txt", 4)
	e.write("restore/sub/b.txt", 4)
	r = e.run(nil, "sync", "--delete", "--json", "gs://bkt/bakcup", "restore")
	if r.code != exitUsage || !strings.Contains(r.stderr, "the source gs://bkt/bakcup holds no objects, so all 2 files of restore would be deleted") ||
		!strings.Contains(r.stderr, "run 'rm -r restore'") || !strings.Contains(r.stdout, `{"type":"error","error":"refusing to sync --delete`) {
		t.Errorf("download: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if got, err := os.ReadFile(filepath.Join(e.dir, "restore", "a.txt")); err != nil || !bytes.Equal(got, restore) {
		t.Errorf("restore/a.txt: %v", err)
	}
	// An empty source with nothing to delete is no mistake to refuse.
	os.MkdirAll(filepath.Join(e.dir, "empty"), 0o755)
	e.must(nil, "sync", "--delete", "empty", "gs://bkt/nothing-here/")
}

// More deletes than --max-delete allows are refused before anything changes
// (no copy either); the default protects a large destination and lets a small
// one work; --max-delete N, P% and 100% say how much may go.
func TestOperatorSyncDeleteMaxDelete(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	for i := range 30 {
		e.srv.PutObject("bkt", fmt.Sprintf("b/f%02d", i), []byte("old"))
	}
	for i := range 10 { // a different, smaller tree: the wrong volume
		e.write(fmt.Sprintf("src/f%02d", i), 3)
	}
	e.write("src/new.txt", 3)
	sync := func(extra ...string) cliResult {
		return e.run(nil, append([]string{"sync", "--delete", "src", "gs://bkt/b", fastRetry}, extra...)...)
	}
	r := sync()
	if want := "refusing to sync --delete: 20 of the 30 objects of gs://bkt/b (67%) would be deleted, more than --max-delete allows " +
		"(by default 50% of the destination, or 10 entries if that is more). Nothing was changed."; r.code != exitUsage || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "run again with '--max-delete 20' (or '--max-delete 100%')") {
		t.Errorf("default: exit %d, want 2 and %q\n%s", r.code, want, r.stderr)
	}
	for _, limit := range []string{"19", "60%"} {
		if r := sync("--max-delete", limit); r.code != exitUsage || !strings.Contains(r.stderr, "more than --max-delete allows ("+limit+")") {
			t.Errorf("--max-delete %s: exit %d\n%s", limit, r.code, r.stderr)
		}
	}
	r = sync("--dry-run", "--json")
	if r.code != exitUsage || strings.Count(r.stdout, `"action":"delete"`) != 20 || !strings.Contains(r.stdout, `"refused":"refusing to sync --delete: 20 of the 30 objects`) {
		t.Errorf("dry run: exit %d\n%s", r.code, r.stdout)
	}
	if n := len(strings.Fields(e.objects())); n != 30 || e.srv.Count("storage.objects.insert")+e.srv.Count("storage.objects.delete") != 0 {
		t.Fatalf("%d objects, %d inserts after the refusals", n, e.srv.Count("storage.objects.insert"))
	}
	r = sync("--max-delete", "20", "--json")
	if _, sum := jsonLines(t, r.stdout); r.code != 0 || sum.Deleted != 20 || len(strings.Fields(e.objects())) != 11 {
		t.Errorf("--max-delete 20: exit %d, %+v, objects %q\n%s", r.code, sum, e.objects(), r.stderr)
	}

	// A small destination stays usable: 2 of its 3 files renamed deletes 2 (67%).
	for _, f := range []string{"a", "b", "c"} {
		e.write("small/"+f, 1)
	}
	e.must(nil, "sync", "--delete", "small", "gs://bkt/small")
	os.Rename(filepath.Join(e.dir, "small", "a"), filepath.Join(e.dir, "small", "a2"))
	os.Rename(filepath.Join(e.dir, "small", "b"), filepath.Join(e.dir, "small", "b2"))
	if r := e.must(nil, "sync", "--delete", "--json", "small", "gs://bkt/small"); !strings.Contains(r.stdout, `"deleted":2`) {
		t.Errorf("small destination: %s", r.stdout)
	}

	// Downloading: 12 local files, 1 object.
	for i := range 12 {
		e.write(fmt.Sprintf("restore/r%02d", i), 1)
	}
	e.srv.PutObject("bkt", "one/r00", []byte("x"))
	r = e.run(nil, "sync", "--delete", "gs://bkt/one", "restore")
	if left, _ := os.ReadDir(filepath.Join(e.dir, "restore")); r.code != exitUsage || len(left) != 12 ||
		!strings.Contains(r.stderr, "11 of the 12 files of restore (92%) would be deleted") {
		t.Errorf("download: exit %d, %d files left\n%s", r.code, len(left), r.stderr)
	}
	e.must(nil, "sync", "--delete", "--max-delete", "100%", "gs://bkt/one", "restore")
	if left, _ := os.ReadDir(filepath.Join(e.dir, "restore")); len(left) != 1 {
		t.Errorf("--max-delete 100%%: %d files left", len(left))
	}
}

// gcsput's own files beside a download are never sync's to delete: the rerun
// of an interrupted 'sync --delete' resumes its partial file and exits 0, and
// a concurrent download's live, locked partial file survives.
func TestOperatorSyncDeleteKeepsPartials(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	data := make([]byte, 12<<20)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	e.srv.PutObject("bkt", "p/big.bin", data)
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Phase: fakegcs.PhaseMedia, Kind: fakegcs.KindThrottle, BytesPerSecond: 4 << 20, Times: -1})
	dst := filepath.Join(e.dir, "dst")
	partial := filepath.Join(dst, ".big.bin.gcsput-partial")
	e.write("dst/stale.txt", 3) // a real delete, withheld by the interruption
	// stale.txt is all dst holds: a delete the guard allows only with --max-delete.
	cmd, _, errb := e.command(nil, "sync", "--delete", "--max-delete", "1", "gs://bkt/p", "dst", fastRetry)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if fi, err := os.Stat(partial); err == nil && fi.Size() >= 2<<20 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the download never got going\n%s", errb)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if cmd.Wait(); cmd.ProcessState.ExitCode() != exitInterrupted {
		t.Fatalf("exit %d after SIGINT\n%s", cmd.ProcessState.ExitCode(), errb)
	}
	if _, err := os.Stat(filepath.Join(dst, "stale.txt")); err != nil || !strings.Contains(errb.String(), "withheld 1 delete (the sync was interrupted)") {
		t.Errorf("an interrupted sync: stale.txt %v\n%s", err, errb)
	}
	throttle.Remove()

	// Another download into the same directory, running: its partial file is locked.
	foreign := filepath.Join(dst, ".other.iso.gcsput-partial")
	f, err := os.OpenFile(foreign, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("half of other.iso")
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	r := e.run(nil, "sync", "--delete", "--json", "--max-delete", "1", "gs://bkt/p", "dst", fastRetry)
	files, sum := jsonLines(t, r.stdout)
	if r.code != 0 || sum.Failed != 0 || sum.Deleted != 1 || files["dst/big.bin"].ResumedFrom < 2<<20 {
		t.Errorf("rerun: exit %d, summary %+v, big.bin %+v\n%s", r.code, sum, files["dst/big.bin"], r.stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "big.bin")); !bytes.Equal(got, data) {
		t.Errorf("big.bin: %d bytes, not the object's", len(got))
	}
	if got, err := os.ReadFile(foreign); err != nil || string(got) != "half of other.iso" {
		t.Errorf("the live partial of another download: %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dst, "stale.txt")); err == nil {
		t.Error("stale.txt was not deleted")
	}
	// Nor does an upload sync copy them.
	e.must(nil, "sync", "--delete", "dst", "gs://bkt/mirror")
	if got := e.objects(); got != "mirror/big.bin p/big.bin" {
		t.Errorf("objects %q", got)
	}
}

// --- report: another job's outputs (issue 22) ---

// report is given shards 0 and 1 of one job and shard 2 of another job with
// the same N (another tree): it refuses, names the odd file, and counts this
// job's shard 2 as missing. With this job's own shard 2 it passes. A sync
// whose filters differ is another job too.
func TestOperatorReportRefusesAnotherJobsShard(t *testing.T) {
	e := newE2E(t)
	for i := range 30 {
		e.write(fmt.Sprintf("tree/f%02d", i), 10+i)
		e.write(fmt.Sprintf("other/f%02d", i), 20+i)
	}
	out := func(name string, args ...string) string {
		r := e.must(nil, append(args, "--json", "--state-dir", e.state)...)
		p := filepath.Join(e.dir, name)
		if err := os.WriteFile(p, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s0 := out("s0.ndjson", "cp", "-r", "--shard", "0/3", "tree", "gs://bkt/a/")
	s1 := out("s1.ndjson", "cp", "-r", "--shard", "1/3", "tree", "gs://bkt/a/")
	odd := out("s2.ndjson", "cp", "-r", "--shard", "2/3", "other", "gs://bkt/a/")
	r := e.run(nil, "report", s0, s1, odd)
	if r.code != 1 || !strings.Contains(r.stderr, odd+" is not an output of this job: it names cp "+filepath.Join(e.dir, "other")) ||
		!strings.Contains(r.stderr, "the other 2 name cp "+filepath.Join(e.dir, "tree")+" -> gs://bkt/a/, 3 shards") ||
		!strings.Contains(r.stderr, "shard 2/3 is missing") || strings.Contains(r.stdout, "all done") {
		t.Errorf("another job's shard 2: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	s2 := out("s2ok.ndjson", "cp", "-r", "--shard", "2/3", "tree", "gs://bkt/a/")
	r = e.must(nil, "report", s0, s1, s2)
	if !strings.Contains(r.stdout, "job cp "+filepath.Join(e.dir, "tree")+" -> gs://bkt/a/, 3 shards (id ") ||
		!strings.Contains(r.stdout, "3 outputs: 30 files: 30 uploaded") {
		t.Errorf("this job's three shards: %q", r.stdout)
	}
	// An output that names no job (resume's, or an older gcsput's) cannot
	// be told to be this job's: it is refused too.
	b, _ := os.ReadFile(s2)
	nameless := filepath.Join(e.dir, "s2nameless.ndjson")
	os.WriteFile(nameless, regexp.MustCompile(`"job":\{[^}]*\},`).ReplaceAll(b, nil), 0o644)
	r = e.run(nil, "report", s0, s1, nameless)
	if r.code != 1 || !strings.Contains(r.stderr, nameless+" is not an output of this job: it names no job (an output of 'gcsput resume'") {
		t.Errorf("an output naming no job: exit %d, %q", r.code, r.stderr)
	}
	// The same tree, destination and split, but other filters: another job.
	y0 := out("y0.ndjson", "sync", "--shard", "0/2", "tree", "gs://bkt/y")
	y1 := out("y1.ndjson", "sync", "--shard", "1/2", "--exclude", "f1*", "tree", "gs://bkt/y")
	r = e.run(nil, "report", y0, y1)
	if r.code != 1 || !strings.Contains(r.stderr, y1+" is not an output of this job") || !strings.Contains(r.stderr, "--exclude f1*") {
		t.Errorf("another filter: exit %d, %q", r.code, r.stderr)
	}
}

// The job's id is what report's help documents: the first 16 hex digits of
// the SHA-256 of ["gcsput-job/1", command, sources, destination, N, filters].
func TestOperatorJobIDIsDocumented(t *testing.T) {
	e := newE2E(t)
	e.write("tree/a", 5)
	r := e.must(nil, "sync", "--json", "--shard", "0/2", "--include", "*.go", "--exclude", "x", "tree/", "gs://bkt/p")
	_, sum := jsonLines(t, r.stdout)
	src := filepath.Join(e.dir, "tree") + "/"
	b, _ := json.Marshal([]any{"gcsput-job/1", "sync", []string{src}, "gs://bkt/p", 2, []string{"include *.go", "exclude x"}})
	h := sha256.Sum256(b)
	want := jobrec.Identity{ID: hex.EncodeToString(h[:8]), Command: "sync", Sources: []string{src}, SourceCount: 1,
		Destination: "gs://bkt/p", Shards: 2, Filters: []string{"include *.go", "exclude x"}}
	if sum.Job == nil || fmt.Sprint(*sum.Job) != fmt.Sprint(want) {
		t.Errorf("summary job %+v, want %+v", sum.Job, want)
	}
}

// --- a live transfer, a state that cannot be saved, signals (issue 22) ---
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
	// The warning is printed on stderr and as a --json line, while the upload runs. (The
	// two pipes are copied into the buffers by two goroutines: the stderr line printed first
	// may reach its buffer second.)
	waitFor(t, cmd, errb, "the warning on stderr and as a --json line", func() bool {
		return strings.Contains(out.String(), `{"type":"warning","message":"cannot save transfer state in the state directory `+st) &&
			strings.Contains(errb.String(), "gcsput: warning: cannot save transfer state")
	})
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

// --- sync --delete, round 2: no shared path, a skipped directory, reserved names, shards (issue 22) ---

// A source and a destination that share no path are a mistyped operand: the
// guard refuses deletes that would remove every destination entry, however
// few; --max-delete N or 100% lets them through.
func TestOperatorSyncDeleteRefusesADisjointSide(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	e.srv.PutObject("bkt", "site/index.html", []byte("<html>"))
	for i := range 10 {
		e.write(fmt.Sprintf("Documents/doc%02d.txt", i), 5)
	}
	r := e.run(nil, "sync", "--delete", "gs://bkt/site", "Documents")
	want := "refusing to sync --delete: all 10 files of Documents would be deleted: gs://bkt/site and Documents share no path, " +
		"as when one of them is mistyped. Nothing was changed."
	if left, _ := os.ReadDir(filepath.Join(e.dir, "Documents")); r.code != exitUsage || len(left) != 10 || !strings.Contains(r.stderr, want) ||
		!strings.Contains(r.stderr, "run again with '--max-delete 10' (or '--max-delete 100%')") {
		t.Errorf("download: exit %d, %d files left, want 2 and %q\n%s", r.code, len(left), want, r.stderr)
	}
	// Uploading, the one object of the prefix.
	r = e.run(nil, "sync", "--delete", "Documents", "gs://bkt/site")
	if r.code != exitUsage || e.objects() != "site/index.html" ||
		!strings.Contains(r.stderr, "the one object of gs://bkt/site would be deleted: Documents and gs://bkt/site share no path") {
		t.Errorf("upload: exit %d, objects %q\n%s", r.code, e.objects(), r.stderr)
	}
	if n := e.srv.Count("storage.objects.insert") + e.srv.Count("storage.objects.delete"); n != 0 {
		t.Errorf("%d inserts and deletes after the refusals", n)
	}
	e.must(nil, "sync", "--delete", "--max-delete", "1", "Documents", "gs://bkt/site")
	if n := len(strings.Fields(e.objects())); n != 10 || strings.Contains(e.objects(), "index.html") {
		t.Errorf("--max-delete 1: objects %q", e.objects())
	}
	e.srv.PutObject("bkt", "other/index.html", []byte("<html>"))
	e.must(nil, "sync", "--delete", "--max-delete", "100%", "gs://bkt/other", "Documents")
	if left, _ := os.ReadDir(filepath.Join(e.dir, "Documents")); len(left) != 1 || left[0].Name() != "index.html" {
		t.Errorf("--max-delete 100%%: %v left", left)
	}
}

// A source directory replaced by a symlink to a directory (not followed) is
// not a directory the source lacks: its objects are kept, and the note says so.
func TestOperatorSyncDeleteKeepsASymlinkedDirectory(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	for _, f := range []string{"keep.txt", "gone.txt", "photos/a.jpg", "photos/sub/b.jpg", "photos.txt"} {
		e.write("src/"+f, 4)
	}
	e.must(nil, "sync", "--delete", "src", "gs://bkt/b")
	if err := os.Rename(filepath.Join(e.dir, "src", "photos"), filepath.Join(e.dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(e.dir, "elsewhere"), filepath.Join(e.dir, "src", "photos"))
	os.Remove(filepath.Join(e.dir, "src", "gone.txt"))
	os.Remove(filepath.Join(e.dir, "src", "photos.txt"))
	r := e.must(nil, "sync", "--delete", "--json", "src", "gs://bkt/b")
	files, sum := jsonLines(t, r.stdout)
	if got := e.objects(); got != "b/keep.txt b/photos/a.jpg b/photos/sub/b.jpg" || sum.Deleted != 2 {
		t.Errorf("objects %q, %d deleted, want photos/ kept and gone.txt, photos.txt deleted", got, sum.Deleted)
	}
	if rec := files["gs://bkt/b/photos"]; rec.Status != "skipped" ||
		rec.Reason != "symlink to a directory (not followed); sync --delete keeps what gs://bkt/b holds under this name" {
		t.Errorf("photos: %+v", rec)
	}
}

// Objects named like the files gcsput writes beside a download are neither
// copied nor deleted: downloaded, .x.gcsput-partial would take the place of
// x's partial file; and they are no upload's to delete.
func TestOperatorSyncReservedNames(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	real := bytes.Repeat([]byte("real"), 1<<18)
	e.srv.PutObject("bkt", "p/x", real)
	hostile := []string{"p/.x.gcsput-partial", "p/.x.gcsput-gunzip", "p/sub/.gcsput-case-0123-Aa"}
	for _, n := range hostile {
		e.srv.PutObject("bkt", n, []byte("hostile"))
	}
	r := e.must(nil, "sync", "--delete", "--json", "gs://bkt/p", "dst")
	files, sum := jsonLines(t, r.stdout)
	if got, err := os.ReadFile(filepath.Join(e.dir, "dst", "x")); err != nil || !bytes.Equal(got, real) {
		t.Errorf("dst/x: %d bytes, %v", len(got), err)
	}
	for _, n := range hostile {
		local := filepath.Join("dst", strings.TrimPrefix(n, "p/"))
		if _, err := os.Stat(filepath.Join(e.dir, local)); err == nil {
			t.Errorf("%s was downloaded", n)
		}
		if rec := files[local]; rec.Status != "skipped" || rec.Reason != "a name gcsput reserves for its own files beside a download: not downloaded" {
			t.Errorf("%s: %+v", n, rec)
		}
	}
	if sum.Failed != 0 || sum.Downloaded != 1 {
		t.Errorf("summary %+v", sum)
	}
	// Uploading: the objects stay, whatever --delete.
	e.write("src/x", 3)
	e.must(nil, "sync", "--delete", "--max-delete", "100%", "src", "gs://bkt/p")
	if got := e.objects(); got != "p/.x.gcsput-gunzip p/.x.gcsput-partial p/sub/.gcsput-case-0123-Aa p/x" {
		t.Errorf("objects %q", got)
	}
}

// A failure of the walk in a sharded sync is reported once, by the shard that
// owns its path, and withholds the deletes of every shard.
func TestOperatorSyncShardedWalkFailure(t *testing.T) {
	e := newOperatorE2E(t, fakegcs.Options{})
	for i := range 8 {
		e.write(fmt.Sprintf("src/keep%d", i), 2)
		e.write(fmt.Sprintf("src/gone%d", i), 2)
	}
	e.must(nil, "sync", "--delete", "src", "gs://bkt/b")
	for i := range 8 {
		os.Remove(filepath.Join(e.dir, "src", fmt.Sprintf("gone%d", i)))
	}
	os.Symlink("/mnt/not-mounted/x", filepath.Join(e.dir, "src", "broken"))
	reported := 0
	for i := range 2 {
		r := e.run(nil, "sync", "--delete", "--json", "--shard", fmt.Sprintf("%d/2", i), "src", "gs://bkt/b")
		files, sum := jsonLines(t, r.stdout)
		if rec, ok := files["gs://bkt/b/broken"]; ok {
			reported++
			if rec.Status != "failed" || r.code != exitFailed || sum.Failed != 1 || sum.WithheldBecause != "1 failure" {
				t.Errorf("owning shard %d: exit %d, %+v, summary %+v", i, r.code, rec, sum)
			}
		} else if sum.Failed != 0 || sum.WithheldBecause != "1 failure of the walk, reported by the shard that owns it" {
			t.Errorf("shard %d: exit %d, summary %+v", i, r.code, sum)
		}
		if sum.Deleted != 0 || sum.DeletesWithheld == 0 {
			t.Errorf("shard %d: %d deleted, %d withheld", i, sum.Deleted, sum.DeletesWithheld)
		}
	}
	if reported != 1 || len(strings.Fields(e.objects())) != 16 {
		t.Errorf("the failure was reported by %d shards, %d objects left", reported, len(strings.Fields(e.objects())))
	}
}

// TestOperatorHangupWithClosedPipeSaves: a terminal that closes under 'gcsput cp … | tee
// log' takes the pipe's reader with it, so gcsput's stdout and stderr are a pipe nobody
// reads when SIGHUP arrives. It still stops as an interruption (exit 130, not 141 from
// SIGPIPE), with the session saved: a rerun resumes from the server's offset.
func TestOperatorHangupWithClosedPipeSaves(t *testing.T) {
	e := newE2E(t)
	throttle := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindThrottle, BytesPerSecond: 8 << 20, Times: -1})
	data := e.write("big.bin", 12<<20)
	cmd, _, errb := e.command(nil, "cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	drained := make(chan struct{})
	go func() { io.Copy(io.Discard, pr); close(drained) }()
	e.startThenWait(cmd, "big.bin", 2<<20, errb)
	pw.Close() // the child holds the only writer
	pr.Close() // the reader (tee) is gone
	<-drained
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d (%v) after SIGHUP with its output pipe closed, want %d", code, cmd.ProcessState, exitInterrupted)
	}
	persisted, _ := e.srv.LastSession("bkt", "big.bin")
	throttle.Remove()
	r := e.must(nil, "cp", "--json", "--chunk-size", "1MiB", "big.bin", "gs://bkt/big.bin")
	files, _ := jsonLines(t, r.stdout)
	if rec := files["gs://bkt/big.bin"]; rec.Status != "resumed" || rec.ResumedFrom < persisted.Persisted || rec.ResumedFrom == 0 {
		t.Errorf("rerun: %+v; the server had %d bytes", rec, persisted.Persisted)
	}
	if !bytes.Equal(e.object("big.bin"), data) {
		t.Error("resumed object differs")
	}
}

// --- a gsutil user's mistakes, said once and in their words (issue 25) ---

// TestOperatorMistypedBucketSaidOnce: 'cp -r data gs://bakcup/nightly/' of 300 files
// printed 303 identical 404 lines, one per file. The batch asks first, says it once, and
// sends nothing: exit 2.
func TestOperatorMistypedBucketSaidOnce(t *testing.T) {
	e := newE2E(t)
	for i := range 300 {
		e.write(fmt.Sprintf("data/f%03d", i), 10)
	}
	r := e.run(nil, "cp", "-r", fastRetry, "data", "gs://bakcup/nightly/")
	want := "gcsput: gs://bakcup: bucket does not exist (check its name, or 'gcsput ls gs://bakcup'); nothing was transferred\n"
	if r.code != exitUsage || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stdout %q\nstderr %q\nwant exit 2 and stderr %q", r.code, r.stdout, r.stderr, want)
	}
	if n := e.srv.Count("storage.objects.insert"); n != 0 {
		t.Errorf("%d uploads were tried into a bucket that does not exist", n)
	}
	r = e.run(nil, "sync", fastRetry, "data", "gs://bakcup/nightly")
	if r.code != exitUsage || r.stderr != want {
		t.Errorf("sync: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestOperatorForbiddenBucketStopsAtFirst: when the bucket refuses every upload (403) and
// that could not be known beforehand (the permission check itself failed), the first
// refusal stops the batch: one failure line, one line saying why it stopped, exit 1, and
// the other files are not tried.
func TestOperatorForbiddenBucketStopsAtFirst(t *testing.T) {
	e := newE2E(t, fakegcs.Fault{Op: "storage.objects.insert", Kind: fakegcs.KindStatus, Status: 403, Times: -1},
		fakegcs.Fault{Op: "storage.buckets.testIamPermissions", Kind: fakegcs.KindStatus, Status: 403})
	for i := range 300 {
		e.write(fmt.Sprintf("data/f%03d", i), 10)
	}
	r := e.run(nil, "cp", "-r", "-j", "8", fastRetry, "data", "gs://bkt/nightly/")
	if r.code != exitFailed {
		t.Errorf("exit %d, want %d\n%s", r.code, exitFailed, r.stderr)
	}
	if n := strings.Count(r.stderr, "gcsput: failed:"); n != 1 {
		t.Errorf("%d failure lines, want 1:\n%s", n, r.stderr)
	}
	if !strings.Contains(r.stderr, "gcsput: gs://bkt: these credentials may not write there (403: ") || !strings.Contains(r.stderr, "nothing more was started\n") {
		t.Errorf("stderr does not say why the batch stopped:\n%s", r.stderr)
	}
	if n := e.srv.Count("storage.objects.insert"); n == 0 || n > 16 {
		t.Errorf("%d uploads tried; want the first ones in flight (at most 2 × -j), not all 300", n)
	}
}

// TestOperatorSyncSourceInUsersWords: a sync from a directory that is not there says it
// does not exist, and one from a file says it is a file, not "must be a directory".
func TestOperatorSyncSourceInUsersWords(t *testing.T) {
	e := newE2E(t)
	e.write("notes.txt", 10)
	r := e.run(nil, "sync", "--delete", "/mnt/backup-volume/data", "gs://bkt/data")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "gcsput sync: /mnt/backup-volume/data does not exist: the source of an upload sync is a directory") {
		t.Errorf("missing source: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.run(nil, "sync", "notes.txt", "gs://bkt/data")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "gcsput sync: notes.txt is a file: sync mirrors a directory; to copy one file use 'gcsput cp notes.txt gs://...'") {
		t.Errorf("file source: exit %d, stderr %q", r.code, r.stderr)
	}
	r = e.run(nil, "sync", "gs://bkt/data", "notes.txt")
	if r.code != exitUsage || !strings.HasPrefix(r.stderr, "gcsput sync: notes.txt is a file: the destination of a download sync is a directory") {
		t.Errorf("file destination: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestOperatorRmFolderHintsR: 'rm gs://B/prefix' of a folder said "no such object" with no
// hint; it now says to use -r, and deletes nothing.
func TestOperatorRmFolderHintsR(t *testing.T) {
	e := newE2E(t)
	e.srv.PutObject("bkt", "logs/a.log", []byte("a"))
	r := e.run(nil, "rm", "gs://bkt/logs")
	want := "gcsput: gs://bkt/logs: no such object, but objects exist under gs://bkt/logs/: use -r to remove everything under it ('gcsput rm -r gs://bkt/logs/')\n"
	if r.code != exitFailed || r.stderr != want {
		t.Errorf("rm of a folder: exit %d, stderr %q\nwant %q", r.code, r.stderr, want)
	}
	r = e.run(nil, "rm", "gs://bkt/logs/")
	if r.code != exitUsage || !strings.Contains(r.stderr, "gs://bkt/logs/ names a bucket or folder, not an object: use -r to remove everything under it") {
		t.Errorf("rm of a folder/: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run(nil, "rm", "gs://bkt/nothing"); r.code != exitFailed || r.stderr != "gcsput: gs://bkt/nothing: no such object\n" {
		t.Errorf("rm of a missing object: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := e.srv.Attrs("bkt", "logs/a.log"); err != nil {
		t.Errorf("logs/a.log: %v", err)
	}
}

// --- mv: a second process between the copy and the removal; sources that collide (issue 24) ---

// TestOperatorMvLocalFileModifiedBeforeRemoval: another process appends to the file after
// mv uploaded it, before mv removes it. The file no longer has the fingerprint that was
// uploaded: it is kept with its new bytes, the object holds the version before, exit 1.
func TestOperatorMvLocalFileModifiedBeforeRemoval(t *testing.T) {
	e := newE2E(t)
	before := e.write("log.txt", 100<<10)
	e.hooked(metadataGet("log.txt"), func() { // the verify step's read of the object
		f, err := os.OpenFile(filepath.Join(e.dir, "log.txt"), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("one more line\n")
			f.Close()
		}
		if err != nil {
			t.Error(err)
		}
	})
	r := e.run(nil, "mv", fastRetry, "log.txt", "gs://bkt/log.txt")
	got, err := os.ReadFile(filepath.Join(e.dir, "log.txt"))
	if r.code != exitFailed || err != nil || string(got) != string(before)+"one more line\n" {
		t.Fatalf("exit %d (want 1), local file: %v, %d bytes (want %d)\n%s", r.code, err, len(got), len(before)+14, r.stderr)
	}
	if !bytes.Equal(e.object("log.txt"), before) {
		t.Error("the object is not the version uploaded")
	}
	for _, w := range []string{"log.txt changed since it was uploaded (size changed from 102400 to 102414 bytes)",
		"gs://bkt/log.txt holds the version before", "the source was kept (both exist)", "1 file: 1 failed"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
		}
	}
}

// TestOperatorMvObjectOverwrittenBeforeDelete: another writer replaces the source object
// after mv copied it (to a file, or to another object) and before mv deletes it. The
// delete carries ifGenerationMatch of the generation copied, so the new object is kept
// (GCS answers 412, not faked here) and the destination holds the old one. The object
// case moves to another bucket: inside one, a move is one objects.move call, with no
// such moment (TestE2EMvInBucketSourceReplaced).
func TestOperatorMvObjectOverwrittenBeforeDelete(t *testing.T) {
	for _, dst := range []string{"copy.bin", "gs://other/copy.bin"} {
		t.Run(dst, func(t *testing.T) {
			e := newE2E(t)
			if err := e.srv.CreateBucket("other"); err != nil {
				t.Fatal(err)
			}
			old := []byte(strings.Repeat("old generation ", 5000))
			if _, err := e.srv.PutObject("bkt", "src.bin", old); err != nil {
				t.Fatal(err)
			}
			e.hooked(deleteOf("src.bin"), func() {
				if _, err := e.srv.PutObject("bkt", "src.bin", []byte("new generation")); err != nil {
					t.Error(err)
				}
			})
			r := e.run(nil, "mv", fastRetry, "gs://bkt/src.bin", dst)
			var copied []byte
			if naming.IsRemote(dst) {
				copied, _, _ = e.srv.Object("other", "copy.bin")
			} else {
				copied, _ = os.ReadFile(filepath.Join(e.dir, dst))
			}
			if r.code != exitFailed || string(e.object("src.bin")) != "new generation" || !bytes.Equal(copied, old) {
				t.Fatalf("exit %d (want 1), source %.30q, copy equal to the old generation: %v\n%s",
					r.code, e.object("src.bin"), bytes.Equal(copied, old), r.stderr)
			}
			for _, w := range []string{"gs://bkt/src.bin changed since it was copied", "Error 412", "the source was kept"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestOperatorMvRerunFinishes: a move whose delete kept failing left both sides; once
// the server is well, the same command finishes it.
func TestOperatorMvRerunFinishes(t *testing.T) {
	e := newE2E(t)
	data := e.write("a.bin", 64<<10)
	if _, err := e.srv.PutObject("bkt", "a.bin", data); err != nil {
		t.Fatal(err)
	}
	failing := e.srv.Inject(fakegcs.Fault{Op: "storage.objects.delete", Kind: fakegcs.KindStatus, Status: 503, Times: -1})
	if r := e.run(nil, "mv", fastRetry, "gs://bkt/a.bin", "out/"); r.code != exitFailed || !e.has("a.bin") || !e.localHas("out/a.bin") {
		t.Fatalf("first run: exit %d, object there %v, file there %v\n%s", r.code, e.has("a.bin"), e.localHas("out/a.bin"), r.stderr)
	}
	failing.Remove()
	r := e.must(nil, "mv", fastRetry, "gs://bkt/a.bin", "out/")
	got, _ := os.ReadFile(filepath.Join(e.dir, "out", "a.bin"))
	if e.has("a.bin") || !bytes.Equal(got, data) || !strings.Contains(r.stdout, "moved") {
		t.Fatalf("rerun: object still there %v, file equal %v\n%s", e.has("a.bin"), bytes.Equal(got, data), r.stdout)
	}
}

// TestOperatorMvRefusesCollidingDestinations: two sources with one base name moved into
// one folder, or a prefix moved into itself, would have a later copy overwrite an earlier
// one whose source is gone. mv refuses before anything moves (exit 2).
func TestOperatorMvRefusesCollidingDestinations(t *testing.T) {
	e := newE2E(t)
	e.write("x/f.txt", 10)
	e.write("y/f.txt", 20)
	for _, name := range []string{"p/f.txt", "q/f.txt", "p/sub/g.txt"} {
		if _, err := e.srv.PutObject("bkt", name, []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"x/f.txt", "y/f.txt", "gs://bkt/up/"}, "x/f.txt and y/f.txt both move to gs://bkt/up/f.txt"},
		{[]string{"gs://bkt/p/f.txt", "gs://bkt/q/f.txt", "down/"}, "gs://bkt/p/f.txt and gs://bkt/q/f.txt both move to down/f.txt"},
		{[]string{"gs://bkt/p/f.txt", "gs://bkt/q/f.txt", "gs://bkt/r/"}, "both move to gs://bkt/r/f.txt"},
		{[]string{"-r", "gs://bkt/p", "gs://bkt/p/sub/"}, "gs://bkt/p/ and gs://bkt/p/sub/p/ overlap"},
		{[]string{"-r", "gs://bkt/p/sub", "gs://bkt/p"}, "gs://bkt/p/sub/ and gs://bkt/p/ overlap"},
		{[]string{"gs://bkt/p/f.txt", "gs://bkt/p/f.txt"}, "is both the source and the destination"},
		{[]string{"x/f.txt", "gs://bkt/up/", "down/"}, "all local paths or all gs:// URLs"},
		{[]string{"-", "gs://bkt/up/s"}, "standard input"},
	} {
		r := e.run(nil, append([]string{"mv", fastRetry}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.says) {
			t.Errorf("mv %v: exit %d (want 2), stderr does not say %q:\n%s", c.args, r.code, c.says, r.stderr)
		}
	}
	if got := e.objects(); got != "p/f.txt p/sub/g.txt q/f.txt" || !e.localHas("x/f.txt") || !e.localHas("y/f.txt") || e.localHas("down") {
		t.Fatalf("something moved: objects %q", got)
	}
}

// TestOperatorMvDirectoryKeepsWhatItCannotMove: a directory moved with -r whose tree holds
// a named pipe: the files move, the pipe is skipped and stays, with the directory holding
// it; the directories left empty are removed. A symlink to a file is followed, as cp
// follows it: the object holds the file's bytes, the link goes, the file it names stays.
func TestOperatorMvDirectoryKeepsWhatItCannotMove(t *testing.T) {
	e := newE2E(t)
	e.write("outbox/a.txt", 10)
	e.write("outbox/empty/b.txt", 20)
	e.write("outbox/pipes/c.txt", 30)
	target := e.write("elsewhere.txt", 40)
	if err := syscall.Mkfifo(filepath.Join(e.dir, "outbox", "pipes", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(e.dir, "elsewhere.txt"), filepath.Join(e.dir, "outbox", "link")); err != nil {
		t.Fatal(err)
	}
	r := e.must(nil, "mv", fastRetry, "--json", "-r", "outbox", "gs://bkt/in/")
	files, sum := jsonLines(t, r.stdout)
	if sum.Moved != 4 || sum.Skipped != 1 || files["gs://bkt/in/outbox/pipes/fifo"].Status != "skipped" {
		t.Fatalf("summary %+v, pipe %+v", sum, files["gs://bkt/in/outbox/pipes/fifo"])
	}
	if got := e.objects(); got != "in/outbox/a.txt in/outbox/empty/b.txt in/outbox/link in/outbox/pipes/c.txt" {
		t.Fatalf("objects %q", got)
	}
	if !bytes.Equal(e.object("in/outbox/link"), target) || !e.localHas("elsewhere.txt") {
		t.Fatal("the link's object is not its file's bytes, or the file it names is gone")
	}
	left := []string{}
	_ = filepath.Walk(filepath.Join(e.dir, "outbox"), func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(e.dir, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if strings.Join(left, " ") != "outbox outbox/pipes outbox/pipes/fifo" {
		t.Fatalf("left behind: %v", left)
	}
}

// TestOperatorMvOntoAnotherSource: 'mv -r gs://bkt/src/A gs://bkt/to/A/g gs://bkt/to/' moved
// src/A/g over to/A/g and then moved that to to/g: to/A/g's only copy was lost, exit 0
// (found in review). A plan in which one operand moves onto what another moves from is
// refused before anything moves.
func TestOperatorMvOntoAnotherSource(t *testing.T) {
	e := newE2E(t)
	e.srv.PutObject("bkt", "src/A/g", []byte("new"))
	e.srv.PutObject("bkt", "to/A/g", []byte("the only copy"))
	r := e.run(nil, "mv", "-r", "gs://bkt/src/A", "gs://bkt/to/A/g", "gs://bkt/to/")
	if r.code != exitUsage || !strings.Contains(r.stderr, "one moves onto what the other moves from") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	for n, want := range map[string]string{"src/A/g": "new", "to/A/g": "the only copy"} {
		if b, _, err := e.srv.Object("bkt", n); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", n, b, err, want)
		}
	}
}
