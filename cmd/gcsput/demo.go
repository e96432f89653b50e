package main

import (
	"context"

	"github.com/gcsput/gcsput/internal/demo"
	"github.com/gcsput/gcsput/upload"
)

// demoFlags are the demo's options.
type demoFlags struct {
	remote   remoteFlags
	transfer transferFlags
	size     int64
	keep     bool
}

// demoCommand is 'gcsput demo'. The demo itself lives in internal/demo; this file holds
// its flags, their checks, and the jobs it runs, which are cp's.
var demoCommand = &command{
	name:    "demo",
	args:    "[flags] [gs://BUCKET]",
	summary: "watch an upload survive injected faults (no bucket or credentials needed)",
	help: `
Starts the embedded fake GCS server (fakegcs) on 127.0.0.1, generates a file of random
bytes, and uploads it while the server injects the failures gcsput is built for: 503s, a
429 with Retry-After, a connection reset, a reset after only part of a chunk was persisted,
and a 308 that acknowledges less than was sent. A file of --parallel-threshold or more (the
default 256MiB is) goes up as cp sends it, a parallel composite upload: its components are
objects of their own, each with its own session, and each fault hits the next upload request
in the bucket, whichever component makes it. Each retry and each resume from the server's
offset is printed as it happens; the demo fails if an announced fault never fired. At 70%
the upload is interrupted as Ctrl-C would interrupt it, then resumed from its saved session
as 'gcsput resume' would. The object is then downloaded back (in slices when it is 128MiB
or more) through a broken connection (resumed with a Range request) and every byte is
verified. Everything happens in a temporary directory that is removed at the end.

With gs://BUCKET the same job runs against that real bucket, using your credentials (no
faults are injected there, but the interruption and resume still are); the object is
deleted afterwards unless --keep is given.

The demo uses a fast retry policy (waits of 0.1 to 2 s instead of GCS's 1 to 32 s) so it
finishes in seconds; --retry chooses another.

Examples:
  gcsput demo
  gcsput demo --size 1GiB --chunk-size 32MiB
  gcsput demo --parallel-upload off     # one session instead of components
  gcsput demo gs://my-scratch-bucket
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &demoFlags{size: 256 << 20}
		fs.Size(&f.size, nil, "size", "", "SIZE", "size of the generated file (default 256MiB)")
		fs.Bool(&f.keep, "keep", "", "keep the temporary directory (and, with gs://BUCKET, the object)")
		fs.Size(&f.transfer.chunkSize, checkChunkSize, "chunk-size", "", "SIZE", "resumable chunk size, a multiple of 256KiB (default 16MiB)")
		fs.String(&f.transfer.progress, "progress", "", "WHEN", "draw a progress bar on stderr: auto (only on a terminal), always, never (default auto)")
		fs.Bool(&f.transfer.noProgress, "no-progress", "", "never draw a progress bar")
		fs.String(&f.transfer.parallelUpload, "parallel-upload", "", "auto|on|off", "upload the file as a parallel composite upload when it is --parallel-threshold or more: auto, on, off (default auto)")
		fs.Size(&f.transfer.parallelThreshold, checkPositive("--parallel-threshold"), "parallel-threshold", "", "SIZE", "upload a file of SIZE or more as a composite upload (default 128MiB)")
		fs.Size(&f.transfer.componentSize, checkPositive("--component-size"), "component-size", "", "SIZE", "the least size of a composite upload's components (default: 32MiB, or down to 8MiB so each -j stream has one)")
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.runDemo(ctx, f, ops) }
	},
}

// runDemo checks the demo's flags and operand, and runs it with cp's jobs.
func (a *app) runDemo(ctx context.Context, f *demoFlags, ops []string) error {
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
	var bucket string
	if len(ops) == 1 {
		u, err := parseRemote(ops[0])
		if err != nil {
			return err
		}
		if u.object != "" {
			return usagef("demo takes a bucket (gs://BUCKET), not an object: it picks the object name itself")
		}
		bucket = u.bucket
	}
	f.remote.verbose = true // the story is the retries and the resumes
	return demo.Run(ctx, demo.Config{
		Size: f.size, ChunkSize: f.transfer.chunkSize, Bucket: bucket, Keep: f.keep, OwnRetry: f.remote.retry != "",
		Stdout: a.stdout, Stderr: a.stderr, NewJob: a.demoJob(f), Delete: a.demoDelete(f),
	})
}

// demoJob starts the demo's jobs: cp's, with the demo's endpoint, state directory and
// retry policy, every file through a resumable session (its faults hit chunks), and its
// watchers on every progress report and event.
func (a *app) demoJob(f *demoFlags) func(context.Context, demo.JobOptions) (*demo.Job, error) {
	return func(ctx context.Context, o demo.JobOptions) (*demo.Job, error) {
		remote := f.remote
		if o.Endpoint != "" {
			remote.endpoint = o.Endpoint
		}
		j, err := a.newJob(ctx, jobConfig{remote: &remote, transfer: &f.transfer, stateDir: o.StateDir,
			retry: o.Retry, resumableOnly: true, watch: o.Watch, hook: o.Hook})
		if err != nil {
			return nil, err
		}
		return &demo.Job{Client: j.client, Expect: j.expect, Printf: j.prog.printf, Close: j.close}, nil
	}
}

// demoDelete removes the demo's object from a real bucket, as 'gcsput rm' would.
func (a *app) demoDelete(f *demoFlags) func(context.Context, upload.URL) error {
	return func(ctx context.Context, u upload.URL) error {
		return a.withClient(ctx, &f.remote, nil, func(c *upload.Client) error { return c.Delete(ctx, u) })
	}
}
