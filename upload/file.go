package upload

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// maxRestarts is how many times one upload starts a new session after the
// server lost the previous one (404/410). Twice in one call means something
// else is wrong; the error is then returned.
const maxRestarts = 2

// resumableFile uploads f through a resumable session: the saved one in rec
// if any, else a new one, saved before the first byte is sent.
func (c *Client) resumableFile(ctx context.Context, r *Result, f *os.File, fp state.Fingerprint, dst URL, a Attrs, o UploadOptions, rec *state.Record) error {
	t := c.newTracker(r, dst)
	rc, err := c.resumable(t.onEvent)
	if err != nil {
		return err
	}
	t.rec, t.resuming = rec, rec != nil
	for restarts := 0; ; restarts++ {
		if t.rec == nil {
			sp := c.spec(ctx, dst, fp.Size, a, o)
			s, err := rc.Start(ctx, sp)
			if err != nil {
				return c.uploadError(ctx, r, dst, err, o)
			}
			t.rec = uploadRecord(fp, dst, s, o, encryptionOf(sp))
			t.rec.Shard = c.opts.Shard
			t.save() // before any byte: a kill from here on resumes this session
		}
		// The record holds the key's SHA256 only: the key comes from the options.
		t.rec.Upload.Session.Key = c.keyFor(ctx, t.rec.Upload.Session.KeySHA256)
		obj, err := rc.Upload(ctx, t.rec.Upload.Session, checkedFile{f, fp})
		if ch := sourceChanged(f.Name(), fp, err); ch != "" {
			// Not finalized: cancel the session, so that neither this run nor a
			// later one makes an object of two versions of the file.
			_ = rc.Cancel(context.WithoutCancel(ctx), t.rec.Upload.Session)
			t.forget()
			return changedError("upload: %s changed while being uploaded (%s); nothing was written to %s: upload it again", f.Name(), ch, dst)
		}
		if err == nil {
			t.forget()
			done(r, obj, r.statusAfter(rec != nil && restarts == 0))
			return changedDuring(f.Name(), fp)
		}
		if errors.Is(err, resumable.ErrSessionExpired) && restarts < maxRestarts {
			if ch := changedSince(f.Name(), fp); ch != "" {
				t.forget()
				return fmt.Errorf("upload: %s: session gone and the file changed (%s): %w", dst, ch, err)
			}
			t.forget()
			t.resuming, r.ResumedFrom = false, 0
			r.Note = "session gone on the server (404/410): started over"
			continue
		}
		if errors.Is(err, resumable.ErrChecksumMismatch) || errors.Is(err, resumable.ErrPreconditionFailed) {
			t.forget() // the session is finished or useless: never resume it
		}
		return c.uploadError(ctx, r, dst, err, o)
	}
}

// uploadError turns a failed upload's error into the result: a precondition
// failure under NoClobber is "skipped: exists" (under IfGenerationMatch, an
// error that says which condition failed), a source that changed during
// the upload is said so, anything else is returned as is.
func (c *Client) uploadError(ctx context.Context, r *Result, dst URL, err error, o UploadOptions) error {
	if errors.Is(err, resumable.ErrUnauthorized) {
		return refused(dst, err)
	}
	if o.NoClobber && errors.Is(err, resumable.ErrPreconditionFailed) {
		r.Status, r.Note = StatusSkipped, "exists"
		if attrs, serr := c.Stat(ctx, dst); serr == nil {
			r.Generation, r.CRC32C, r.Size = attrs.Generation, attrs.CRC32C, attrs.Size
		}
		return nil
	}
	if o.IfGenerationMatch != nil && errors.Is(err, resumable.ErrPreconditionFailed) {
		return notReplaced(dst, o, err)
	}
	return err
}

// refused explains a 401 that outlived the fresh tokens the transport (and,
// for a chunk, the upload) asked for: the credentials themselves are
// refused. The saved record, if any, is kept, so nothing sent is lost.
func refused(u URL, err error) error {
	return fmt.Errorf("%s: the server refused the credentials (401) even with %d fresh tokens: fix them (gcloud auth application-default login, --credentials FILE, the account's access to gs://%s); a saved transfer then continues from where it stopped ('gcsput resume' or the same command): %w",
		u, auth.MaxRefreshes, u.Bucket, err)
}

// statusAfter is the status of a finished upload: resumed when a saved
// session was continued, restarted when one had to be dropped (Note says
// why), else uploaded.
func (r *Result) statusAfter(resumedSaved bool) Status {
	switch {
	case resumedSaved:
		return StatusResumed
	case r.Note != "":
		return StatusRestarted
	}
	return StatusUploaded
}

// changedSince describes how the file at path differs from fp ("" if not).
func changedSince(path string, fp state.Fingerprint) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	return fp.Change(state.FingerprintOf(fp.Path, fi))
}

// checkedFile is the source of a file upload: before the request that
// would finalize the object, resumable asks it whether the file still has
// the fingerprint it had when the session started.
type checkedFile struct {
	*os.File
	fp state.Fingerprint
}

func (f checkedFile) CheckSource() error {
	if ch := changedSince(f.Name(), f.fp); ch != "" {
		return errors.New(ch)
	}
	return nil
}

// sourceChanged says how the file changed when err is the upload's report
// of a changed source, or of a source that could not be read (a truncated
// file reads short: that is a change too); "" otherwise.
func sourceChanged(path string, fp state.Fingerprint, err error) string {
	var se *resumable.SourceError
	if !errors.As(err, &se) {
		return ""
	}
	return changedSince(path, fp)
}

// changedDuring fails an upload whose file changed while it was read: the
// object is self-consistent (its CRC32C matches the bytes sent) but may mix
// old and new content.
func changedDuring(path string, fp state.Fingerprint) error {
	if ch := changedSince(path, fp); ch != "" {
		return changedError("upload: %s changed while it was uploaded (%s); the object may mix old and new content: upload it again", path, ch)
	}
	return nil
}

// changedError is the error of a file that changed while it was uploaded:
// its text says what changed and what to do, and it matches
// resumable.ErrSourceChanged, like the resumable layer's own report.
func changedError(format string, args ...any) error {
	return sourceChangedError(fmt.Sprintf(format, args...))
}

type sourceChangedError string

func (e sourceChangedError) Error() string { return string(e) }

// Is makes errors.Is(err, resumable.ErrSourceChanged) true.
func (e sourceChangedError) Is(target error) bool { return target == resumable.ErrSourceChanged }
