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
	help: `Uploads a file to an embedded fake GCS (or to gs://BUCKET) while it injects the faults gcsput
is built for, interrupts and resumes it, then downloads it back and verifies every byte.`,
	examples: `
  gcsput demo
  gcsput demo --size 1GiB --chunk-size 32MiB
  gcsput demo --parallel-upload off     # one session instead of components
  gcsput demo gs://my-scratch-bucket
`,
	see: `docs/commands.md#gcsput-demo for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &demoFlags{size: 256 << 20}
		fs.Group("Transfer")
		fs.Size(&f.size, nil, "size", "", "SIZE", "size of the generated file (default 256MiB)")
		fs.Bool(&f.keep, "keep", "", "keep the temporary directory (and gs:// object)\n"+"keep the temporary directory (and, with gs://BUCKET, the object)")
		f.transfer.registerChunkSize(fs) // cp's declarations, so the demo's flags read as cp's
		f.transfer.registerProgress(fs)
		f.transfer.registerComposite(fs)
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
		if u.Object != "" {
			return usagef("demo takes a bucket (gs://BUCKET), not an object: it picks the object name itself")
		}
		bucket = u.Bucket
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
		return a.withClient(ctx, &f.remote, nil, func(c *upload.Client) error { return c.Delete(ctx, u, upload.DeleteOptions{}) })
	}
}
