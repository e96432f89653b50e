package upload

import (
	"context"
	"errors"
	"iter"
	"os"
)

// The merge of a sync's two sides, each read in the order GCS lists names.

// oddEntry is a source object whose local path is not its name.
type oddEntry struct {
	rel string
	e   *syncEntry
}

// hold and release count the entries the merge holds (see live).
func (s *syncRun) hold() {
	s.live++
	s.liveHigh = max(s.liveHigh, s.live)
}

func (s *syncRun) release(n int) { s.live -= n }

// errStopped ends the destination's stream when the merge stops early.
var errStopped = errors.New("sync merge stopped")

// merge reads the source and, beside it, pulls the destination, both in
// name order: a destination entry before the source's next is the
// destination's alone.
func (s *syncRun) merge(ctx context.Context, p *SyncPlan) error {
	var dstErr error
	next, stop := iter.Pull2(func(yield func(string, *syncEntry) bool) {
		dstErr = s.read(ctx, s.dst, false, func(rel string, e *syncEntry) error {
			if !yield(rel, e) {
				return errStopped
			}
			return nil
		})
	})
	defer stop()
	drel, de, dok := next()
	pass := func(upto string, all bool) {
		for dok && (all || drel < upto) {
			s.destOnly(p, drel, de)
			drel, de, dok = next()
		}
	}
	err := s.read(ctx, s.src, true, func(rel string, e *syncEntry) error {
		pass(rel, false)
		var d *syncEntry
		if dok && drel == rel {
			d = de
			drel, de, dok = next()
		}
		return s.meet(ctx, p, rel, e, d)
	})
	if err != nil {
		return err
	}
	pass("", true)
	stop()
	if errors.Is(dstErr, errStopped) {
		dstErr = nil
	}
	return dstErr
}

// destOnly takes a destination entry the source lacks: counted, and with
// Delete planned for deletion, unless the walk skipped its path.
func (s *syncRun) destOnly(p *SyncPlan, rel string, e *syncEntry) {
	defer s.release(1)
	if !s.shard.Owns(rel) {
		return // Delete deletes only this shard's
	}
	p.DestEntries++
	if s.o.Delete && !s.isKept(rel) {
		s.planned(p.deletes, SyncItem{Path: rel, Size: e.size, e: e})
	}
}

// planned writes an item down.
func (s *syncRun) planned(l *planList, it SyncItem) {
	if err := l.add(it); err != nil && s.planErr == nil {
		s.planErr = err
	}
}

// meetOdd compares each object whose local path is not its name with the
// file at that path, and takes that path out of the deletes.
func (s *syncRun) meetOdd(ctx context.Context, p *SyncPlan) error {
	if len(s.odd) == 0 {
		return nil
	}
	odd := map[string]bool{}
	for _, o := range s.odd {
		odd[o.rel] = true
		var d *syncEntry
		path := s.name(s.dst, o.rel)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && s.takes(o.rel) {
			d = &syncEntry{size: fi.Size(), mtime: fi.ModTime().Unix(), path: path}
			s.hold()
			if s.shard.Owns(o.rel) {
				p.DestEntries-- // counted when the walk met it, counted again by meet
			}
		}
		s.meet(ctx, p, o.rel, o.e, d)
	}
	s.odd = nil
	s.flushKeyed(ctx, p)
	if p.deletes.len() == 0 {
		return nil
	}
	kept := &planList{dir: p.deletes.dir, spillAt: p.deletes.spillAt}
	for it, err := range p.deletes.all() {
		if err != nil {
			kept.close()
			return err
		}
		if !odd[it.Path] {
			s.planned(kept, it)
		}
	}
	p.deletes.close()
	p.deletes = kept
	return nil
}
