package demo

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/human"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

// runJob runs one transfer with its own client (a fresh one is what a new process would
// have) and reports its result in the demo's words.
func (d *demo) runJob(ctx context.Context, expect int64, do func(j *Job) *upload.Result) (*upload.Result, error) {
	j, err := d.c.NewJob(ctx, d.job)
	if err != nil {
		return nil, err
	}
	d.say = func(s string) { j.Printf("%s\n", s) }
	j.Expect(d.dst.String(), filepath.Base(d.src), expect)
	r := do(j)
	j.Close()
	d.say = d.plainSay
	return r, nil
}

// upload sends the file, is interrupted at 70%, and resumes from the saved session.
func (d *demo) upload(ctx context.Context) error {
	if d.srv != nil {
		d.faults = newFaultScript(d.srv, d.dst, d.c.Size, d.chunk(), func(s string) { d.say(s) })
		d.say("Faults the server will inject into the upload, one after the other as it progresses")
		d.say("(into the next upload request in the bucket: the file's session, or its components' when it goes up as a composite):")
		for _, s := range d.faults.steps {
			d.say("   • " + s.desc)
		}
		d.faults.arm(0)
		if d.job.Retry != nil {
			d.say("Retries wait by GCS's truncated exponential backoff scaled down tenfold for the demo")
			d.say("   (min(0.1 s·2^n + up to 0.1 s, 2 s); by default gcsput waits 1–2 s, 2–3 s, 4–5 s … up to 32 s).")
		}
	}
	d.setPhase("upload")
	d.say(fmt.Sprintf("Uploading %s to %s in chunks of %s ...", human.Size(d.c.Size), d.dst, human.Size(d.chunk())))
	uctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.mu.Lock()
	d.interrupt = cancel
	d.mu.Unlock()
	start := time.Now()
	r, err := d.runJob(ctx, d.c.Size, func(j *Job) *upload.Result {
		r, _ := j.Client.UploadFile(uctx, d.src, d.dst, upload.UploadOptions{})
		return r
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	d.sent["upload"] += r.Transferred
	d.mu.Lock()
	missed := d.interrupt != nil
	d.interrupt = nil
	d.mu.Unlock()
	if missed && r.OK() {
		return fmt.Errorf("%w: the upload ended before the announced interruption (it waits for every fault to fire and be retried): try a larger --size", errDemo)
	}
	switch r.Status {
	case upload.StatusInterrupted:
		d.say(fmt.Sprintf("   The session is saved in %s; resuming it with a new client, as 'gcsput resume' would in a new process ...", d.job.StateDir))
		if r, err = d.resume(ctx); err != nil {
			return err
		}
	case upload.StatusFailed:
		return fmt.Errorf("%w: upload: %v", errDemo, r.Err)
	}
	if r.Status != upload.StatusResumed && r.Status != upload.StatusUploaded {
		return fmt.Errorf("%w: upload ended %s: %v", errDemo, r.Status, r.Err)
	}
	if d.faults != nil {
		if miss := d.faults.unfired(); len(miss) > 0 {
			return fmt.Errorf("%w: the upload ended before these announced faults fired: %s", errDemo, strings.Join(miss, "; "))
		}
	}
	d.say(fmt.Sprintf("✔  Uploaded in %.1fs: generation %d, CRC32C %s (checked by the server before it created the object).",
		time.Since(start).Seconds(), r.Generation, resumable.EncodeCRC32C(r.CRC32C)))
	return nil
}

// resume finishes the saved upload through Client.Resume, as 'gcsput resume' does.
func (d *demo) resume(ctx context.Context) (*upload.Result, error) {
	r, err := d.runJob(ctx, d.c.Size, func(j *Job) *upload.Result {
		results, _ := j.Client.Resume(ctx)
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
		d.say(fmt.Sprintf("   Resumed from %s: the bytes the server already had were not sent again.", human.Size(r.ResumedFrom)))
	}
	return r, ctx.Err()
}

// download fetches the object back; the fake server cuts the stream once on the way.
func (d *demo) download(ctx context.Context) error {
	var cut *fakegcs.Injection
	if d.srv != nil {
		// The first media request, once (its resumption asks for Range: bytes=N-). An object
		// of upload.DefaultSliceThreshold or more comes down in slices, and that first
		// request reads only the first slice: the cut must fall inside it.
		first, how := d.c.Size, ""
		if d.c.Size >= upload.DefaultSliceThreshold {
			first = d.c.Size / upload.DefaultMaxSlices
			how = fmt.Sprintf(" as %d slices (ranged GETs at once)", upload.DefaultMaxSlices)
		}
		at := first * 2 / 5
		cut = d.srv.Inject(fakegcs.Fault{Op: "storage.objects.get", Bucket: d.dst.Bucket, Object: d.dst.Object,
			Phase: fakegcs.PhaseMedia, Offset: new(int64(0)), Kind: fakegcs.KindTruncate, AfterBytes: at})
		defer cut.Remove()
		d.say(fmt.Sprintf("Downloading it back%s; the server will cut the connection after sending %s ...", how, human.Size(at)))
	} else {
		d.say("Downloading it back ...")
	}
	d.setPhase("download")
	start := time.Now()
	r, err := d.runJob(ctx, d.c.Size, func(j *Job) *upload.Result {
		r, _ := j.Client.Download(ctx, d.dst, d.copyPath(), upload.DownloadOptions{})
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
	if cut != nil && (cut.Fired() == 0 || r.Attempts < 2) {
		return fmt.Errorf("%w: the download did not meet the announced cut (fired %d times, %d attempts)", errDemo, cut.Fired(), r.Attempts)
	}
	d.say(fmt.Sprintf("✔  Downloaded in %.1fs; its CRC32C matched the object's.", time.Since(start).Seconds()))
	if d.srv == nil && !d.c.Keep {
		if err := d.deleteObject(ctx); err != nil {
			return err
		}
	}
	return nil
}

// deleteObject deletes the object from the real bucket.
func (d *demo) deleteObject(ctx context.Context) error {
	if err := d.c.Delete(ctx, d.dst); err != nil {
		return fmt.Errorf("deleting %s: %w", d.dst, err)
	}
	d.say("Deleted " + d.dst.String())
	return nil
}

// chunk is the chunk size in effect.
func (d *demo) chunk() int64 {
	if d.c.ChunkSize > 0 {
		return d.c.ChunkSize
	}
	return upload.DefaultChunkSize
}

// summary prints what happened, with the server's own counters when it is ours.
func (d *demo) summary(elapsed time.Duration) {
	w := d.c.Stdout
	fmt.Fprintf(w, "\nSummary (%.1fs in all)\n", elapsed.Seconds())
	fmt.Fprintf(w, "  file       %s, verified byte for byte after the round trip\n", human.Size(d.c.Size))
	fmt.Fprintf(w, "  retries    %d (each printed above with its wait and cause)\n", d.count("", resumable.EventRetry))
	fmt.Fprintf(w, "  resumes    %d of the upload from the server's offset (status queries: %d), %d of the download from the bytes written\n",
		d.count("upload", resumable.EventResumed), d.count("upload", resumable.EventStatus), d.count("download", resumable.EventResumed))
	fmt.Fprintf(w, "  upload     %s sent for %s: %s re-sent after faults\n", human.Size(d.sent["upload"]), human.Size(d.c.Size), human.Size(max(0, d.sent["upload"]-d.c.Size)))
	fmt.Fprintf(w, "  download   %s received\n", human.Size(d.sent["download"]))
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
	fmt.Fprintf(w, "  server     received %s on %d upload sessions, persisted %s\n", human.Size(recv), len(st.Sessions), human.Size(kept))
}
