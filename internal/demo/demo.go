// Package demo is 'gcsput demo': it generates a file, uploads it through an
// in-process fakegcs that injects the faults gcsput is built for,
// interrupts the upload and resumes it from its saved session, downloads
// the object back through a broken connection and verifies every byte,
// telling the story on stderr as it goes. With a real bucket it runs the
// same job without injected faults.
//
// The demo runs its transfers as the CLI's jobs ([Config.NewJob]), so what
// it shows is what 'gcsput cp' and 'gcsput resume' do: the same client,
// progress bar and retry lines.
package demo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/internal/human"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/upload"
)

// Config is one run of the demo. The CLI checks the values it parsed from
// flags; Run trusts them.
type Config struct {
	// Size is the size of the generated file in bytes, more than 0.
	Size int64
	// ChunkSize is the resumable chunk size; 0 means
	// upload.DefaultChunkSize. The faults persist half a chunk, so it is at
	// least 512 KiB.
	ChunkSize int64
	// Bucket is a real bucket to run against, with the CLI's credentials
	// and no injected faults; "" starts fakegcs on 127.0.0.1.
	Bucket string
	// Keep keeps the temporary directory and, with Bucket, the object.
	Keep bool
	// OwnRetry says the user chose a retry policy (--retry): the jobs use
	// it instead of the demo's fast one. Against a real bucket the demo
	// never uses its own.
	OwnRetry bool
	// Stdout gets the summary; Stderr the story, a line at a time.
	Stdout io.Writer
	Stderr io.Writer
	// NewJob starts one transfer job as the CLI's cp does, with a client of
	// its own (what a new process would have), its progress bar and a line
	// for every retry and resume. The demo starts one per step.
	NewJob func(ctx context.Context, o JobOptions) (*Job, error)
	// Delete deletes the object from the real bucket at the end (unless
	// Keep), as 'gcsput rm' does.
	Delete func(ctx context.Context, u upload.URL) error
}

// JobOptions are what a demo step asks of its job, besides the CLI's
// flags.
type JobOptions struct {
	// Endpoint is fakegcs's URL; "" means the CLI's own (--endpoint, the
	// emulator's, or Google's).
	Endpoint string
	// StateDir is where the job saves its sessions.
	StateDir string
	// Retry is the retry policy; nil means the CLI's (--retry).
	Retry retry.Policy
	// Watch and Hook also see every progress report and every event of
	// the job, from its workers: the demo arms its faults and counts
	// retries with them.
	Watch func(upload.Progress)
	Hook  func(resumable.Event)
}

// Job is one of the CLI's transfer jobs, as the demo uses it.
type Job struct {
	// Client sends every request; it sends even small files through a
	// resumable session, since the demo's faults hit chunks.
	Client *upload.Client
	// Expect names the transfer of url for people and puts its size into
	// the progress bar's total before it starts.
	Expect func(url, name string, size int64)
	// Printf prints a line above the progress bar.
	Printf func(format string, args ...any)
	// Close ends the job.
	Close func()
}

// fastPolicy retries quickly: GCS's formula scaled down tenfold, so the
// demo's dozen faults cost seconds, not minutes.
var fastPolicy = retry.GCS{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Jitter: 100 * time.Millisecond}

// errDemo marks a demo step that did not end as it should.
var errDemo = errors.New("demo failed")

// demo is one run.
type demo struct {
	c      Config
	dir    string          // temporary directory: the file, its copy, the state
	src    string          // the generated file
	dst    upload.URL      // where it goes
	srv    *fakegcs.Server // nil against a real bucket
	faults *faultScript    // nil against a real bucket
	job    JobOptions      // shared by every job of the demo
	say    func(string)    // prints a line of the story (above the bar when one is drawn)
	mu     sync.Mutex      // guards the fields below, used from workers
	counts map[string]int  // events seen per phase and kind: "upload retry"
	phase  string          // "upload" or "download": the step running
	// interrupt cancels the first upload at 70%; nil once used.
	interrupt context.CancelFunc
	sent      map[string]int64 // bytes transferred per phase
}

// Run runs the demo: generate, upload (interrupted and resumed), download,
// verify, then the summary on Stdout. The temporary directory is removed at
// the end, unless Keep.
func Run(ctx context.Context, c Config) error {
	d := &demo{c: c, counts: map[string]int{}, sent: map[string]int64{}}
	d.say = d.plainSay
	if c.Bucket != "" {
		d.dst = upload.URL{Bucket: c.Bucket, Object: fmt.Sprintf("gcsput-demo/%d.bin", time.Now().UnixNano())}
	}
	defer d.cleanup()
	if err := d.start(); err != nil {
		return err
	}
	start := time.Now()
	for _, step := range []func(context.Context) error{d.generate, d.upload, d.download, d.verify} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	d.summary(time.Since(start))
	return nil
}

// plainSay prints a line of the story on stderr, with the retries; the summary alone goes
// to stdout.
func (d *demo) plainSay(s string) { fmt.Fprintln(d.c.Stderr, s) }

// start makes the temporary directory and, without a bucket, the fake server.
func (d *demo) start() error {
	var err error
	if d.dir, err = os.MkdirTemp("", "gcsput-demo-"); err != nil {
		return err
	}
	d.src = filepath.Join(d.dir, "demo.bin")
	d.job = JobOptions{StateDir: filepath.Join(d.dir, "state"), Retry: fastPolicy, Watch: d.watch, Hook: d.hook}
	if d.c.OwnRetry || d.c.Bucket != "" {
		d.job.Retry = nil // the user's policy, or the real default against a real bucket
	}
	if d.c.Bucket != "" {
		d.say(fmt.Sprintf("Using the real bucket gs://%s (no injected faults).", d.dst.Bucket))
		return nil
	}
	d.srv, err = fakegcs.New(fakegcs.Options{
		Buckets: []string{"gcsput-demo"}, Backend: fakegcs.BackendDir, Dir: filepath.Join(d.dir, "server"),
	})
	if err != nil {
		return fmt.Errorf("starting fakegcs: %w", err)
	}
	d.dst = upload.URL{Bucket: "gcsput-demo", Object: "demo.bin"}
	d.job.Endpoint = d.srv.URL()
	d.say(fmt.Sprintf("Started fakegcs on %s (in-process; objects in %s).", d.srv.URL(), filepath.Join(d.dir, "server")))
	return nil
}

func (d *demo) cleanup() {
	if d.srv != nil {
		d.srv.Close()
	}
	if d.dir == "" {
		return
	}
	if d.c.Keep {
		d.say("Kept " + d.dir)
		return
	}
	os.RemoveAll(d.dir)
}

// generate writes size random bytes (ChaCha8: fast, and a fixed seed makes runs alike).
func (d *demo) generate(ctx context.Context) error {
	d.say(fmt.Sprintf("Generating %s of random data in %s ...", human.Size(d.c.Size), d.src))
	f, err := os.Create(d.src)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = io.CopyN(w, rand.NewChaCha8([32]byte{'g', 'c', 's', 'p', 'u', 't'}), d.c.Size)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// watch sees every progress report: it arms the next scripted fault and, at 70%,
// interrupts the upload as a first Ctrl-C would. The interruption waits until every
// fault fired and was retried: cancelling a retry's wait would hide it.
func (d *demo) watch(p upload.Progress) {
	if !naming.IsRemote(p.Dest) {
		return // the download
	}
	due := p.Done >= d.c.Size*7/10
	if d.faults != nil {
		d.faults.arm(p.Done)
		due = due && d.faults.done(d.count("upload", resumable.EventRetry))
	}
	d.mu.Lock()
	stop := d.interrupt
	if stop != nil && due {
		d.interrupt = nil
	}
	d.mu.Unlock()
	if stop != nil && due {
		d.say(fmt.Sprintf("⏸  Interrupting the upload at %s, as Ctrl-C would.", human.Size(p.Done)))
		stop()
	}
}

// hook sees every event: it counts them and tells which injected fault just fired.
func (d *demo) hook(e resumable.Event) {
	d.mu.Lock()
	d.counts[d.phase+" "+string(e.Kind)]++
	d.mu.Unlock()
	if d.faults != nil {
		d.faults.tell()
	}
}

// count is how many events of kind the phase saw ("" for both phases).
func (d *demo) count(phase string, kind resumable.EventKind) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if phase == "" {
		return d.counts["upload "+string(kind)] + d.counts["download "+string(kind)]
	}
	return d.counts[phase+" "+string(kind)]
}

// setPhase names the step whose events follow.
func (d *demo) setPhase(p string) {
	d.mu.Lock()
	d.phase = p
	d.mu.Unlock()
}

// verify compares the downloaded copy with the original, byte for byte.
func (d *demo) verify(ctx context.Context) error {
	a, err := os.Open(d.src)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := os.Open(d.copyPath())
	if err != nil {
		return err
	}
	defer b.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	var off int64
	for {
		na, ea := io.ReadFull(a, ba)
		nb, eb := io.ReadFull(b, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return fmt.Errorf("%w: the copy differs from the original near byte %d", errDemo, off)
		}
		off += int64(na)
		if ea != nil || eb != nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if off != d.c.Size {
		return fmt.Errorf("%w: the copy has %d bytes, want %d", errDemo, off, d.c.Size)
	}
	d.say(fmt.Sprintf("✔  Verified: the downloaded copy is identical to the original (%d bytes).", off))
	return nil
}

func (d *demo) copyPath() string { return filepath.Join(d.dir, "demo.copy") }
