package upload

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Status is the outcome of one transfer.
type Status string

// The outcomes of a transfer.
const (
	// StatusUploaded: the object was uploaded from the start in this run.
	StatusUploaded Status = "uploaded"
	// StatusResumed: a saved session (from an earlier, interrupted run) was
	// finished; ResumedFrom says from which offset.
	StatusResumed Status = "resumed"
	// StatusRestarted: a saved session could not be used (Note says why:
	// the source changed, the session expired or the server lost it) and
	// the upload started over and finished.
	StatusRestarted Status = "restarted"
	// StatusDownloaded: the object was downloaded (see ResumedFrom for a
	// partial file that was continued).
	StatusDownloaded Status = "downloaded"
	// StatusSkipped: nothing to do (unchanged, already present with
	// NoClobber, a special file, a folder placeholder); Note says why.
	StatusSkipped Status = "skipped"
	// StatusFailed: Err says why.
	StatusFailed Status = "failed"
	// StatusDeleted: a sync with Delete removed the destination entry the
	// source lacks (Client.Sync); Source is "", Dest names it.
	StatusDeleted Status = "deleted"
	// StatusInterrupted: the context ended first (Ctrl-C, a deadline). A
	// resumable transfer's state is saved (unless NoState), so the same
	// call, or Client.Resume, continues it later.
	StatusInterrupted Status = "interrupted"
)

// Result is the outcome of one file or stream. It names the object by
// Bucket, Object and Generation with the Size and CRC32C the transfer
// verified; for the rest of the object's metadata, call [Client.Stat].
type Result struct {
	// Source and Dest are a local path (or "-" for a stream) and a gs:// URL,
	// in transfer order. A sync's deletion has no Source: Dest is the
	// entry it deleted (or failed to).
	Source string
	Dest   string
	Status Status
	// Bucket, Object and Generation identify the object written or read
	// (Generation 0 when none was).
	Bucket     string
	Object     string
	Generation int64
	// Size is the object's size in bytes; Transferred how many bytes went
	// over the network in this run (more than Size-ResumedFrom when chunks
	// were re-sent).
	Size        int64
	Transferred int64
	// CRC32C is the object's checksum (Castagnoli), verified end to end.
	CRC32C uint32
	// Decompressed is the size of the content a download wrote for an
	// object stored gzip-encoded that it decompressed
	// (DownloadOptions.Decompress): Size and CRC32C describe the stored,
	// compressed bytes, which were verified before decompressing. 0
	// otherwise.
	Decompressed int64
	// Attempts is 1 plus the number of retries: 1 means no request of the
	// transfer had to be repeated.
	Attempts int
	// ResumedFrom is the offset a saved session or partial download was
	// continued from (0 when started from the beginning).
	ResumedFrom int64
	// Note says why a file was skipped, or why a saved session was not used
	// and the transfer started over ("source changed: size changed …",
	// "saved session expired", "session gone on the server (410)").
	Note string
	// Saved reports that the transfer's state is in the state directory
	// (a resumable upload's session, a partial download): Client.Resume, or
	// the same call again, continues it from where the server is. An
	// interrupted transfer that is not Saved (not started yet, or a small
	// file sent in one request) starts from the beginning when run again.
	Saved bool
	// SaveErr is the first failure to save the transfer's state (it
	// matches ErrNotSaved and wraps the cause: no space left, a read-only
	// state directory). The transfer went on regardless; a process killed
	// after it resumes from the last save that succeeded, or, when Saved
	// is false, starts over. Options.Warn is told of the first such
	// failure of a Client as it happens.
	SaveErr error
	// Elapsed is the wall time of the transfer.
	Elapsed time.Duration
	// Err is the failure, for StatusFailed.
	Err error
}

// OK reports whether the transfer ended well (not failed or interrupted).
func (r *Result) OK() bool { return r.Status != StatusFailed && r.Status != StatusInterrupted }

// ErrSomeFailed is matched (errors.Is) by the error of a batch (a directory,
// a prefix) in which at least one transfer failed or was interrupted; the
// results say which, and the error's text how many and the first cause,
// which it also unwraps to. When the batch was interrupted (its context
// ended), the error also matches the context's error: context.Canceled or
// context.DeadlineExceeded.
var ErrSomeFailed = errors.New("some transfers failed")

// batchFailures summarises a batch in which some transfers failed. It
// matches ErrSomeFailed and unwraps to the first failure, and to the
// context's error when the batch was interrupted.
type batchFailures struct {
	Failed, Total int
	// Interrupted counts, among Failed, the transfers the cancellation
	// stopped (their state saved when Saved says so), not failures of
	// their own.
	Interrupted int
	First       error // the first failure, prefixed with its source
	stopped     error // ctx.Err() of an interrupted batch, else nil
}

func (e *batchFailures) Error() string {
	if failed := e.Failed - e.Interrupted; failed == 0 {
		return fmt.Sprintf("upload: %d of %d transfers interrupted (saved ones resume on a rerun); first: %v", e.Interrupted, e.Total, e.First)
	} else if e.Interrupted > 0 {
		return fmt.Sprintf("upload: %d of %d transfers failed and %d interrupted; first: %v", failed, e.Total, e.Interrupted, e.First)
	}
	return fmt.Sprintf("upload: %d of %d transfers failed; first: %v", e.Failed, e.Total, e.First)
}

// Is makes errors.Is(err, ErrSomeFailed) true.
func (e *batchFailures) Is(target error) bool { return target == ErrSomeFailed }

// Unwrap returns the first failure and, for an interrupted batch, the
// context's error: an interrupted transfer's own error need not say it was
// cancelled (a request cut short may end with any network error).
func (e *batchFailures) Unwrap() []error {
	if e.stopped != nil {
		return []error{e.First, e.stopped}
	}
	return []error{e.First}
}

// batchError returns a *batchFailures for results with failures, else nil;
// ctx is the batch's context.
func batchError(ctx context.Context, results []*Result) error {
	e := &batchFailures{}
	for _, r := range results {
		e.count(r)
	}
	return e.orNil(ctx)
}

// count adds one result to the tally.
func (e *batchFailures) count(r *Result) {
	e.Total++
	if r.OK() {
		return
	}
	if e.Failed == 0 {
		e.First = fmt.Errorf("%s: %w", r.Source, r.Err)
	}
	e.Failed++
	if r.Status == StatusInterrupted {
		e.Interrupted++
	}
}

// orNil is e, or nil when nothing failed; ctx is the batch's context.
func (e *batchFailures) orNil(ctx context.Context) error {
	if e.Failed == 0 {
		return nil
	}
	if e.Interrupted > 0 {
		e.stopped = ctx.Err()
	}
	return e
}
