package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/upload"
)

// sessionJSON is a saved transfer as 'sessions ls --json' prints it. It never includes the
// session URI: whoever holds it can write the object.
type sessionJSON struct {
	Kind        string    `json:"kind"` // "upload", "download" or "rewrite" (a copy between gs:// locations)
	Source      string    `json:"source"`
	Destination string    `json:"destination"`
	Offset      int64     `json:"offset"` // bytes persisted (uploads), written (downloads) or rewritten (copies) at the last save
	Size        int64     `json:"size"`   // -1 when unknown
	Created     time.Time `json:"created"`
	AgeSeconds  float64   `json:"age_seconds"`
	Expired     bool      `json:"expired"` // too old to resume: 'gcsput sessions gc' removes it
	// Components and ComponentsDone count a composite upload's components, and those
	// uploaded; absent for other transfers.
	Components     int `json:"components,omitempty"`
	ComponentsDone int `json:"components_done,omitempty"`
	// Unfinishable is why the transfer can never finish (its source gone, its record
	// edited), when it cannot: 'gcsput resume' skips it and 'gcsput sessions gc' removes it.
	Unfinishable string `json:"unfinishable,omitempty"`
}

func sessionOf(r upload.Session, now time.Time) sessionJSON {
	return sessionJSON{
		Kind: r.Kind, Source: r.Source, Destination: r.Dest, Offset: r.Offset, Size: r.Size,
		Created: r.Created, AgeSeconds: now.Sub(r.Created).Seconds(),
		Expired:    now.Sub(r.Created) > upload.MaxSessionAge,
		Components: r.Components, ComponentsDone: r.ComponentsDone, Unfinishable: r.Unfinishable,
	}
}

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
				ss = append(ss, sessionOf(r, now))
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
			picked, err := pickRecords(recs, ops, all)
			if err != nil {
				return err
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
				if err := a.cancelOne(ctx, c, rec, force); err != nil {
					fmt.Fprintf(a.stderr, "gcsput: %s\n", err)
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

// forceWait is how long 'sessions cancel --force' waits for a running transfer to stop.
const forceWait = 30 * time.Second

// cancelOne cancels one saved transfer; its error is the line to print.
func (a *app) cancelOne(ctx context.Context, c *upload.Client, rec upload.Session, force bool) error {
	var err error
	if force {
		err = c.ForceCancelSession(ctx, rec, forceWait)
	} else {
		err = c.CancelSession(ctx, rec)
	}
	var busy *upload.InUseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &busy) && !force:
		return fmt.Errorf("not cancelling %s -> %s: in use by a running transfer%s; stop it first, or use --force",
			escapeText(rec.Source), escapeText(rec.Dest), pidText(busy.PID))
	case errors.As(err, &busy):
		return fmt.Errorf("not cancelling %s -> %s: the running transfer%s did not stop within %v; stop it yourself, then cancel again",
			escapeText(rec.Source), escapeText(rec.Dest), pidText(busy.PID), forceWait)
	}
	return fmt.Errorf("cancelling %s -> %s: %s", escapeText(rec.Source), escapeText(rec.Dest), escapeText(redact(err.Error())))
}

// pidText is " (pid N)", or "" when the pid is unknown.
func pidText(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// pickRecords selects the records named by ops (source or destination); a name that
// matches nothing is a usage error, so a typo does not silently cancel nothing.
func pickRecords(recs []upload.Session, ops []string, all bool) ([]upload.Session, error) {
	if all {
		return recs, nil
	}
	var out []upload.Session
	for _, op := range ops {
		n := 0
		for _, r := range recs {
			if r.Source == op || r.Dest == op {
				out = append(out, r)
				n++
			}
		}
		if n == 0 {
			return nil, usagef("no saved transfer has source or destination %q; see 'gcsput sessions ls'", op)
		}
	}
	return out, nil
}
