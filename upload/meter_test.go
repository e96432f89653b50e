package upload

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
)

// batchLog collects BatchProgress reports.
type batchLog struct {
	mu  sync.Mutex
	all []BatchProgress
}

func (l *batchLog) add(b BatchProgress) { l.mu.Lock(); l.all = append(l.all, b); l.mu.Unlock() }

func (l *batchLog) last() BatchProgress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all[len(l.all)-1]
}

// BatchProgress adds up a directory's upload: its files and bytes are known
// from the walk before the first byte, the counts only grow, every retry
// and resume is counted, and at the end every file and byte is done with
// an ETA of 0 and a rate over the time the transfers ran.
func TestBatchProgressTotals(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	dir := t.TempDir()
	sizes := []int{1 << 20, 700 << 10, 300 << 10, 5}
	var total int64
	for i, n := range sizes {
		writeTemp(t, dir, fmt.Sprintf("f%d.bin", i), randBytes(n, uint64(80+i)))
		total += int64(n)
	}
	off := int64(256 << 10)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "d/f0.bin", Phase: fakegcs.PhaseChunk, Offset: &off, Kind: fakegcs.KindStatus, Status: 503})
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: "d/f1.bin", Phase: fakegcs.PhaseChunk, Offset: &off, Kind: fakegcs.KindReset})
	var log batchLog
	events := &eventLog{}
	c := newClient(t, srv, func(o *Options) {
		o.Parallelism, o.SmallFileThreshold = 3, -1
		o.BatchProgress = log.add
		o.OnEvent = events.add
	})
	if _, err := c.UploadDir(context.Background(), dir, URL{testBucket, "d"}, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	first := log.all[0]
	if first.Files != len(sizes) || first.Bytes != total || first.BytesDone != 0 {
		t.Errorf("first report %+v; want %d files and %d bytes known before any byte", first, len(sizes), total)
	}
	for i := 1; i < len(log.all); i++ {
		a, b := log.all[i-1], log.all[i]
		if b.FilesDone < a.FilesDone || b.Retries < a.Retries || b.Elapsed < a.Elapsed {
			t.Fatalf("report %d went back: %+v after %+v", i, b, a)
		}
	}
	end := log.last()
	wantRetries := events.count(resumable.EventRetry)
	if end.Files != len(sizes) || end.FilesDone != len(sizes) || end.Bytes != total || end.BytesDone != total ||
		end.ETA != 0 || end.Rate <= 0 || end.Elapsed <= 0 || end.Retries != wantRetries || wantRetries < 2 ||
		end.Resumes != events.count(resumable.EventResumed) {
		t.Errorf("last report %+v; want %d/%d files, %d/%d bytes, ETA 0, %d retries, %d resumes",
			end, len(sizes), len(sizes), total, total, wantRetries, events.count(resumable.EventResumed))
	}
}

// The meter's arithmetic, on a fake clock: the rate counts only the time
// transfers ran (not a pause between them, nor the time after the last
// ended), the ETA is what is left at that rate, a skipped file's bytes are
// done but not moved, a failed file's unsent bytes leave the total, and an
// item a stream yields is counted once, even when Expect counted it ahead.
func TestMeterArithmetic(t *testing.T) {
	now := time.Unix(0, 0)
	var got []BatchProgress
	m := newMeter(func(b BatchProgress) { got = append(got, b) }, func() time.Time { return now })
	m.expect(3, 300)
	m.pulled() // counted ahead: not counted again
	a, b, s := &Result{Source: "a", Size: 100}, &Result{Source: "b", Size: 100}, &Result{Source: "s", Size: 100}
	m.update(a, 0, 100)
	now = now.Add(time.Second)
	m.update(a, 50, 100)
	if g := got[len(got)-1]; g.Rate != 50 || g.ETA != 5*time.Second || g.Elapsed != time.Second {
		t.Errorf("mid-way %+v; want 50 B/s, ETA 5s over 1s", g)
	}
	now = now.Add(time.Second)
	m.update(a, 100, 100)
	a.Status = StatusUploaded
	m.end(a) // 100 bytes moved in 2s
	now = now.Add(time.Hour)
	s.Status = StatusSkipped
	m.end(s) // done, never moved
	m.update(b, 0, 100)
	now = now.Add(2 * time.Second)
	m.update(b, 40, 100)
	b.Status = StatusFailed
	m.end(b)
	now = now.Add(time.Hour) // after the end: not counted
	m.event(resumable.Event{Kind: resumable.EventRetry})
	m.event(resumable.Event{Kind: resumable.EventResumed})
	g := got[len(got)-1]
	want := BatchProgress{Files: 3, FilesDone: 3, Bytes: 240, BytesDone: 240, Elapsed: 4 * time.Second, Rate: 35, ETA: 0, Retries: 1, Resumes: 1}
	if g != want {
		t.Errorf("end %+v\nwant %+v", g, want)
	}
	// An interrupted transfer's bytes stay in the total: a rerun sends them.
	c := &Result{Source: "c", Size: 100}
	m.update(c, 30, 100)
	c.Status = StatusInterrupted
	m.end(c)
	if g := got[len(got)-1]; g.Bytes != 340 || g.BytesDone != 270 || g.FilesDone != 4 {
		t.Errorf("after an interrupt %+v; want 270 of 340 bytes, 4 files done", g)
	}
}

// A composite upload's events name the user's object and the part ("part
// 2 of 4"), never the temporary component; so do a sliced download's.
func TestPartEventsNameTheUsersObject(t *testing.T) {
	srv := newServer(t, fakegcs.Options{})
	data := randBytes(4*512<<10, 90)
	src := writeTemp(t, t.TempDir(), "big.bin", data)
	dst := URL{testBucket, "big.bin"}
	plan := planOf(t, src, dst, 512<<10)
	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Object: plan[1].Name, Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 503})
	events := &eventLog{}
	c := newClient(t, srv, composeOpts(512<<10, nil, func(o *Options) {
		o.ParallelUpload = ParallelOn
		o.OnEvent = events.add
		o.SliceThreshold, o.MaxSlices = 1<<20, 4
	}))
	if _, err := c.UploadFile(context.Background(), src, dst, UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Object: "big.bin", Offset: new(int64(1 << 20)), Kind: fakegcs.KindTruncate, AfterBytes: 1000})
	if _, err := c.Download(context.Background(), dst, t.TempDir()+"/big.bin", DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	events.mu.Lock()
	defer events.mu.Unlock()
	var retries []string
	for _, e := range events.events {
		if e.Object != "big.bin" {
			t.Fatalf("event names %s: %s", e.Object, e)
		}
		if e.Kind == resumable.EventRetry {
			retries = append(retries, fmt.Sprintf("%d/%d", e.Part, e.Parts))
		}
	}
	if want := []string{"2/4", "3/4"}; fmt.Sprint(retries) != fmt.Sprint(want) {
		t.Errorf("retries of parts %v; want %v (component 2 of the upload, slice 3 of the download)", retries, want)
	}
}
