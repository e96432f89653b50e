package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/bwlimit"
	"github.com/gcsput/gcsput/internal/jobrec"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/upload"
)

// job is the machinery of one transfer command: the upload client and what turns its
// callbacks into output — the progress bar, -v lines, the --log file and the reporter.
type job struct {
	client  *upload.Client
	prog    *progress
	log     *eventLog
	logged  concurrencyRecord // the last "concurrency" line of --log
	rep     *reporter
	verbose bool
	retries int // the attempt budget shown in "retry 3/12"; 0 when the policy has its own
	watch   func(upload.Progress)
	hook    func(resumable.Event)

	// inFlight names each transfer and knows whether its size is in the bar's total.
	inFlight *jobrec.Tracker

	mu       sync.Mutex
	stateDir string // where sessions (and -z's compressed copies) are kept
	shard    shard.Spec
	// noBilling is the first result refused by a requester-pays bucket, and billed how
	// many were: reported once by finish (keys.go).
	noBilling error
	billed    int
	// retained counts what GCS refused for a hold or a retention: said once, at the end.
	retained retainedTally
	op       string // every record's op when set ("move"), else upload or download
	// noteDelete says once per bucket until when what a sync --delete or
	// mv deleted there can be restored (softdelete.go).
	noteDelete func(bucket string)
}

// jobConfig is everything a transfer command's flags say about its job.
type jobConfig struct {
	remote   *remoteFlags
	transfer *transferFlags
	stateDir string
	noState  bool // streams to stdout keep nothing to resume
	// dataOnStdout: the object's bytes go to stdout, so records go to stderr.
	dataOnStdout bool
	// retry overrides the policy from --retry (the demo's fast policy).
	retry retry.Policy
	// resumableOnly sends even small files through a resumable session (the demo's
	// faults hit chunks) instead of one multipart request.
	resumableOnly bool
	// watch and hook, when set, also see every progress report and event (the demo
	// arms its faults and counts retries with them).
	watch func(upload.Progress)
	hook  func(resumable.Event)
	// identity names the job in the summary (cp and sync; nil for resume).
	identity *jobrec.Identity
	// op, when set, is every record's op ("move" for mv).
	op string
	// manifest is cp's -L FILE (upload.Options.Manifest); "" for none.
	manifest string
}

// newJob connects and prepares the outputs. Close it when done.
func (a *app) newJob(ctx context.Context, cfg jobConfig) (*job, error) {
	t := cfg.transfer
	mode := t.progressMode()
	show := mode == "always" || mode == "auto" && a.isTerminal(a.stderr)
	j := &job{
		prog:     newProgress(a.stderr, show),
		verbose:  cfg.remote.verbose,
		watch:    cfg.watch,
		hook:     cfg.hook,
		inFlight: jobrec.NewTracker(),
	}
	out := a.stdout
	if cfg.dataOnStdout {
		out = a.stderr
	}
	j.rep = newReporter(out, j.prog, t.json, t.quiet, time.Now())
	var err error
	if j.log, err = openEventLog(cfg.remote.logFile); err != nil {
		return nil, err
	}
	if !cfg.noState {
		if cfg.stateDir, err = stateDirOrDefault(cfg.stateDir); err != nil {
			j.close()
			return nil, err
		}
	}
	j.stateDir, j.shard, j.op = cfg.stateDir, t.shard, cfg.op
	warn := func(msg string) { j.prog.printf("gcsput: warning: %s\n", escapeText(msg)) }
	if err := jobrec.CheckSplit(cfg.stateDir, cfg.identity, t.shardSpec, t.shard, warn); err != nil {
		j.close()
		return nil, usagef("%v", err)
	}
	j.rep.sum.Shard, j.rep.sum.Job = t.shard.String(), cfg.identity
	if err := j.connect(ctx, cfg); err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

// connect makes the job's upload.Client: the retry policy, the bandwidth
// limit and the transfer options of the command line.
func (j *job) connect(ctx context.Context, cfg jobConfig) error {
	t := cfg.transfer
	runner, err := cfg.remote.runner(cfg.retry)
	if err != nil {
		return err
	}
	j.retries = runner.Budget()
	bps, err := t.rate()
	if err != nil {
		return err
	}
	ao := cfg.remote.authOptions()
	if bps > 0 {
		// One limit for the run: every worker's requests and responses draw from it.
		base, err := cfg.remote.transport(t.parallel)
		if err != nil {
			return err
		}
		ao.Base = bwlimit.New(bps).Transport(base)
	}
	o := upload.Options{
		Endpoint:           cfg.remote.endpoint,
		Auth:               ao,
		ChunkSize:          int(t.chunkSize),
		Retry:              runner,
		Parallelism:        t.parallel,
		SliceThreshold:     t.sliceAt,
		MaxSlices:          t.maxSlices,
		ParallelUpload:     upload.ParallelUploadMode(t.parallelUpload),
		ParallelThreshold:  t.parallelThreshold,
		ComponentSize:      t.componentSize,
		SmallFileThreshold: smallFiles(cfg.resumableOnly),
		StateDir:           cfg.stateDir,
		NoState:            cfg.noState,
		NoChecksumCache:    t.noSumCache,
		Progress:           j.onProgress,
		BatchProgress:      j.batch,
		OnEvent:            j.onEvent,
		// Each file is reported when it ends, not when the batch does: a
		// night-long backup shows (and, with --json, records) its progress.
		OnResult: func(r *upload.Result) { j.add(r) },
		Warn:     j.rep.warn,
		Shard:    t.shard.String(),
		Manifest: cfg.manifest,
	}
	cfg.remote.keys.apply(&o)
	if j.client, err = upload.New(ctx, o); err != nil {
		return err
	}
	n := newSoftNoter(j.rep.warn, j.client)
	j.noteDelete = func(bucket string) { n.deleted(ctx, bucket) }
	return nil
}

// smallFiles is upload's SmallFileThreshold: its default, or -1 for "always resumable".
func smallFiles(resumableOnly bool) int64 {
	if resumableOnly {
		return -1
	}
	return 0
}

func (j *job) close() {
	j.prog.close()
	if j.client != nil {
		j.client.Close()
	}
	j.log.close()
}

// expect puts a file's size into the bar's total before it starts, so the ETA covers the
// whole job from the first byte.
func (j *job) expect(url, name string, size int64) {
	j.inFlight.Expect(url, name)
	j.prog.addTotal(size)
	j.client.Expect(1, size)
}

// expectAll adds a whole job's bytes to the bar's total before any starts, as a sync's
// plan knows them (upload.Client.Sync counts its files and bytes in BatchProgress
// itself): no transfer of the job adds its size again.
func (j *job) expectAll(bytes int64) {
	j.inFlight.ExpectAll()
	j.prog.addTotal(bytes)
}

// onProgress is upload's Progress callback, called concurrently from the workers.
func (j *job) onProgress(p upload.Progress) {
	if j.watch != nil {
		j.watch(p)
	}
	name, first := j.inFlight.Progress(p)
	if first {
		j.prog.addTotal(p.Size)
	}
	j.prog.update(name, p.Done, p.Size)
}

// batch is upload's BatchProgress callback: the bar's totals, and a "concurrency" line in
// --log each time a bucket's window changes (or a request is refused). Calls come one at a
// time (upload's meter), so logged needs no lock.
func (j *job) batch(b upload.BatchProgress) {
	j.prog.batch(b)
	now := jobrec.ConcurrencyOf(b)
	if now != j.logged && now.Concurrency > 0 {
		j.logged = now
		j.log.write("concurrency", now)
	}
}

// concurrencyRecord is a "concurrency" line of --log (internal/jobrec).
type concurrencyRecord = jobrec.Concurrency

// onEvent is upload's OnEvent callback: every step goes to --log, retries and resumes to
// stderr with -v (the demo always shows them).
func (j *job) onEvent(e resumable.Event) {
	if j.hook != nil {
		j.hook(e)
	}
	url := "gs://" + e.Bucket + "/" + e.Object
	j.log.write(string(e.Kind), jobrec.Event(e, redact))
	if !j.verbose {
		return
	}
	name := j.inFlight.Name(url)
	switch e.Kind {
	case resumable.EventRetry:
		j.prog.printf("%s\n", escapeText(partRetryLine(name, e.Part, e.Parts, e.Attempt, j.retries, e.Wait, e.Err)))
	case resumable.EventResumed:
		from := "the server's offset"
		if j.inFlight.Down(url) {
			from = "the bytes already written"
		}
		j.prog.printf("%s: resuming at %s (%s)\n", escapeText(partName(name, e.Part, e.Parts)), formatSize(e.Offset), from)
	}
}

// add reports finished transfers: stdout lines or JSON, failures on stderr, the log.
func (j *job) add(results ...*upload.Result) {
	for _, r := range results {
		if r == nil {
			continue
		}
		rec := recordOf(r)
		if rec.Op == "delete" { // sync --delete's: no transfer, nothing on the bar
			j.record(rec)
			if r.OK() && r.Bucket != "" && j.noteDelete != nil {
				j.noteDelete(r.Bucket)
			}
			continue
		}
		url := jobrec.Key(rec.Source, rec.Destination) // as onProgress keys it
		if j.op != "" {
			rec.Op = j.op
		}
		if j.op == "move" && r.OK() && r.Status != upload.StatusSkipped && j.noteDelete != nil {
			if src, err := upload.ParseURL(r.Source); err == nil && naming.IsRemote(r.Source) {
				defer j.noteDelete(src.Bucket) // after the move's line
			}
		}
		j.prog.end(j.inFlight.Name(url), r.Size, r.OK())
		j.inFlight.Done(url) // a million-file run must not keep a name per file
		if j.billing(r) {
			continue
		}
		if j.retained.add(r) {
			rec.Shard = j.shard.String()
			j.log.write("result", rec)
			j.rep.addQuietly(rec)
			continue
		}
		if errors.Is(r.Err, upload.ErrBatchStopped) { // said once already
			rec.Shard = j.shard.String()
			j.log.write("result", rec)
			j.rep.addQuietly(rec)
			continue
		}
		j.record(rec)
	}
}

// record reports one finished action: the reporter (stdout, stderr, --json) and the log,
// with the job's shard.
func (j *job) record(rec fileRecord) {
	rec.Shard = j.shard.String()
	j.log.write("result", rec)
	j.rep.add(rec)
}

// finish prints the summary and returns the error that sets the exit code.
func (j *job) finish() error {
	if line := j.retained.line(); line != "" {
		j.rep.warn(line) // once for the batch, not once per file
	}
	j.prog.close()
	j.rep.ran(j.prog.ran())
	lib := j.prog.library()
	j.rep.concurrency(lib.Concurrency, lib.LeastConcurrency, lib.Refusals)
	err := j.rep.finish(time.Now())
	j.log.write("summary", j.rep.sum)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.noBilling != nil {
		return requesterPaysError(j.noBilling, j.billed)
	}
	return err
}

// recordOf turns a library result into the CLI's record, its save error redacted.
func recordOf(r *upload.Result) fileRecord {
	rec := jobrec.Of(r)
	rec.SaveError = redact(rec.SaveError)
	return rec
}
