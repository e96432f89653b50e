package main

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
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/fakegcs"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/upload"
)

// demoFlags are the demo's options.
type demoFlags struct {
	remote   remoteFlags
	transfer transferFlags
	size     int64
	keep     bool
}

var demoCommand = &command{
	name:    "demo",
	args:    "[flags] [gs://BUCKET]",
	summary: "watch an upload survive injected faults (no bucket or credentials needed)",
	help: `
Starts the embedded fake GCS server (fakegcs) on 127.0.0.1, generates a file of random
bytes, and uploads it while the server injects the failures gcsput is built for: 503s, a
429 with Retry-After, a connection reset, a reset after only part of a chunk was persisted,
and a 308 that acknowledges less than was sent. Each retry and each resume from the
server's offset is printed as it happens. At 70% the upload is interrupted as Ctrl-C would
interrupt it, then resumed from its saved session as 'gcsput resume' would. The object is
then downloaded back through a broken connection (resumed with a Range request) and every
byte is verified. Everything happens in a temporary directory that is removed at the end.

With gs://BUCKET the same job runs against that real bucket, using your credentials (no
faults are injected there, but the interruption and resume still are); the object is
deleted afterwards unless --keep is given.

The demo uses a fast retry policy (waits of 0.1 to 2 s instead of GCS's 1 to 32 s) so it
finishes in seconds; --retry chooses another.

Examples:
  gcsput demo
  gcsput demo --size 1GiB --chunk-size 32MiB
  gcsput demo gs://my-scratch-bucket
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &demoFlags{size: 256 << 20}
		fs.Size(&f.size, nil, "size", "", "SIZE", "size of the generated file (default 256MiB)")
		fs.Bool(&f.keep, "keep", "", "keep the temporary directory (and, with gs://BUCKET, the object)")
		fs.Size(&f.transfer.chunkSize, checkChunkSize, "chunk-size", "", "SIZE", "resumable chunk size, a multiple of 256KiB (default 16MiB)")
		fs.String(&f.transfer.progress, "progress", "", "WHEN", "draw a progress bar on stderr: auto (only on a terminal), always, never (default auto)")
		fs.Bool(&f.transfer.noProgress, "no-progress", "", "never draw a progress bar")
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.demo(ctx, f, ops) }
	},
}

// demoPolicy retries quickly: GCS's formula scaled down tenfold, so the demo's dozen
// faults cost seconds, not minutes.
var demoPolicy = retry.GCS{Initial: 100 * time.Millisecond, Max: 2 * time.Second, Jitter: 100 * time.Millisecond}

// demo is one run of 'gcsput demo'.
type demo struct {
	a      *app
	f      *demoFlags
	dir    string          // temporary directory: the file, its copy, the state
	src    string          // the generated file
	dst    upload.URL      // where it goes
	srv    *fakegcs.Server // nil against a real bucket
	faults *faultScript    // nil against a real bucket
	cfg    jobConfig       // shared by every job of the demo
	say    func(string)    // prints a line of the story (above the bar when one is drawn)
	mu     sync.Mutex      // guards the fields below, used from workers
	counts map[string]int  // events seen per kind
	// interrupt cancels the first upload at 70%; nil once used.
	interrupt context.CancelFunc
	sent      map[string]int64 // bytes transferred per phase
}

func (a *app) demo(ctx context.Context, f *demoFlags, ops []string) error {
	if len(ops) > 1 {
		return usagef("demo takes at most one operand, a bucket: gs://BUCKET")
	}
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	if f.size <= 0 {
		return usagef("--size must be positive, e.g. 64MiB")
	}
	if f.transfer.chunkSize != 0 && f.transfer.chunkSize < 2*chunkAlign {
		return usagef("the demo needs --chunk-size of at least 512KiB: its faults persist half a chunk")
	}
	d, err := a.newDemo(ops)
	if err != nil {
		return err
	}
	d.f = f
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

func (a *app) newDemo(ops []string) (*demo, error) {
	d := &demo{a: a, counts: map[string]int{}, sent: map[string]int64{}}
	d.say = d.plainSay
	if len(ops) == 1 {
		u, err := parseRemote(ops[0])
		if err != nil {
			return nil, err
		}
		if u.object != "" {
			return nil, usagef("demo takes a bucket (gs://BUCKET), not an object: it picks the object name itself")
		}
		d.dst = upload.URL{Bucket: u.bucket, Object: fmt.Sprintf("gcsput-demo/%d.bin", time.Now().UnixNano())}
	}
	return d, nil
}

// plainSay prints a line of the story on stderr, with the retries; the summary alone goes
// to stdout.
func (d *demo) plainSay(s string) { fmt.Fprintln(d.a.stderr, s) }

// start makes the temporary directory and, without a bucket, the fake server.
func (d *demo) start() error {
	var err error
	if d.dir, err = os.MkdirTemp("", "gcsput-demo-"); err != nil {
		return err
	}
	d.src = filepath.Join(d.dir, "demo.bin")
	d.cfg = jobConfig{
		remote: &d.f.remote, transfer: &d.f.transfer, stateDir: filepath.Join(d.dir, "state"),
		retry: demoPolicy, watch: d.watch, hook: d.hook, resumableOnly: true,
	}
	d.f.remote.verbose = true // the story is the retries and the resumes
	if d.f.remote.retry != "" || d.dst.Bucket != "" {
		d.cfg.retry = nil // the user's policy, or the real default against a real bucket
	}
	if d.dst.Bucket != "" {
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
	d.f.remote.endpoint = d.srv.URL()
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
	if d.f != nil && d.f.keep {
		d.say("Kept " + d.dir)
		return
	}
	os.RemoveAll(d.dir)
}

// generate writes size random bytes (ChaCha8: fast, and a fixed seed makes runs alike).
func (d *demo) generate(ctx context.Context) error {
	d.say(fmt.Sprintf("Generating %s of random data in %s ...", formatSize(d.f.size), d.src))
	f, err := os.Create(d.src)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = io.CopyN(w, rand.NewChaCha8([32]byte{'g', 'c', 's', 'p', 'u', 't'}), d.f.size)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// watch sees every progress report: it arms the next scripted fault and, at 70%,
// interrupts the upload as a first Ctrl-C would.
func (d *demo) watch(p upload.Progress) {
	if !strings.HasPrefix(p.Dest, "gs://") {
		return // the download
	}
	if d.faults != nil {
		d.faults.arm(p.Done)
	}
	d.mu.Lock()
	stop := d.interrupt
	if stop != nil && p.Done >= d.f.size*7/10 {
		d.interrupt = nil
	}
	d.mu.Unlock()
	if stop != nil && p.Done >= d.f.size*7/10 {
		d.say(fmt.Sprintf("⏸  Interrupting the upload at %s, as Ctrl-C would.", formatSize(p.Done)))
		stop()
	}
}

// hook sees every event: it counts them and tells which injected fault just fired.
func (d *demo) hook(e resumable.Event) {
	d.mu.Lock()
	d.counts[string(e.Kind)]++
	d.mu.Unlock()
	if d.faults != nil {
		d.faults.tell()
	}
}

func (d *demo) count(kind resumable.EventKind) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts[string(kind)]
}

// errDemo marks a demo step that did not end as it should.
var errDemo = errors.New("demo failed")

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
	if off != d.f.size {
		return fmt.Errorf("%w: the copy has %d bytes, want %d", errDemo, off, d.f.size)
	}
	d.say(fmt.Sprintf("✔  Verified: the downloaded copy is identical to the original (%d bytes).", off))
	return nil
}

func (d *demo) copyPath() string { return filepath.Join(d.dir, "demo.copy") }
