// Package saved is what 'gcsput sessions' does with the transfers saved
// for resume, besides printing them: the record 'sessions ls --json'
// prints, the choice of records 'sessions cancel' names, the cancel itself
// (forced or not) and whether 'sessions gc' needs GCS at all.
package saved

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// Record is a saved transfer as 'sessions ls --json' prints it. It never
// includes the session URI: whoever holds it can write the object. The
// field names are a promise to scripts: add fields, never rename them.
type Record struct {
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

// RecordOf is the Record of s at now: its age, and whether it is too old
// to resume (upload.MaxSessionAge).
func RecordOf(s upload.Session, now time.Time) Record {
	return Record{
		Kind: s.Kind, Source: s.Source, Destination: s.Dest, Offset: s.Offset, Size: s.Size,
		Created: s.Created, AgeSeconds: now.Sub(s.Created).Seconds(),
		Expired:    now.Sub(s.Created) > upload.MaxSessionAge,
		Components: s.Components, ComponentsDone: s.ComponentsDone, Unfinishable: s.Unfinishable,
	}
}

// Pick selects the records names name by source or destination, exactly,
// in the order of names; all picks every one. unmatched is the first name
// that matches none (a typo must not silently cancel nothing); nothing is
// picked then.
func Pick(recs []upload.Session, names []string, all bool) (picked []upload.Session, unmatched string) {
	if all {
		return recs, ""
	}
	for _, name := range names {
		n := 0
		for _, r := range recs {
			if r.Source == name || r.Dest == name {
				picked = append(picked, r)
				n++
			}
		}
		if n == 0 {
			return nil, name
		}
	}
	return picked, ""
}

// ForceWait is how long a forced Cancel waits for a running transfer to
// stop.
const ForceWait = 30 * time.Second

// Cancel abandons one saved transfer (upload.Client.CancelSession); with
// force, a running one is first asked to stop, for at most ForceWait. Its
// error is the line to print: which transfer, and why it was left.
func Cancel(ctx context.Context, c *upload.Client, rec upload.Session, force bool) error {
	var err error
	if force {
		err = c.ForceCancelSession(ctx, rec, ForceWait)
	} else {
		err = c.CancelSession(ctx, rec)
	}
	var busy *upload.InUseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &busy) && !force:
		return fmt.Errorf("not cancelling %s -> %s: in use by a running transfer%s; stop it first, or use --force",
			rec.Source, rec.Dest, pidText(busy.PID))
	case errors.As(err, &busy):
		return fmt.Errorf("not cancelling %s -> %s: the running transfer%s did not stop within %v; stop it yourself, then cancel again",
			rec.Source, rec.Dest, pidText(busy.PID), ForceWait)
	}
	return fmt.Errorf("cancelling %s -> %s: %w", rec.Source, rec.Dest, err)
}

// pidText is " (pid N)", or "" when the pid is unknown.
func pidText(pid int) string {
	if pid <= 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", pid)
}

// GCNeedsGCS reports whether a gc of recs must reach GCS: to sweep the
// buckets named, or to remove a composite upload's components. Otherwise
// it needs no credentials.
func GCNeedsGCS(recs []upload.Session, buckets []string) bool {
	return len(buckets) > 0 || slices.ContainsFunc(recs, func(s upload.Session) bool { return s.Components > 0 })
}
