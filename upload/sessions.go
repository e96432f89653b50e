package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gcsput/gcsput/internal/state"
)

// MaxSessionAge is how old a saved upload session may be and still be used.
// GCS keeps a resumable session for one week after it is started; half a day
// of margin means a resume never races the server's expiry.
const MaxSessionAge = state.MaxAge // 6.5 days

// ErrNoState is returned by the session methods of a Client made without a
// state directory (Options.StateDir empty, the default, or NoState set).
var ErrNoState = errors.New("upload: no state directory: Options.StateDir is empty (or NoState is set), so no transfer is saved to resume; set StateDir (e.g. to DefaultStateDir())")

// Session is an unfinished transfer saved in the state directory, as
// [Client.Sessions] lists it. It does not hold the session URI: that is a
// credential, and stays in the state directory.
type Session struct {
	// Kind is "upload", "download" or "rewrite" (a server-side copy,
	// Client.Copy: Source and Dest are gs:// URLs, Offset the bytes the
	// server has rewritten as of the last call), or "move" (a Move whose
	// destination is written and verified, and whose source's delete was
	// sent but not confirmed: Resume, or the same Move, finishes it).
	Kind string
	// Source and Dest are as in Result: the absolute local path and the
	// gs:// URL of an upload, the gs:// URL and the absolute local path of
	// a download.
	Source string
	Dest   string
	// Shard is the share ("I/N", Options.Shard) of the worker that saved
	// it; only a Client of the same share resumes it.
	Shard string
	// Created is when the transfer started: its age, compared with
	// MaxSessionAge, counts from here. Updated is when it was last saved.
	Created time.Time
	Updated time.Time
	// Size is the transfer's total in bytes (-1 if unknown). Offset is the
	// bytes persisted (uploads) or written (downloads) as of the last save:
	// each acknowledged chunk of an upload; every 8 MiB and any
	// interruption of a download. Resuming asks the server.
	Size   int64
	Offset int64
	// Components is the number of components of a composite upload (0 for
	// any other transfer), ComponentsDone how many of them are uploaded.
	Components     int
	ComponentsDone int
	// Unfinishable, when not "", says why the transfer can never finish
	// (see ErrUnfinishable): GCSessions removes it.
	Unfinishable string

	key string // the file it was listed from: an edited record's is not its fields' key
}

// fileKey is the key of s's record: the file it was listed from, else the
// key its fields make.
func (s Session) fileKey() string {
	if s.key != "" {
		return s.key
	}
	return state.Key(state.Kind(s.Kind), s.Source, s.Dest, s.Shard)
}

// sessionOf is what Sessions shows of a record.
func sessionOf(r *state.Record) Session {
	s := Session{Kind: string(r.Kind), Source: r.Source, Dest: r.Dest, Shard: r.Shard,
		Created: r.Created, Updated: r.Updated, Size: r.Size, Offset: r.Offset,
		Unfinishable: r.Stuck(), key: r.FileKey()}
	if r.Upload != nil {
		s.Components = len(r.Upload.Components)
		for _, c := range r.Upload.Components {
			if c.Done() {
				s.ComponentsDone++
			}
		}
	}
	return s
}

// sessionsOf lists recs as Sessions (nil for none).
func sessionsOf(recs []*state.Record) []Session {
	if len(recs) == 0 {
		return nil
	}
	out := make([]Session, len(recs))
	for i, r := range recs {
		out[i] = sessionOf(r)
	}
	return out
}

// Sessions returns the unfinished transfers saved in the state directory,
// oldest first, whichever shard saved them.
func (c *Client) Sessions() ([]Session, error) {
	if c.store == nil {
		return nil, ErrNoState
	}
	recs, err := c.store.List()
	return sessionsOf(recs), err
}

// Resume finishes every saved transfer of this Client's shard
// (Options.Parallelism at a time) with the options it was started with, as
// the same UploadFile or Download call would. Results are in the order of
// Sessions. A transfer saved by another shard is left alone, with a warning.
// A transfer that can never finish fails once, with an error matching
// ErrUnfinishable, and is skipped after (StatusSkipped) until GCSessions
// removes it; an edited record is never sent a request.
func (c *Client) Resume(ctx context.Context) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if c.store == nil {
		return nil, ErrNoState
	}
	all, err := c.store.List()
	if err != nil {
		return nil, err
	}
	var recs []*state.Record
	for _, r := range all {
		switch {
		case r.Shard != c.opts.Shard:
			c.warn(fmt.Sprintf("not resuming %s -> %s: it was saved by shard %q, and this is shard %q", r.Source, r.Dest, r.Shard, c.opts.Shard))
		case r.Edited() || c.store.Trusted(r, c.endpoint): // an edited record is only reported (resumeChecked)
			recs = append(recs, r)
		}
	}
	results := c.forEach(ctx, len(recs), func(i int) *Result {
		return &Result{Source: recs[i].Source, Dest: recs[i].Dest}
	}, func(ctx context.Context, i int) *Result {
		return c.resumeChecked(ctx, recs[i])
	})
	return results, batchError(ctx, results)
}

// resumeOne runs the call that saved rec again, with its options.
func (c *Client) resumeOne(ctx context.Context, rec *state.Record) *Result {
	failed := func(err error) *Result {
		return &Result{Source: rec.Source, Dest: rec.Dest, Status: StatusFailed, Err: err}
	}
	switch {
	case rec.Kind == state.KindUpload && rec.Upload != nil:
		var o UploadOptions
		u, err := ParseURL(rec.Dest)
		if err == nil {
			err = decodeOptions(rec.Upload.Options, &o)
		}
		if err != nil {
			return failed(err)
		}
		return c.uploadFile(ctx, rec.Source, u, o, nil)
	case rec.Kind == state.KindDownload && rec.Download != nil:
		var o DownloadOptions
		u, err := ParseURL(rec.Source)
		if err == nil {
			err = decodeOptions(rec.Download.Options, &o)
		}
		if err != nil {
			return failed(err)
		}
		r, _ := c.Download(ctx, u, rec.Dest, o)
		return r
	case rec.Kind == state.KindRewrite && rec.Rewrite != nil:
		var o CopyOptions
		src, err := ParseURL(rec.Source)
		var dst URL
		if err == nil {
			dst, err = ParseURL(rec.Dest)
		}
		if err == nil {
			err = decodeOptions(rec.Rewrite.Options, &o)
		}
		if err != nil {
			return failed(err)
		}
		if rec.Rewrite.Move { // a move's copy: the move is finished
			return c.moveAcross(ctx, src, dst, o.SourceGeneration, MoveOptions{NoClobber: o.NoClobber}, true)
		}
		r, _ := c.copy(ctx, src, dst, o, copyHow{restore: true}) // its destination the saved one, whole
		return r
	case rec.Kind == state.KindMove && rec.Move != nil:
		src, err := ParseURL(rec.Source)
		if err != nil {
			return failed(err)
		}
		if r, ok := c.finishSaved(ctx, src, rec.Dest); ok {
			return r
		}
		return failed(fmt.Errorf("move: %s no longer holds what was moved from %s: run the move again", rec.Dest, rec.Source))
	}
	return failed(fmt.Errorf("upload: saved %s record is incomplete", rec.Kind))
}

// encodeOptions is how a record keeps a call's options: their JSON. The
// option types hold strings, bools, numbers and a map of strings, which
// always encode.
func encodeOptions(o any) json.RawMessage {
	b, _ := json.Marshal(o)
	return b
}

// decodeOptions reads options a record kept; none means the zero value.
func decodeOptions(raw json.RawMessage, o any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, o); err != nil {
		return fmt.Errorf("upload: the saved options do not parse: %w", err)
	}
	return nil
}

// CancelSession abandons a saved transfer: an upload's session is deleted on
// the server (its bytes are discarded, no object is created); a composite
// upload's component sessions are, and its uploaded components deleted; a
// download's partial file is removed; a copy's rewrite token is forgotten
// (GCS has no call to cancel a rewrite; the destination was never written);
// then the record is removed. A
// session no longer saved is an error matching fs.ErrNotExist. A transfer
// that a live transfer holds (running in this process or another) is left
// alone, with an error matching ErrInUse: cancelling it under the running
// transfer would not stop it (an upload would start over, a download
// would lose its partial file and save its record again); see
// ForceCancelSession.
func (c *Client) CancelSession(ctx context.Context, s Session) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if c.store == nil {
		return ErrNoState
	}
	key := s.fileKey()
	l, err := c.store.Lock(key)
	if err != nil {
		return fmt.Errorf("upload: not cancelling %s %s -> %s: %w", s.Kind, s.Source, s.Dest, err)
	}
	defer l.Release()
	return c.cancelLocked(ctx, s, key)
}

// ForceCancelSession is CancelSession for a transfer that may be running:
// if a live transfer holds it, that transfer is asked to stop (it then
// ends with an error matching ErrStopped, its state saved), and once it
// has let go, within wait, the saved transfer is cancelled. The request is
// a file in the state directory that the holder looks for, not a signal:
// it stops that one transfer, in whichever process, and nothing else. A
// holder that does not let go within wait (a process stopped, or of an
// older gcsput) is an error matching ErrInUse, and nothing is cancelled.
func (c *Client) ForceCancelSession(ctx context.Context, s Session, wait time.Duration) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if c.store == nil {
		return ErrNoState
	}
	key := s.fileKey()
	defer c.store.ClearStop(key)
	deadline := time.Now().Add(wait)
	for {
		l, err := c.store.Lock(key)
		if err == nil {
			defer l.Release()
			c.store.ClearStop(key)
			return c.cancelLocked(ctx, s, key)
		}
		switch {
		case !errors.Is(err, ErrInUse):
			return fmt.Errorf("upload: not cancelling %s %s -> %s: %w", s.Kind, s.Source, s.Dest, err)
		case time.Now().After(deadline):
			return fmt.Errorf("upload: not cancelling %s %s -> %s: %w, and it did not stop within %v", s.Kind, s.Source, s.Dest, err, wait)
		}
		if err := c.store.RequestStop(key); err != nil {
			return fmt.Errorf("upload: asking the transfer %s -> %s to stop: %w", s.Source, s.Dest, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(stopPoll / 2):
		}
	}
}

// cancelLocked is CancelSession with the lock of key held.
func (c *Client) cancelLocked(ctx context.Context, s Session, key string) error {
	rec, err := c.store.Read(key)
	if err != nil {
		return fmt.Errorf("upload: %s %s -> %s is not saved: %w", s.Kind, s.Source, s.Dest, fs.ErrNotExist)
	}
	switch {
	case rec.Edited():
		// Its fields are not the transfer it was saved for: nothing it names
		// is sent a request or removed; its session, if any, expires.
	case rec.Upload != nil && len(rec.Upload.Components) > 0:
		if err := rec.Upload.CheckOrigins(c.endpoint); err != nil {
			return fmt.Errorf("upload: not cancelling the saved composite upload %s: %v; delete the record if it is not yours", c.store.Path(key), err)
		}
		if _, err := c.dropComposite(ctx, rec); err != nil {
			return fmt.Errorf("upload: cancelling the composite upload to %s: %w", rec.Dest, err)
		}
	case rec.Upload != nil && rec.Upload.Session != nil:
		if err := state.CheckOrigin(rec.Upload.Session.URI, c.endpoint); err != nil {
			return fmt.Errorf("upload: not cancelling the saved session %s: %v; delete the record if it is not yours", c.store.Path(key), err)
		}
		rc, err := c.resumable(c.emitter(URL{Bucket: rec.Upload.Session.Bucket, Object: rec.Upload.Session.Object}))
		if err != nil {
			return err
		}
		if err := rc.Cancel(ctx, rec.Upload.Session); err != nil {
			return err
		}
	case rec.Rewrite != nil:
		// GCS has no call to cancel a rewrite: its token is dropped here and
		// expires there. Nothing was written to the destination.
	case rec.Download != nil:
		if err := removePartial(rec); err != nil {
			return fmt.Errorf("upload: not cancelling the download %s -> %s: %w", rec.Source, rec.Dest, err)
		}
	}
	return c.store.Remove(key)
}

// Collected is what GCSessions removed.
type Collected struct {
	// Sessions are the saved transfers removed.
	Sessions []Session
	// Components are the temporary objects of composite uploads deleted:
	// those of the removed transfers, and orphans (see GCSessions).
	Components []URL
	// InUse are the expired transfers left alone because a live transfer
	// holds them (see ErrInUse): a later GCSessions removes them once they
	// end, if still saved.
	InUse []Session
}

// GCSessions removes saved transfers older than MaxSessionAge (and the
// partial files of such downloads); their upload sessions are about to
// expire on the server anyway. It removes likewise those that can never
// finish (Session.Unfinishable, see ErrUnfinishable): those a Resume
// marked, and edited records, of which only the file is removed (nothing
// an edited record names is touched). It also removes the temporary objects
// of composite uploads:
//
//   - those of each composite upload it removes (its component sessions
//     are cancelled, and every object under its component directory is
//     deleted);
//   - orphans, whose record is gone (a state directory wiped, a process
//     killed before its first save): in each bucket that a saved
//     composite upload names, and in buckets, the objects named as
//     components are (gcsput-tmp/HASH/INDEX) that no remaining record
//     owns and that were created more than MaxSessionAge ago. Nothing
//     else is ever deleted.
//
// Without composite uploads and buckets it makes no request. Errors do not
// stop it: they are joined.
func (c *Client) GCSessions(ctx context.Context, buckets ...string) (Collected, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return Collected{}, err
	}
	defer leave()
	var out Collected
	if c.store == nil {
		return out, ErrNoState
	}
	gone, inUse, err := c.store.GC()
	out.InUse = sessionsOf(inUse)
	errs := []error{err}
	sweep := map[string]bool{}
	for _, b := range buckets {
		sweep[b] = true
	}
	for _, r := range gone {
		if r.Edited() {
			continue // nothing an edited record names is touched: only its file goes
		}
		errs = append(errs, removePartial(r))
		if r.Upload != nil && len(r.Upload.Components) > 0 {
			deleted, err := c.dropComposite(ctx, r)
			out.Components = append(out.Components, deleted...)
			errs = append(errs, err)
			if u, err := ParseURL(r.Dest); err == nil {
				sweep[u.Bucket] = true
			}
		}
	}
	out.Sessions = sessionsOf(gone)
	deleted, err := c.sweepOrphans(ctx, sweep)
	out.Components = append(out.Components, deleted...)
	return out, errors.Join(append(errs, err)...)
}

// sweepOrphans runs sweepComponents in the buckets of sweep and in those
// of the saved composite uploads, keeping the components those own.
func (c *Client) sweepOrphans(ctx context.Context, sweep map[string]bool) ([]URL, error) {
	recs, err := c.store.List()
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for _, r := range recs {
		if r.Upload == nil || len(r.Upload.Components) == 0 || r.Edited() {
			continue
		}
		keep[componentDirOf(r.Upload.Components[0].Name)] = true
		if u, err := ParseURL(r.Dest); err == nil {
			sweep[u.Bucket] = true
		}
	}
	var out []URL
	var errs []error
	for _, b := range slices.Sorted(maps.Keys(sweep)) {
		deleted, err := c.sweepComponents(ctx, b, keep)
		out = append(out, deleted...)
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// removePartial removes a download's partial file, and the file a
// decompressing download writes: the ones its destination implies (the
// record's Temp field is not trusted to name them), and only if they are
// regular files. A partial file that a live download writes (it locks it,
// see openTemp) is left, with an error matching ErrInUse.
func removePartial(rec *state.Record) error {
	if rec.Download == nil || !filepath.IsAbs(rec.Dest) {
		return nil
	}
	if err := removeUnlocked(tempPath(rec.Dest)); err != nil {
		return err
	}
	// Left by a download killed while decompressing.
	if fi, err := os.Lstat(gunzipPath(rec.Dest)); err == nil && fi.Mode().IsRegular() {
		os.Remove(gunzipPath(rec.Dest))
	}
	return nil
}

// removeUnlocked removes the regular file temp unless a live download holds
// its lock.
func removeUnlocked(temp string) error {
	f, err := os.OpenFile(temp, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil // gone, or a link: nothing of ours to remove
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	if err := lockFile(f); err != nil {
		return fmt.Errorf("its partial file %s is being written by a running download: %w", temp, ErrInUse)
	}
	return os.Remove(temp)
}
