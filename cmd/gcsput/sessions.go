package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/saved"
	"github.com/gcsput/gcsput/upload"
)

// sessionJSON is a saved transfer as 'sessions ls --json' prints it.
type sessionJSON = saved.Record

// printSessions writes the table of 'sessions ls'.
func printSessions(w io.Writer, ss []sessionJSON) {
	fmt.Fprintf(w, "%-8s  %-8s  %-22s  %s\n", "KIND", "AGE", "SAVED AT", "SOURCE -> DESTINATION")
	for _, s := range ss {
		age := roundAge(time.Duration(s.AgeSeconds * float64(time.Second)))
		if s.Expired {
			age += " (expired)"
		}
		done := formatSize(s.Offset)
		if s.Size >= 0 {
			done += " / " + formatSize(s.Size)
		}
		composite := ""
		if s.Components > 0 {
			composite = fmt.Sprintf(" (composite %d/%d components)", s.ComponentsDone, s.Components)
		}
		if s.Unfinishable != "" {
			composite += " (cannot finish: " + escapeText(s.Unfinishable) + ")"
		}
		fmt.Fprintf(w, "%-8s  %-8s  %-22s  %s -> %s%s\n", s.Kind, age, done, escapeText(s.Source), escapeText(s.Destination), composite)
	}
}

// roundAge: "45s", "12m", "3h20m", "2d4h".
func roundAge(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

var sessionsLsCommand = &command{
	name:    "sessions ls",
	args:    "[flags]",
	summary: "list unfinished uploads, downloads and copies saved for resume",
	help: `Lists the transfers cut short and saved in the state directory: which way, how old, how far,
source and destination. 'gcsput resume' finishes them; 'gcsput sessions cancel' abandons them.`,
	examples: `
  gcsput sessions ls
  gcsput sessions ls --json | jq -r .destination
`,
	see: `docs/cli.md for saved sessions and locks; docs/commands.md#gcsput-sessions-ls for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var st stateFlags
		var asJSON bool
		fs.Group("Output")
		fs.Bool(&asJSON, "json", "", "print one JSON object per session")
		st.register(fs)
		return func(ctx context.Context, ops []string) error {
			if len(ops) > 0 {
				return usagef("sessions ls takes no operands")
			}
			recs, err := a.listRecords(ctx, st.stateDir)
			if err != nil {
				return err
			}
			now := time.Now()
			var ss []sessionJSON
			for _, r := range recs {
				ss = append(ss, saved.RecordOf(r, now))
			}
			switch {
			case asJSON:
				for _, s := range ss {
					printJSON(a.stdout, s)
				}
			case len(ss) == 0:
				fmt.Fprintln(a.stderr, "no unfinished transfers")
			default:
				printSessions(a.stdout, ss)
			}
			return nil
		}
	},
}

// offlineClient is a client for the state directory alone: it makes no request, so it
// needs no credentials (listing and gc must work on a machine without any).
func (a *app) offlineClient(ctx context.Context, stateDir string) (*upload.Client, error) {
	stateDir, err := stateDirOrDefault(stateDir)
	if err != nil {
		return nil, err
	}
	return upload.New(ctx, upload.Options{StateDir: stateDir, Auth: auth.Options{NoAuth: true}, Warn: a.warn})
}

// sessionsClient is a client that reaches GCS for the sessions in the state directory
// (the user's when dir is ""; metaClient alone would open none).
func (a *app) sessionsClient(ctx context.Context, r *remoteFlags, dir string) (*upload.Client, func(), error) {
	dir, err := stateDirOrDefault(dir)
	if err != nil {
		return nil, nil, err
	}
	return a.metaClient(ctx, r, dir)
}

// listRecords reads the saved transfers, oldest first.
func (a *app) listRecords(ctx context.Context, dir string) ([]upload.Session, error) {
	c, err := a.offlineClient(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Sessions()
}

var sessionsCancelCommand = &command{
	name:    "sessions cancel",
	args:    "[flags] (--all | SOURCE-OR-DESTINATION...)",
	summary: "abandon saved transfers: delete their upload sessions and partial files",
	help: `Abandons saved transfers: cancels upload sessions on the server, removes partial downloads,
forgets rewrite tokens. A transfer running now is left alone (exit 1) unless --force.`,
	examples: `
  gcsput sessions cancel gs://my-bucket/big.iso
  gcsput sessions cancel /srv/data/db.dump
  gcsput sessions cancel --all
  gcsput sessions cancel --force gs://my-bucket/big.iso    # also if it is running now
`,
	see: `docs/cli.md for saved sessions and locks; docs/commands.md#gcsput-sessions-cancel for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var st stateFlags
		var all, force bool
		fs.Group("Deletion")
		fs.Bool(&all, "all", "", "cancel every saved transfer")
		fs.Bool(&force, "force", "", "stop a running transfer (up to 30s), then cancel it\n"+"stop a running transfer first (waiting up to 30s), then cancel it")
		st.register(fs)
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			if err := r.check(); err != nil {
				return err
			}
			if all == (len(ops) > 0) {
				return usagef("give --all or the sources/destinations to cancel (as 'gcsput sessions ls' shows them), not both")
			}
			recs, err := a.listRecords(ctx, st.stateDir)
			if err != nil {
				return err
			}
			picked, typo := saved.Pick(recs, ops, all)
			if typo != "" {
				return usagef("no saved transfer has source or destination %q; see 'gcsput sessions ls'", typo)
			}
			if len(picked) == 0 {
				fmt.Fprintln(a.stderr, "no unfinished transfers")
				return nil
			}
			c, done, err := a.sessionsClient(ctx, &r, st.stateDir)
			if err != nil {
				return err
			}
			defer done()
			failed := 0
			for _, rec := range picked {
				if err := saved.Cancel(ctx, c, rec, force); err != nil {
					fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(redact(err.Error())))
					failed++
					continue
				}
				fmt.Fprintf(a.stdout, "cancelled %s %s -> %s\n", rec.Kind, escapeText(rec.Source), escapeText(rec.Dest))
			}
			if failed > 0 {
				return &failedError{failed: failed, total: len(picked), noun: "cancellations"}
			}
			return nil
		}
	},
}
