package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// What a sync does once it is planned and allowed: the copies and the deletes.

// copy runs the planned copies as the Client's transfers. It returns true
// when every copy succeeded. A pair of sides is one case here; reading,
// comparing, the guard and the deletes take any pair.
func (s *syncRun) copy(ctx context.Context, p *SyncPlan) bool {
	if s.src.remote && s.dst.remote {
		return s.copyAcross(ctx, p)
	}
	items := make([]Item, 0, len(p.Copies))
	for _, c := range p.Copies {
		var u URL
		switch {
		case s.dst.remote: // an upload
			u = URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + c.Path}
		case !inside(s.dst.dir, c.Dest):
			r := s.result(c.Path, c.Size, StatusFailed, "", fmt.Errorf("refusing to download %s: a symlink on its path leads out of %s", c.e.name, s.dst.dir))
			r.Object = c.e.name
			s.told(r)
			continue
		default: // a download: the name as listed; Path is its cleaned local form
			u = URL{Bucket: s.src.url.Bucket, Object: c.e.name}
		}
		local := c.Source
		if !s.dst.remote {
			local = c.Dest
		}
		items = append(items, Item{Local: local, Remote: u})
	}
	if len(items) == 0 {
		return true
	}
	var results []*Result
	var err error
	if s.dst.remote {
		results, err = s.c.Upload(ctx, items, UploadOptions{PreservePOSIX: true, Attrs: Attrs{Holds: s.o.Holds}})
	} else {
		results, err = s.c.DownloadObjects(ctx, items, DownloadOptions{PreservePOSIX: true, Decompress: true})
	}
	for _, r := range results {
		s.count(r) // given to OnResult by the transfer
	}
	return err == nil
}

// copyAcross copies each planned object on the server (Copy), the source
// pinned to the generation the listing saw, Options.Parallelism at a time.
func (s *syncRun) copyAcross(ctx context.Context, p *SyncPlan) bool {
	results := s.c.forEach(ctx, len(p.Copies), func(i int) *Result {
		return copyResult(s.acrossURLs(p.Copies[i]))
	}, func(ctx context.Context, i int) *Result {
		src, dst := s.acrossURLs(p.Copies[i])
		r, _ := s.c.Copy(ctx, src, dst, CopyOptions{SourceGeneration: p.Copies[i].e.gen, Holds: s.o.Holds})
		return r
	})
	ok := true
	for _, r := range results {
		s.count(r) // given to OnResult by the transfer
		ok = ok && r.OK()
	}
	return ok
}

// acrossURLs are a gs:// to gs:// copy's source object (its name as listed)
// and destination.
func (s *syncRun) acrossURLs(c SyncItem) (src, dst URL) {
	return URL{Bucket: s.src.url.Bucket, Object: c.e.name}, URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + c.Path}
}

// inside reports whether path stays under root once the links on its way
// that exist are followed: a symlink in the local tree must not carry a
// download elsewhere. A root that does not exist yet holds no links.
func inside(root, path string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			rel, err := filepath.Rel(r, d)
			return err == nil && filepath.IsLocal(rel) || rel == "."
		}
		if dir == root || dir == filepath.Dir(dir) {
			return true
		}
	}
}

// remove deletes what the source lacks: an object only at the generation
// that was listed, so one written since is kept.
func (s *syncRun) remove(ctx context.Context, p *SyncPlan) {
	var deleted []string // the objects deleted, whose folders may now be empty (HNS)
	for _, d := range p.Deletes {
		r := &Result{Dest: d.Dest, Status: StatusDeleted, Size: d.Size, Attempts: 1}
		var err error
		if s.dst.remote {
			u := URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + d.Path}
			r.Bucket, r.Object, r.Generation = u.Bucket, u.Object, d.e.gen
			err = s.c.DeleteGeneration(ctx, u, d.e.gen)
		} else {
			err = os.Remove(d.Dest)
		}
		if err != nil {
			r.Status, r.Err = StatusFailed, err
		} else if s.dst.remote {
			deleted = append(deleted, r.Object)
		}
		s.told(r)
	}
	if s.dst.remote {
		s.c.pruneFolders(ctx, s.dst.url.Bucket, s.dst.prefix(), deleted, s.told)
	}
}

// told gives a result the sync made itself to Options.OnResult, and counts it.
func (s *syncRun) told(r *Result) {
	s.c.told(r)
	s.count(r)
}

// count adds one result to the report.
func (s *syncRun) count(r *Result) {
	switch r.Status {
	case StatusUploaded, StatusResumed, StatusRestarted, StatusDownloaded, StatusCopied:
		s.rep.Copied++
		s.rep.Bytes += r.Size
	case StatusSkipped:
		if r.Note == "unchanged" {
			s.rep.Unchanged++
		} else {
			s.rep.Skipped++
		}
	case StatusDeleted:
		s.rep.Deleted++
	case StatusInterrupted:
		s.rep.Interrupted++
	default:
		s.rep.Failed++
	}
	s.rep.Transferred += r.Transferred
	if !r.OK() && s.first == nil {
		what := r.Source
		if what == "" {
			what = "deleting " + r.Dest
		}
		s.first = fmt.Errorf("%s: %w", what, r.Err)
	}
}

// err is the sync's error: nil when every entry succeeded and no delete
// was withheld.
func (s *syncRun) err() error {
	if s.rep.Failed+s.rep.Interrupted == 0 && s.rep.DeletesWithheld == 0 {
		return nil
	}
	return &syncError{rep: s.rep, first: s.first}
}

// syncError is a sync in which entries failed or deletes were withheld. It
// matches ErrSomeFailed when an entry failed or was interrupted, and
// ErrDeletesWithheld when deletes were withheld; it unwraps to the first
// failure.
type syncError struct {
	rep   SyncReport
	first error
}

func (e *syncError) Error() string {
	msg := "upload: sync:"
	switch f, i := e.rep.Failed, e.rep.Interrupted; {
	case f > 0 && i > 0:
		msg += fmt.Sprintf(" %d failed and %d interrupted;", f, i)
	case f > 0:
		msg += fmt.Sprintf(" %d failed;", f)
	case i > 0:
		msg += fmt.Sprintf(" %d interrupted (saved ones resume on a rerun);", i)
	}
	if n := e.rep.DeletesWithheld; n > 0 {
		msg += fmt.Sprintf(" %s withheld (%s);", plural(n, "delete"), e.rep.WithheldBecause)
	}
	if e.first != nil {
		msg += fmt.Sprintf(" first: %v", e.first)
	}
	return msg
}

func (e *syncError) Is(target error) bool {
	return target == ErrSomeFailed && e.rep.Failed+e.rep.Interrupted > 0 ||
		target == ErrDeletesWithheld && e.rep.DeletesWithheld > 0
}

func (e *syncError) Unwrap() error { return e.first }
