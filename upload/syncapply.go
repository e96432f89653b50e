package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// What a sync does once it is planned and allowed: the copies and the deletes.

// copy runs the planned copies as the Client's transfers, read from the
// plan as the workers take them. It returns true when every copy
// succeeded. A pair of sides is one case here; reading, comparing, the
// guard and the deletes take any pair.
func (s *syncRun) copy(ctx context.Context, p *SyncPlan) bool {
	switch {
	case p.copies.len() == 0:
		return true
	case !s.dst.remote:
		return s.download(ctx, p)
	}
	if ctx.Value(countedKey{}) == nil {
		s.c.meter.announce(p.copies.len(), 0)
	}
	if s.src.remote { // gs:// to gs://: a copy on the server, the source pinned to the generation listed
		return s.stream(ctx, p, func(ctx context.Context, c SyncItem) *Result {
			src, dst := s.acrossURLs(c)
			r, _ := s.c.Copy(ctx, src, dst, CopyOptions{SourceGeneration: c.e.gen, Holds: s.o.Holds})
			return r
		}, func(c SyncItem) *Result { return copyResult(s.acrossURLs(c)) })
	}
	saved := s.c.savedKeys()
	o := UploadOptions{PreservePOSIX: true, Attrs: Attrs{Holds: s.o.Holds, CustomTime: s.o.CustomTime}}
	return s.stream(ctx, p, func(ctx context.Context, c SyncItem) *Result {
		return s.c.uploadFile(ctx, c.Source, s.uploadURL(c), o, saved)
	}, func(c SyncItem) *Result {
		u := s.uploadURL(c)
		return &Result{Source: c.Source, Dest: u.String(), Bucket: u.Bucket, Object: u.Object}
	})
}

// uploadURL is an upload's destination object.
func (s *syncRun) uploadURL(c SyncItem) URL {
	return URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + c.Path}
}

// stream runs run on each planned copy, Options.Parallelism at a time,
// taking the next from the plan only when a worker is free: the plan on
// disk is never read into memory. Once ctx ends no copy starts; each one
// left is reported interrupted, "not started", as a batch's are.
func (s *syncRun) stream(ctx context.Context, p *SyncPlan, run func(context.Context, SyncItem) *Result, base func(SyncItem) *Result) bool {
	var mu sync.Mutex
	ok := true
	note := func(r *Result) {
		s.told(r)
		mu.Lock()
		ok = ok && r.OK()
		mu.Unlock()
	}
	next := make(chan SyncItem)
	var wg sync.WaitGroup
	for range max(s.c.opts.Parallelism, 1) {
		wg.Go(func() {
			for c := range next {
				note(run(ctx, c))
			}
		})
	}
	for c, err := range p.AllCopies() {
		if err != nil {
			note(&Result{Source: s.src.String(), Dest: s.dst.String(), Status: StatusFailed, Err: err})
			break
		}
		if ctx.Err() == nil {
			select {
			case next <- c:
				continue
			case <-ctx.Done():
			}
		}
		r := base(c)
		r.Status, r.Note, r.Err = StatusInterrupted, "not started", ctx.Err()
		note(r)
	}
	close(next)
	wg.Wait()
	return ok
}

// download runs the planned downloads as DownloadObjects batches of at
// most the plan's in-memory bound: each batch finds the objects that map to
// one file, or to a file and a directory, as a prefix download does.
func (s *syncRun) download(ctx context.Context, p *SyncPlan) bool {
	ok := true
	var items []Item
	flush := func() {
		if len(items) == 0 {
			return
		}
		results, err := s.c.DownloadObjects(ctx, items, DownloadOptions{PreservePOSIX: true, Decompress: true})
		for _, r := range results {
			s.count(r) // given to OnResult by the transfer
		}
		ok = ok && err == nil
		items = items[:0]
	}
	for c, err := range p.AllCopies() {
		switch {
		case err != nil:
			s.told(&Result{Source: s.src.String(), Dest: s.dst.String(), Status: StatusFailed, Err: err})
			ok = false
		case !inside(s.dst.dir, c.Dest):
			r := s.result(c.Path, c.Size, StatusFailed, "", fmt.Errorf("refusing to download %s: a symlink on its path leads out of %s", c.e.name, s.dst.dir))
			r.Object = c.e.name
			s.told(r)
		default: // the name as listed; Path is its cleaned local form
			items = append(items, Item{Local: c.Dest, Remote: URL{Bucket: s.src.url.Bucket, Object: c.e.name}})
			if len(items) >= max(p.copies.spillAt, 1) {
				flush()
			}
		}
	}
	flush()
	return ok
}

// acrossURLs are a gs:// to gs:// copy's source object (its name as listed)
// and destination.
func (s *syncRun) acrossURLs(c SyncItem) (src, dst URL) {
	return URL{Bucket: s.src.url.Bucket, Object: c.e.name}, URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + c.Path}
}

// item makes a planned item whole again: Source and Dest from its Path.
func (s *syncRun) item(it SyncItem, del bool) SyncItem {
	if !del {
		it.Source = s.name(s.src, it.Path)
	}
	it.Dest = s.name(s.dst, it.Path)
	return it
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
	// The objects deleted, one per folder, whose folders may now be empty
	// (HNS): as many as the folders that lost an object, not the objects.
	var deleted []string
	parents := map[string]bool{}
	for d, err := range p.AllDeletes() {
		if err != nil { // the plan cannot be read back: the rest are not known
			s.told(&Result{Dest: s.dst.String(), Status: StatusFailed, Err: err})
			return
		}
		r := &Result{Dest: d.Dest, Status: StatusDeleted, Size: d.Size, Attempts: 1}
		if s.dst.remote {
			u := URL{Bucket: s.dst.url.Bucket, Object: s.dst.prefix() + d.Path}
			r.Bucket, r.Object, r.Generation = u.Bucket, u.Object, d.e.gen
			err = s.c.Delete(ctx, u, DeleteOptions{IfGenerationMatch: &d.e.gen})
		} else {
			err = os.Remove(d.Dest)
		}
		if err != nil {
			r.Status, r.Err = StatusFailed, err
		} else if s.dst.remote && !parents[parentOf(r.Object)] {
			parents[parentOf(r.Object)] = true
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
	if s.hook != nil {
		s.hook.see(r) // a sync's uploads are told here, not by the transfer
	}
	s.c.told(r)
	s.count(r)
}

// count adds one result to the report; the copies' workers call it at once.
func (s *syncRun) count(r *Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
