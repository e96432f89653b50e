package upload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNoState is returned by the session methods of a Client made with
// NoState.
var ErrNoState = errors.New("upload: no state directory (NoState is set)")

// Sessions returns the unfinished transfers saved in the state directory,
// oldest first. Record.Offset is as of the last save: each acknowledged
// chunk of an upload; every 8 MiB and any interruption of a download.
func (c *Client) Sessions() ([]*Record, error) {
	if c.store == nil {
		return nil, ErrNoState
	}
	return c.store.List()
}

// Resume finishes every saved transfer (Options.Parallelism at a time) with
// the options it was started with, as the same UploadFile or Download call
// would. Results are in the order of Sessions.
func (c *Client) Resume(ctx context.Context) ([]*Result, error) {
	all, err := c.Sessions()
	if err != nil {
		return nil, err
	}
	var recs []*Record
	for _, r := range all {
		switch {
		case r.Shard != c.opts.Shard:
			c.warn(fmt.Sprintf("not resuming %s -> %s: it was saved by shard %q, and this is shard %q", r.Source, r.Dest, r.Shard, c.opts.Shard))
		case c.trusted(r):
			recs = append(recs, r)
		}
	}
	results := c.forEach(ctx, len(recs), func(i int) *Result {
		return &Result{Source: recs[i].Source, Dest: recs[i].Dest}
	}, func(ctx context.Context, i int) *Result {
		return c.resumeOne(ctx, recs[i])
	})
	return results, batchError(results)
}

func (c *Client) resumeOne(ctx context.Context, rec *Record) *Result {
	switch {
	case rec.Kind == KindUpload && rec.Upload != nil:
		u, err := ParseURL(rec.Dest)
		if err != nil {
			return &Result{Source: rec.Source, Dest: rec.Dest, Status: StatusFailed, Err: err}
		}
		return c.uploadFile(ctx, rec.Source, u, rec.Upload.Options, nil)
	case rec.Kind == KindDownload && rec.Download != nil:
		u, err := ParseURL(rec.Source)
		if err != nil {
			return &Result{Source: rec.Source, Dest: rec.Dest, Status: StatusFailed, Err: err}
		}
		r, _ := c.Download(ctx, u, rec.Dest, rec.Download.Options)
		return r
	}
	return &Result{Source: rec.Source, Dest: rec.Dest, Status: StatusFailed,
		Err: fmt.Errorf("upload: saved %s record is incomplete", rec.Kind)}
}

// CancelSession abandons a saved transfer: an upload's session is deleted on
// the server (its bytes are discarded, no object is created), a download's
// partial file is removed; then the record is removed.
func (c *Client) CancelSession(ctx context.Context, rec *Record) error {
	if c.store == nil {
		return ErrNoState
	}
	switch {
	case rec.Upload != nil && rec.Upload.Session != nil:
		if err := sessionOrigin(rec.Upload.Session.URI, c.endpoint); err != nil {
			return fmt.Errorf("upload: not cancelling the saved session %s: %v; delete the record if it is not yours", c.store.path(rec.Key()), err)
		}
		rc, err := c.resumable(c.emitter(URL{Bucket: rec.Upload.Session.Bucket, Object: rec.Upload.Session.Object}))
		if err != nil {
			return err
		}
		if err := rc.Cancel(ctx, rec.Upload.Session); err != nil {
			return err
		}
	case rec.Download != nil:
		removePartial(rec)
	}
	return c.store.Remove(rec.Key())
}

// GCSessions removes saved transfers older than MaxSessionAge (and the
// partial files of such downloads) and returns them. Their upload sessions
// are about to expire on the server anyway.
func (c *Client) GCSessions() ([]*Record, error) {
	if c.store == nil {
		return nil, ErrNoState
	}
	gone, err := c.store.GC()
	for _, r := range gone {
		removePartial(r)
	}
	return gone, err
}

// removePartial removes a download's partial file: the one its destination
// implies (the record's Temp field is not trusted to name it), and only if
// it is a regular file.
func removePartial(rec *Record) {
	if rec.Download == nil || !filepath.IsAbs(rec.Dest) {
		return
	}
	temp := tempPath(rec.Dest)
	if fi, err := os.Lstat(temp); err == nil && fi.Mode().IsRegular() {
		os.Remove(temp)
	}
}
