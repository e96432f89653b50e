package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// runJob runs one transfer with its own client (a fresh one is what a new process would
// have) and reports its result in the demo's words.
func (d *demo) runJob(ctx context.Context, expect int64, do func(j *job) *upload.Result) (*upload.Result, error) {
	j, err := d.a.newJob(ctx, d.cfg)
	if err != nil {
		return nil, err
	}
	d.say = func(s string) { j.prog.printf("%s\n", s) }
	j.expect(d.dst.String(), filepath.Base(d.src), expect)
	r := do(j)
	j.close()
	d.say = d.plainSay
	return r, nil
}

// upload sends the file, is interrupted at 70%, and resumes from the saved session.
func (d *demo) upload(ctx context.Context) error {
	if d.srv != nil {
		d.faults = newFaultScript(d.srv, d.dst, d.f.size, d.chunk(), func(s string) { d.say(s) })
		d.say("Faults the server will inject into the upload, one after the other as it progresses:")
		for _, s := range d.faults.steps {
			d.say("   • " + s.desc)
		}
		d.faults.arm(0)
		if d.cfg.retry != nil {
			d.say("Retries wait by GCS's truncated exponential backoff scaled down tenfold for the demo")
			d.say("   (min(0.1 s·2^n + up to 0.1 s, 2 s); by default gcsput waits 1–2 s, 2–3 s, 4–5 s … up to 32 s).")
		}
	}
	d.say(fmt.Sprintf("Uploading %s to %s in chunks of %s ...", formatSize(d.f.size), d.dst, formatSize(d.chunk())))
	uctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.mu.Lock()
	d.interrupt = cancel
	d.mu.Unlock()
	start := time.Now()
	r, err := d.runJob(ctx, d.f.size, func(j *job) *upload.Result {
		r, _ := j.client.UploadFile(uctx, d.src, d.dst, upload.UploadOptions{})
		return r
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	d.sent["upload"] += r.Transferred
	switch r.Status {
	case upload.StatusInterrupted:
		d.say(fmt.Sprintf("   The session is saved in %s; resuming it with a new client, as 'gcsput resume' would in a new process ...", d.cfg.stateDir))
		if r, err = d.resume(ctx); err != nil {
			return err
		}
	case upload.StatusFailed:
		return fmt.Errorf("%w: upload: %v", errDemo, r.Err)
	}
	if r.Status != upload.StatusResumed && r.Status != upload.StatusUploaded {
		return fmt.Errorf("%w: upload ended %s: %v", errDemo, r.Status, r.Err)
	}
	d.say(fmt.Sprintf("✔  Uploaded in %.1fs: generation %d, CRC32C %s (checked by the server before it created the object).",
		time.Since(start).Seconds(), r.Generation, resumable.EncodeCRC32C(r.CRC32C)))
	return nil
}

// resume finishes the saved upload through Client.Resume, as 'gcsput resume' does.
func (d *demo) resume(ctx context.Context) (*upload.Result, error) {
	r, err := d.runJob(ctx, d.f.size, func(j *job) *upload.Result {
		results, _ := j.client.Resume(ctx)
		if len(results) != 1 {
			return &upload.Result{Status: upload.StatusFailed, Err: fmt.Errorf("%d saved sessions, want 1", len(results))}
		}
		return results[0]
	})
	if err != nil {
		return nil, err
	}
	d.sent["upload"] += r.Transferred
	if r.Status == upload.StatusResumed {
		d.say(fmt.Sprintf("   Resumed from %s: the bytes the server already had were not sent again.", formatSize(r.ResumedFrom)))
	}
	return r, ctx.Err()
}

// download fetches the object back; the fake server cuts the stream once on the way.
func (d *demo) download(ctx context.Context) error {
	if d.srv != nil {
		// Offset 0 matches the first media request, not its resumption (Range: bytes=N-).
		// Times -1 because fakegcs also counts the metadata GET before it as offset 0.
		cut := d.f.size * 2 / 5
		in := d.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Bucket: d.dst.Bucket, Object: d.dst.Object,
			Offset: new(int64(0)), Kind: fakegcs.KindTruncate, AfterBytes: cut, Times: -1})
		defer in.Remove()
		d.say(fmt.Sprintf("Downloading it back; the server will cut the connection after sending %s ...", formatSize(cut)))
	} else {
		d.say("Downloading it back ...")
	}
	start := time.Now()
	r, err := d.runJob(ctx, d.f.size, func(j *job) *upload.Result {
		r, _ := j.client.Download(ctx, d.dst, d.copyPath(), upload.DownloadOptions{})
		return r
	})
	if err != nil {
		return err
	}
	if r.Status != upload.StatusDownloaded {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: download: %v", errDemo, r.Err)
	}
	d.sent["download"] += r.Transferred
	d.say(fmt.Sprintf("✔  Downloaded in %.1fs; its CRC32C matched the object's.", time.Since(start).Seconds()))
	if d.srv == nil && !d.f.keep {
		if err := d.deleteObject(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) deleteObject(ctx context.Context) error {
	c, done, err := d.a.metaClient(ctx, &d.f.remote, d.cfg.stateDir)
	if err != nil {
		return err
	}
	defer done()
	if err := c.Delete(ctx, d.dst); err != nil {
		return fmt.Errorf("deleting %s: %w", d.dst, err)
	}
	d.say("Deleted " + d.dst.String())
	return nil
}

// chunk is the chunk size in effect.
func (d *demo) chunk() int64 { return sizeOrDefault(d.f.transfer.chunkSize, upload.DefaultChunkSize) }

// summary prints what happened, with the server's own counters when it is ours.
func (d *demo) summary(elapsed time.Duration) {
	w := d.a.stdout
	fmt.Fprintf(w, "\nSummary (%.1fs in all)\n", elapsed.Seconds())
	fmt.Fprintf(w, "  file       %s, verified byte for byte after the round trip\n", formatSize(d.f.size))
	fmt.Fprintf(w, "  retries    %d (each printed above with its wait and cause)\n", d.count(resumable.EventRetry))
	fmt.Fprintf(w, "  resumes    %d from the server's offset (status queries: %d)\n", d.count(resumable.EventResumed), d.count(resumable.EventStatus))
	fmt.Fprintf(w, "  upload     %s sent for %s: %s re-sent after faults\n", formatSize(d.sent["upload"]), formatSize(d.f.size), formatSize(max(0, d.sent["upload"]-d.f.size)))
	fmt.Fprintf(w, "  download   %s received\n", formatSize(d.sent["download"]))
	if d.srv == nil {
		return
	}
	st := d.srv.Stats()
	var kinds []string
	for k, n := range st.Faults {
		kinds = append(kinds, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "  faults     %s (fakegcs's count)\n", strings.Join(kinds, ", "))
	var recv, kept int64
	for _, s := range st.Sessions {
		recv, kept = recv+s.Received, kept+s.Persisted
	}
	fmt.Fprintf(w, "  server     received %s on %d upload sessions, persisted %s\n", formatSize(recv), len(st.Sessions), formatSize(kept))
}

// faultScript arms the demo's faults one at a time as the upload progresses, so each one
// hits a chunk whatever the file and chunk sizes, and says which one fired.
type faultScript struct {
	mu    sync.Mutex
	srv   *fakegcs.Server
	size  int64
	steps []*faultStep
	say   func(string)
}

type faultStep struct {
	at    float64 // arm once this fraction of the file is persisted (and the step before fired)
	desc  string
	fault fakegcs.Fault
	in    *fakegcs.Injection
	told  int
}

func newFaultScript(srv *fakegcs.Server, dst upload.URL, size, chunk int64, say func(string)) *faultScript {
	op := func(f fakegcs.Fault) fakegcs.Fault {
		f.Op, f.Bucket, f.Object = "storage.objects.insert", dst.Bucket, dst.Object
		return f
	}
	half := chunk / 2
	step := func(at float64, desc string, f fakegcs.Fault) *faultStep {
		return &faultStep{at: at, desc: desc, fault: op(f)}
	}
	return &faultScript{srv: srv, size: size, say: say, steps: []*faultStep{
		step(0, "503 Service Unavailable when the session is created",
			fakegcs.Fault{Phase: fakegcs.PhaseInitiate, Kind: fakegcs.KindStatus, Status: 503}),
		step(0.10, "503 Service Unavailable twice on a chunk",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 503, Times: 2}),
		step(0.25, "429 Too Many Requests with Retry-After: 1",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindStatus, Status: 429, RetryAfter: time.Second}),
		step(0.35, "connection reset before a chunk is read",
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindReset}),
		step(0.45, fmt.Sprintf("308 that acknowledges only %s of a chunk", formatSize(half)),
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindShort308, Persist: half}),
		step(0.55, fmt.Sprintf("connection reset after %s of a chunk, of which %s is persisted", formatSize(half+half/2), formatSize(half)),
			fakegcs.Fault{Phase: fakegcs.PhaseChunk, Kind: fakegcs.KindReset, AfterBytes: half + half/2, Persist: half}),
	}}
}

// arm injects the next fault when its turn has come: the previous one fired and the
// upload reached its point.
func (s *faultScript) arm(done int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range s.steps {
		if st.in != nil {
			continue
		}
		if i > 0 && (s.steps[i-1].in == nil || s.steps[i-1].in.Fired() == 0) {
			return
		}
		if float64(done) < st.at*float64(s.size) {
			return
		}
		st.in = s.srv.Inject(st.fault)
	}
}

// tell prints each fault that fired since the last call.
func (s *faultScript) tell() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.steps {
		if st.in == nil {
			continue
		}
		if n := st.in.Fired(); n > st.told {
			st.told = n
			s.say("⚡ fakegcs injected: " + st.desc)
		}
	}
}
