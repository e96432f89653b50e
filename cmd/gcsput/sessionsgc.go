package main

import (
	"context"
	"fmt"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/saved"
	"github.com/gcsput/gcsput/upload"
)

var sessionsGcCommand = &command{
	name:    "sessions gc",
	args:    "[flags] [gs://BUCKET...]",
	summary: "remove saved transfers too old to resume, and orphaned composite components",
	help: `Removes saved transfers that are expired (older than 6.5 days) or can never finish, and the
orphaned components of composite uploads (gcsput-tmp/...) in the buckets named.`,
	examples: `
  gcsput sessions gc
  gcsput sessions gc --state-dir /var/lib/backup-state
  gcsput sessions gc gs://my-bucket
`,
	see: `docs/composite.md for composite uploads; docs/commands.md#gcsput-sessions-gc for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var st stateFlags
		st.register(fs)
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			buckets, err := gcBuckets(ops)
			if err != nil {
				return err
			}
			if err := r.check(); err != nil {
				return err
			}
			return a.sessionsGC(ctx, &r, st.stateDir, buckets)
		}
	},
}

// gcBuckets reads gc's operands: buckets, as gs://BUCKET.
func gcBuckets(ops []string) ([]string, error) {
	var buckets []string
	for _, op := range ops {
		if !naming.IsRemote(op) {
			return nil, usagef("sessions gc takes buckets to sweep (gs://BUCKET), not %q", op)
		}
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		if u.Object != "" {
			return nil, usagef("sessions gc sweeps whole buckets: give gs://%s, not %s", u.Bucket, op)
		}
		buckets = append(buckets, u.Bucket)
	}
	return buckets, nil
}

// sessionsGC runs gc: offline unless there are composite uploads or buckets to sweep.
func (a *app) sessionsGC(ctx context.Context, r *remoteFlags, stateDir string, buckets []string) error {
	recs, err := a.listRecords(ctx, stateDir)
	if err != nil {
		return err
	}
	var c *upload.Client
	done := func() {}
	if saved.GCNeedsGCS(recs, buckets) {
		c, done, err = a.sessionsClient(ctx, r, stateDir)
	} else if c, err = a.offlineClient(ctx, stateDir); err == nil {
		done = func() { c.Close() }
	}
	if err != nil {
		return err
	}
	defer done()
	got, err := c.GCSessions(ctx, buckets...)
	for _, s := range got.Sessions {
		if s.Unfinishable != "" {
			fmt.Fprintf(a.stdout, "removed unfinishable %s %s -> %s: %s\n", s.Kind, escapeText(s.Source), escapeText(s.Dest), escapeText(s.Unfinishable))
			continue
		}
		fmt.Fprintf(a.stdout, "removed expired %s %s -> %s\n", s.Kind, escapeText(s.Source), escapeText(s.Dest))
	}
	for _, u := range got.Components {
		fmt.Fprintf(a.stdout, "deleted component %s\n", escapeText(u.String()))
	}
	for _, s := range got.InUse {
		what := "expired"
		if s.Unfinishable != "" {
			what = "unfinishable"
		}
		fmt.Fprintf(a.stderr, "gcsput: left %s %s %s -> %s: in use by a running transfer; it is removed by a gc after that transfer ends\n",
			what, s.Kind, escapeText(s.Source), escapeText(s.Dest))
	}
	if err != nil {
		return err
	}
	if len(got.Sessions)+len(got.Components)+len(got.InUse) == 0 {
		fmt.Fprintln(a.stderr, "nothing expired")
	}
	return nil
}
