package main

import (
	"context"
	"fmt"

	"github.com/gcsput/gcsput/internal/naming"
)

var resumeCommand = &command{
	name:    "resume",
	args:    "[flags]",
	summary: "finish every upload and download that was cut short",
	help: `Finishes the transfers saved in the state directory, with the options they were started with,
each from where the server has it. Output and exit codes are those of 'gcsput cp'.`,
	examples: `
  gcsput resume
  gcsput resume -j 16 --json > resumed.ndjson
  gcsput resume --state-dir /var/lib/backup-state
`,
	see: `docs/cli.md for saved sessions; docs/commands.md#gcsput-resume for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var t transferFlags
		var st stateFlags
		t.register(fs)
		st.register(fs)
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			if len(ops) > 0 {
				return usagef("resume takes no operands: it finishes every saved transfer (see 'gcsput sessions ls')")
			}
			if err := r.check(); err != nil {
				return err
			}
			if err := t.check(); err != nil {
				return err
			}
			return a.resume(ctx, jobConfig{remote: &r, transfer: &t, stateDir: st.stateDir})
		}
	},
}

func (a *app) resume(ctx context.Context, cfg jobConfig) error {
	j, err := a.newJob(ctx, cfg)
	if err != nil {
		return err
	}
	defer j.close()
	recs, err := j.client.Sessions()
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		if !cfg.transfer.quiet {
			fmt.Fprintln(a.stderr, "nothing to resume")
		}
		return nil
	}
	for _, rec := range recs {
		url, local := rec.Dest, rec.Source
		if naming.IsRemote(rec.Source) {
			url, local = rec.Source, rec.Dest
		}
		size := rec.Size
		if size >= 0 {
			// The bar counts the whole file; what the server already has arrives as the
			// first progress report.
			j.expect(url, local, size)
		}
	}
	_, _ = j.client.Resume(ctx) // each result went to j.add as it ended
	return j.finish()
}
