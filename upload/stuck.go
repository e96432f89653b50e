package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
)

// A saved transfer can never finish when what it needs no longer exists, or
// when its record is not the transfer its file name says:
//
//   - an upload whose local source file is gone (stat says it does not
//     exist), whatever the state of its session;
//   - a download whose object is gone (404 on the object or its bucket);
//   - a copy whose source object is gone (404; with a pinned
//     SourceGeneration, that generation);
//   - an edited record (see state.Record.Edited), whichever its kind.
//
// A source that changed, or a session or rewrite token that expired, is not
// one: the transfer starts over from the source and finishes. Nor is a
// destination missing or refused (a bucket deleted, a permission lost),
// which may be put right: it fails each Resume. Resume reports
// an unfinishable transfer once (an error matching ErrUnfinishable, which
// fails that run) and marks its record; later runs skip it (StatusSkipped)
// and GCSessions removes it. A marked upload whose file is back resumes.

// ErrUnfinishable is matched (errors.Is) by the error of a saved transfer
// that Resume found can never finish (see GCSessions).
var ErrUnfinishable = errors.New("the saved transfer can never finish")

// unfinishableError is a saved transfer that can never finish: why, and what
// was not written.
type unfinishableError struct {
	why  string // "its source file /x is gone"
	dest string // "" for an edited record: its destination is not to be trusted
}

func (e *unfinishableError) Error() string {
	s := "cannot finish: " + e.why
	if e.dest != "" {
		s += "; nothing was written to " + e.dest
	}
	return s + "; later resumes skip it, and 'gcsput sessions gc' removes its record"
}

func (e *unfinishableError) Is(target error) bool { return target == ErrUnfinishable }

// goneBefore says why rec can never finish as seen before it is run (an
// edited record, an upload's missing file), or "".
func goneBefore(rec *state.Record) string {
	switch {
	case rec.Edited():
		return state.EditedWhy
	case rec.Kind == state.KindUpload && filepath.IsAbs(rec.Source):
		if _, err := os.Stat(rec.Source); errors.Is(err, fs.ErrNotExist) {
			return "its source file " + rec.Source + " is gone"
		}
	}
	return ""
}

// goneAfter says why rec, whose run failed with err, can never finish, or
// "": the object a download or a copy reads is gone.
func goneAfter(rec *state.Record, err error) string {
	if rec.Kind != state.KindDownload && rec.Kind != state.KindRewrite {
		return ""
	}
	if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) {
		return "its source " + rec.Source + " is gone"
	}
	return ""
}

// unfinishable is the result of rec, which can never finish (why): the
// first time, a failure, and the record is marked; once marked, a skip.
// failed, when not nil, is the run's own result, returned as it is if the
// record is gone (the run removed it) or held by a live transfer.
func (c *Client) unfinishable(rec *state.Record, why string, failed *Result) *Result {
	dest := rec.Dest
	if rec.Edited() {
		dest = ""
	}
	r := &Result{Source: rec.Source, Dest: rec.Dest, Size: rec.Size}
	if rec.Unfinishable != "" { // reported by an earlier run
		r.Status, r.Note = StatusSkipped, "cannot finish: "+why+"; 'gcsput sessions gc' removes its record"
		return r
	}
	l, err := c.store.Lock(rec.FileKey())
	if err == nil {
		err = c.store.MarkUnfinishable(rec, why)
		l.Release()
	}
	if err != nil && failed != nil {
		return failed // the record is gone, held, or saved anew: not the one judged
	}
	if errors.Is(err, ErrInUse) {
		// A live transfer holds it: its source may be back, and it is not
		// this run's to judge.
		r.Status, r.Err = StatusFailed, busy(rec.Source, rec.Dest, err)
		return r
	}
	// A record that cannot be marked is reported again by the next run.
	r.Status, r.Err = StatusFailed, &unfinishableError{why: why, dest: dest}
	return r
}

// resumeChecked runs rec (resumeOne), unless it can never finish.
func (c *Client) resumeChecked(ctx context.Context, rec *state.Record) *Result {
	if why := goneBefore(rec); why != "" {
		return c.unfinishable(rec, why, nil)
	}
	r := c.resumeOne(ctx, rec)
	if r.Status == StatusFailed {
		if why := goneAfter(rec, r.Err); why != "" {
			return c.unfinishable(rec, why, r)
		}
	}
	return r
}

// notFoundError keeps a message as it was written and matches the
// sentinel of what was not found (storage.ErrObjectNotExist).
type notFoundError struct {
	msg string
	is  error
}

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return e.is }

// objectNotFound is an error with text format (as fmt.Sprintf) that
// matches storage.ErrObjectNotExist.
func objectNotFound(format string, args ...any) error {
	return &notFoundError{msg: fmt.Sprintf(format, args...), is: storage.ErrObjectNotExist}
}
