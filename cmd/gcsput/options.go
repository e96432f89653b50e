package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/upload"
)

// remoteFlags are the options of every command that talks to GCS.
type remoteFlags struct {
	endpoint    string        // --endpoint; "" means STORAGE_EMULATOR_HOST or Google's
	credentials string        // --credentials key file; "" means ADC
	retry       string        // --retry policy spec; "" means GCS's truncated exponential
	retries     int           // --retries: attempts without progress; 0 means 12
	deadline    time.Duration // --deadline per request without progress; 0 means 10 minutes
	verbose     bool          // -v: log each retry on stderr
	logFile     string        // --log: NDJSON event log
	protocol    string        // --client-protocol: http1 or http2 over TLS; "" means auth.DefaultProtocol
	h2streams   int           // --http2-streams: requests per HTTP/2 connection before another opens
	keys        keyFlags      // --encryption-key, --decryption-keys, --billing-project (keys.go)
}

func (r *remoteFlags) register(fs *flagSet) {
	defer fs.Group(fs.Group("Connection"))
	fs.String(&r.endpoint, "endpoint", "", "URL",
		"endpoint or emulator (default $STORAGE_EMULATOR_HOST)\n"+
			"GCS endpoint; an http:// one (an emulator, e.g. http://127.0.0.1:4443) gets no credentials (default: $STORAGE_EMULATOR_HOST, else Google)")
	fs.String(&r.credentials, "credentials", "", "FILE",
		"key file (default: Application Default Credentials)\n"+
			"service-account or authorized-user key file (default: Application Default Credentials)")
	fs.Group("Retries")
	fs.String(&r.retry, "retry", "", "POLICY",
		"backoff policy: gcs, java, drive, ... (default gcs)\n"+
			"backoff policy: gcs, gcs:max=64s, java, drive, decorrelated:base=100ms,cap=20s, full:..., constant:wait=1s (default gcs)")
	fs.Int(&r.retries, "retries", "", "N",
		"attempts per request without progress (default 12)\n"+
			"attempts per request without progress before giving up, including the first (default 12)")
	fs.Duration(&r.deadline, "deadline", "", "DURATION",
		"time a request has to succeed (default 10m)\n"+
			"time allowed for a request to succeed, counted again after each acknowledged chunk (default 10m)")
	fs.Group("Output")
	fs.Bool(&r.verbose, "verbose", "v", "log every retry on stderr: attempt, wait and cause")
	fs.String(&r.logFile, "log", "", "FILE",
		"append an NDJSON event log to FILE\n"+
			"append an NDJSON event log (every chunk, status query and retry; never credentials or session IDs)")
	fs.Group("Connection")
	fs.String(&r.protocol, "client-protocol", "", "http1|http2",
		"HTTP version over TLS (default http1)\n"+
			"HTTP version over TLS: http1 gives each data stream its own connection, http2 multiplexes them (default http1; docs/performance.md: The wire)")
	fs.Int(&r.h2streams, "http2-streams", "", "N",
		"with http2: a connection per N requests (default: one)\n"+
			"with --client-protocol http2, open another connection when each carries N requests (default 0: one connection)")
	r.keys.register(fs)
}

// check validates the values the flag types cannot.
func (r *remoteFlags) check() error {
	if r.retries < 0 {
		return usagef("--retries must be at least 1 (or 0 for the default of 12), got %d", r.retries)
	}
	if _, err := r.policy(); err != nil {
		return err
	}
	if _, err := auth.ParseProtocol(r.protocol); err != nil {
		return usagef("--client-protocol: %v", err)
	}
	if r.h2streams < 0 || r.h2streams > 0 && r.protocol != string(auth.HTTP2) {
		return usagef("--http2-streams takes a positive count, with --client-protocol http2")
	}
	if err := r.keys.check(); err != nil {
		return err
	}
	return checkCredentialsFile(r.credentials)
}

// checkCredentialsFile refuses a --credentials file that cannot be read, before anything
// connects: a cron job's key moved or unreadable is a setup error (exit 2, as "no
// credentials" is), not a failed transfer.
func checkCredentialsFile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usagef("--credentials %s: the key file does not exist", path)
	case err != nil:
		return usagef("--credentials %s: the key file cannot be read: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return usagef("--credentials %s is a directory: give the key file (a service-account or authorized-user JSON key)", path)
	}
	return nil
}

// runner is the retry runner every request of the command goes through. override, when
// not nil, replaces --retry (the demo's fast policy). A refused request waits its own
// backoff; how many requests go to a bucket at once is the Client's window (upload).
func (r *remoteFlags) runner(override retry.Policy) (*retry.Runner, error) {
	p := override
	if p == nil {
		var err error
		if p, err = r.policy(); err != nil {
			return nil, err
		}
	}
	return &retry.Runner{Policy: p, MaxAttempts: r.retries, Deadline: r.deadline}, nil
}

// authOptions says where credentials come from; the endpoint is passed separately.
// An http:// endpoint is an emulator: package auth gives it no credentials, not even those
// --credentials names (it says so in a warning), because a token must never travel over
// plain HTTP.
func (r *remoteFlags) authOptions() auth.Options {
	return auth.Options{CredentialsFile: r.credentials, Protocol: auth.Protocol(r.protocol), StreamsPerConn: r.h2streams}
}

// transport is the transport --client-protocol asks for, sized for parallel streams.
func (r *remoteFlags) transport(parallel int) (http.RoundTripper, error) {
	return auth.ForProtocol(auth.NewTransport(parallel), auth.Protocol(r.protocol), r.h2streams, 0)
}

// policy parses --retry; "" gives nil, which the retry package reads as its default.
func (r *remoteFlags) policy() (retry.Policy, error) {
	if r.retry == "" {
		return nil, nil
	}
	p, err := retry.Parse(r.retry)
	if err != nil {
		return nil, usagef("--retry: %v", err)
	}
	return p, nil
}

// transferFlags are the options of commands that move bytes (cp, resume).
type transferFlags struct {
	parallel   int    // -j: files at once
	chunkSize  int64  // --chunk-size, a multiple of 256 KiB
	json       bool   // --json: one object per file and a summary line on stdout
	quiet      bool   // -q: no per-file lines, no summary, no progress
	noSumCache bool   // --no-checksum-cache: read every file compared
	progress   string // --progress: auto, always, never
	noProgress bool   // --no-progress: same as --progress=never
	bwlimit    string // --bwlimit: bytes per second for the whole run, e.g. 20MiB/s
	shardSpec  string // --shard I/N or auto
	shards     int    // --shards N: the count for --shard auto where the engine gives none
	shard      shard.Spec
	sliceAt    int64 // --slice-threshold: objects of this size or more download in slices
	maxSlices  int   // --max-slices: the most slices of one download (1: never sliced)
	// --parallel-upload, --parallel-threshold, --component-size: composite uploads of
	// large files (upload.Options.ParallelUpload); "" and 0 mean upload's defaults.
	parallelUpload    string
	parallelThreshold int64
	componentSize     int64

	fs *flagSet // the set registered with: -j 0 given is refused, -j not given is the default
}

func (t *transferFlags) register(fs *flagSet) {
	t.fs = fs
	defer fs.Group(fs.Group("Performance"))
	fs.Int(&t.parallel, "parallel", "j", "N", fmt.Sprintf("data streams at once (default %d)\n", auth.DefaultParallelism)+fmt.Sprintf("move N data streams at once: files, the slices of large downloads and the components of large uploads (default %d)", auth.DefaultParallelism))
	t.registerChunkSize(fs)
	fs.Group("Output")
	fs.Bool(&t.json, "json", "", "one JSON object per file, and a summary, on stdout\n"+"print one JSON object per file and a summary object on stdout")
	fs.Bool(&t.quiet, "quiet", "q", "print only errors")
	fs.Group("Performance")
	fs.Bool(&t.noSumCache, "no-checksum-cache", "", "read every file compared, not the saved CRC32Cs\n"+"read every local file a comparison needs (sync, --skip-unchanged) rather than use the CRC32Cs saved in the state directory's crc32c.cache for files whose size, mtime, ctime and inode are unchanged")
	t.registerProgress(fs)
	fs.String(&t.bwlimit, "bwlimit", "", "RATE", "limit the whole run to RATE, e.g. 20MiB/s\n"+"hold the whole run (every worker, both directions) to RATE, e.g. 20MiB/s or 500KiB/s (default: no limit)")
	fs.String(&t.shardSpec, "shard", "", "I/N|auto", "take only shard I of N of the files\n"+"take only this worker's share: the files whose name hashes to I (FNV-1a 64 mixed by fmix64, mod N); auto reads a batch engine's variables (Cloud Run, Batch, Slurm, Kubernetes with --shards)")
	fs.Int(&t.shards, "shards", "", "N", "with --shard auto: the job's number of shards\n"+"with --shard auto: the job's number of shards, pinned: a Kubernetes Indexed Job's completions (it exports no count); under Slurm SLURM_ARRAY_TASK_ID is then the shard index, so a task re-run alone (sbatch --array=I) keeps its shard; Cloud Run and Batch must agree with it")
	fs.Size(&t.sliceAt, checkPositive("--slice-threshold"), "slice-threshold", "", "SIZE",
		"download SIZE or more in slices (default 128MiB)\n"+
			"download an object of SIZE or more as several ranged GETs at once into one file (default 128MiB); they count against -j")
	fs.Int(&t.maxSlices, "max-slices", "", "N", "ranged GETs per download (default: one per -j stream)\n"+"the number of ranged GETs of one download (default: one per -j stream, each of at least 8MiB; 1 never slices)")
	t.registerComposite(fs)
}

// The flags below are declared by register, and alone by the demo, which takes these of
// the transfer flags only; each helper declares its flags under their own heading.

// registerChunkSize declares --chunk-size.
func (t *transferFlags) registerChunkSize(fs *flagSet) {
	defer fs.Group(fs.Group("Performance"))
	fs.Size(&t.chunkSize, checkChunkSize, "chunk-size", "", "SIZE",
		"resumable chunk size (default 16MiB)\n"+
			"resumable chunk size, a multiple of 256KiB, e.g. 8MiB (default 16MiB); a failed chunk is re-sent from the server's offset")
}

// registerProgress declares --progress and --no-progress.
func (t *transferFlags) registerProgress(fs *flagSet) {
	defer fs.Group(fs.Group("Output"))
	fs.String(&t.progress, "progress", "", "WHEN", "progress bar: auto, always, never (default auto)\n"+"draw a progress bar on stderr: auto (only on a terminal), always, never (default auto)")
	fs.Bool(&t.noProgress, "no-progress", "", "never draw a progress bar (same as --progress=never)")
}

// registerComposite declares the options of composite uploads: --parallel-upload,
// --parallel-threshold and --component-size.
func (t *transferFlags) registerComposite(fs *flagSet) {
	defer fs.Group(fs.Group("Performance"))
	fs.String(&t.parallelUpload, "parallel-upload", "", "auto|on|off",
		"parallel composite uploads (default auto)\n"+
			"upload files of --parallel-threshold or more as parallel composite uploads: auto only into buckets where that is safe (STANDARD class, no retention policy or default hold), on always, off never (default auto)")
	fs.Size(&t.parallelThreshold, checkPositive("--parallel-threshold"), "parallel-threshold", "", "SIZE",
		"composite-upload files of SIZE or more (default 128MiB)\n"+
			"upload a file of SIZE or more as a composite upload (default 128MiB)")
	fs.Size(&t.componentSize, checkPositive("--component-size"), "component-size", "", "SIZE",
		"least size of composite components (default 32MiB)\n"+
			"the least size of a composite upload's components, at most 32 of them (default: whole rounds of the -j streams, about 32MiB, or down to 8MiB so each stream has one); they count against -j")
}

// rate is --bwlimit in bytes per second; 0 means no limit.
func (t *transferFlags) rate() (int64, error) {
	if t.bwlimit == "" {
		return 0, nil
	}
	s, _ := strings.CutSuffix(t.bwlimit, "/s")
	n, err := parseSize(s)
	if err != nil || n <= 0 {
		return 0, usagef("--bwlimit %q: want a rate such as 20MiB/s or 500KiB/s", t.bwlimit)
	}
	return n, nil
}

func (t *transferFlags) check() error {
	// 0 is the zero value standing for the default when the flag is not given; given,
	// "-j 0" (a script's -j "$N" with N unset to 0) means nothing and is refused as -1 is.
	if t.parallel < 0 || t.parallel == 0 && t.fs != nil && t.fs.Given("parallel") {
		return usagef("-j/--parallel must be at least 1, got %d", t.parallel)
	}
	if t.maxSlices < 0 || t.maxSlices == 0 && t.fs != nil && t.fs.Given("max-slices") {
		return usagef("--max-slices must be at least 1, got %d", t.maxSlices)
	}
	switch t.progress {
	case "", "auto", "always", "never":
	default:
		return usagef("--progress must be auto, always or never, got %q", t.progress)
	}
	if _, err := t.rate(); err != nil {
		return err
	}
	switch t.parallelUpload {
	case "", "auto", "on", "off":
	default:
		return usagef("--parallel-upload must be auto, on or off, got %q", t.parallelUpload)
	}
	switch {
	case t.shardSpec == "auto":
		sp, err := shard.FromEnv(os.Getenv, t.shards)
		if err != nil {
			return usagef("%v", err)
		}
		t.shard = sp
	case t.shardSpec != "":
		sp, err := shard.Parse(t.shardSpec)
		if err != nil {
			return usagef("%v", err)
		}
		t.shard = sp
	case t.shards != 0:
		return usagef("--shards goes with --shard auto")
	}
	return nil
}

// progressMode resolves --progress, --no-progress and -q into auto, always or never.
func (t *transferFlags) progressMode() string {
	switch {
	case t.noProgress, t.quiet:
		return "never"
	case t.progress == "":
		return "auto"
	}
	return t.progress
}

// stateFlags name where unfinished sessions are kept.
type stateFlags struct {
	stateDir string
}

func (s *stateFlags) register(fs *flagSet) {
	defer fs.Group(fs.Group("State"))
	fs.String(&s.stateDir, "state-dir", "", "DIR",
		"where unfinished transfers are saved for resume\n"+
			"where unfinished uploads and downloads are recorded for resume (default: the user's state directory, e.g. ~/.local/state/gcsput)")
}

// stateDirOrDefault is dir, or the user's state directory when dir is "": the command
// keeps its sessions there; the library keeps them only where it is told.
func stateDirOrDefault(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	return upload.DefaultStateDir()
}

// plural writes "1 file" or "3 files".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
