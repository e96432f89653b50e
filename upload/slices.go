package upload

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/resumable"
)

// A sliced download fetches one large object as several ranged GETs at once
// (Options.SliceThreshold, MaxSlices), each written at its offset into the
// one temporary file. It starts as a plain download: when the first response
// shows an object large enough (resumable's DownloadSpec.Split), that
// response becomes slice 0 and the others start on streams taken from the
// Client's budget while free. The record lists the slices and how far each
// got, so a later run continues each one; the file is renamed into place
// only when every slice is done and the slices' CRC32Cs, combined, equal
// the object's. The file is never read again to check it.

// sliceable reports whether an object of size bytes, stored with encoding,
// is downloaded in slices. gzip objects may be transcoded, which ignores
// Range: they take one stream.
func (c *Client) sliceable(size int64, encoding string) bool {
	return c.sliceCount(size) > 1 && c.opts.SliceThreshold > 0 && size >= c.opts.SliceThreshold &&
		!strings.EqualFold(encoding, "gzip")
}

// planSlices cuts size bytes into n slices of about equal length, each
// starting on a 256 KiB boundary (whole pages and filesystem blocks for
// every write) when the slices are at least that long.
func planSlices(size int64, n int) []state.Slice {
	n = int(min(int64(n), size))
	align := int64(1)
	if size/int64(n) >= sliceAlign {
		align = sliceAlign
	}
	plan := make([]state.Slice, n)
	for i := range plan {
		plan[i].Start = size * int64(i) / int64(n) / align * align
		plan[i].Done = plan[i].Start
		if i > 0 {
			plan[i-1].End = plan[i].Start
		}
	}
	plan[n-1].End = size
	return plan
}

const sliceAlign = 256 << 10

// slicer runs one sliced download.
type slicer struct {
	c    *Client
	ctx  context.Context
	r    *Result
	src  URL
	f    *os.File
	tr   *tracker // its record's Download.Slices is the plan
	gen  int64
	size int64
	key  resumable.EncryptionKey // the object's CSEK, sent with every slice

	mu       sync.Mutex // guards what follows, r's counters and tr.rec while slices run
	next     int        // the next slice to start
	crcs     []uint32   // each slice's CRC32C, once done
	hashes   resumable.Hashes
	reported int64     // bytes written at the last progress report
	saved    int64     // and at the last record save
	savedAt  time.Time // when
	saving   bool      // a save runs without mu (saveUnlocked)
	run      *partRun

	resumedFrom int64 // bytes the saved plan had written (resume)
}

// plan is the record's list of slices.
func (s *slicer) plan() []state.Slice { return s.tr.rec.Download.Slices }

// split is DownloadSpec.Split for a fresh download: an object large enough
// is planned in slices, the file is given its size, the plan is saved, and
// slices 1… start; the first response continues as slice 0.
func (s *slicer) split(size, gen int64, encoding string) int64 {
	if !s.c.sliceable(size, encoding) || gen == 0 {
		return 0 // small, gzip, or no generation to pin the slices to
	}
	if err := preallocate(s.f, size); err != nil {
		return 0 // the file cannot take its size: one stream, as before
	}
	plan := planSlices(size, s.c.sliceCount(size))
	s.mu.Lock()
	s.gen, s.size, s.next, s.crcs = gen, size, 1, make([]uint32, len(plan))
	s.tr.rec.Size, s.tr.rec.Download.Generation, s.tr.rec.Download.Slices = size, gen, plan
	s.tr.save()
	s.mu.Unlock()
	s.run = s.c.startParts(s.ctx, s.helpers(), s.nextSlice, s.fetch)
	return plan[0].End
}

// helpers is how many streams the slices may use at once: one a slice,
// never more than the budget has.
func (s *slicer) helpers() int { return min(len(s.plan()), cap(s.c.streams)) }

// resume continues a saved plan: every slice not yet done, on the
// transfer's stream and on more while free; slices written whole are read
// back for their CRC32C. want is the object's, from its metadata: the
// slices' checksums, combined, must equal it.
func (s *slicer) resume(want uint32) (*resumable.DownloadResult, error) {
	s.crcs = make([]uint32, len(s.plan()))
	s.hashes = resumable.Hashes{CRC32C: want, HasCRC32C: true}
	s.resumedFrom = s.written()
	s.reported, s.saved = s.resumedFrom, s.resumedFrom
	s.run = s.c.startParts(s.ctx, s.helpers(), s.nextSlice, s.fetch)
	return s.finish(nil, nil)
}

// nextSlice hands out the slices in order (partRun holds its lock).
func (s *slicer) nextSlice() (int, bool) {
	if s.next >= len(s.plan()) {
		return 0, false
	}
	s.next++
	return s.next - 1, true
}

// fetch runs slice i from where it got to.
func (s *slicer) fetch(ctx context.Context, i int) error {
	s.mu.Lock()
	sl := s.plan()[i]
	s.mu.Unlock()
	rc, err := s.c.resumable(s.eventsOf(i))
	if err != nil {
		return err
	}
	spec := resumable.DownloadSpec{Bucket: s.src.Bucket, Object: s.src.Object, Generation: s.gen, Start: sl.Start, End: sl.End, Key: s.key}
	if sl.Done > sl.Start {
		spec.Offset = sl.Done
	}
	res, err := rc.DownloadAt(ctx, spec, &sliceFile{File: s.f, s: s, i: i})
	if err != nil {
		return fmt.Errorf("download: %s: bytes %d-%d: %w", s.src, sl.Start, sl.End-1, err)
	}
	s.finished(i, res)
	return nil
}

// finished records slice i's result.
func (s *slicer) finished(i int, res *resumable.DownloadResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crcs[i] = res.Local.CRC32C
	s.plan()[i].Done = s.plan()[i].End
	if res.Hashes.HasCRC32C {
		s.hashes = res.Hashes
	}
}

// finish ends a sliced download: slice 0's outcome (a fresh download), the
// other slices joined on the transfer's stream, then the combined CRC32C
// compared with the object's. On failure the plan is saved, with how far
// each slice got, for the next run.
func (s *slicer) finish(res0 *resumable.DownloadResult, err0 error) (*resumable.DownloadResult, error) {
	if err0 != nil {
		s.run.fail(err0)
	} else if res0 != nil {
		s.finished(0, res0)
	}
	err := s.run.join()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.tr.rec.Offset = s.written()
		s.tr.save()
		return nil, err
	}
	var crc uint32
	for i, sl := range s.plan() {
		crc = resumable.CombineCRC32C(crc, s.crcs[i], sl.End-sl.Start)
	}
	if !s.hashes.HasCRC32C || crc != s.hashes.CRC32C {
		return nil, &resumable.ChecksumError{Object: s.src.String(), Local: resumable.Hashes{CRC32C: crc, HasCRC32C: true}, Remote: s.hashes}
	}
	s.tr.emit(resumable.Event{Kind: resumable.EventFinished, Size: s.size, Persisted: s.size, Generation: s.gen,
		CRC32C: resumable.EncodeCRC32C(crc)})
	return &resumable.DownloadResult{Generation: s.gen, Size: s.size, Hashes: s.hashes, Local: s.hashes, Verified: true}, nil
}

// eventsOf is slice i's event callback: its retries and bytes count into
// the Result, and its events go on to Options.OnEvent, but for its own
// start and finish: the download starts once (slice 0's first response)
// and finishes once, verified (finish). Slices' events arrive concurrently.
func (s *slicer) eventsOf(i int) func(resumable.Event) {
	return func(e resumable.Event) {
		s.mu.Lock()
		switch e.Kind {
		case resumable.EventRetry:
			s.r.Attempts++
		case resumable.EventProgress:
			s.r.Transferred += e.Length
		}
		s.mu.Unlock()
		if e.Kind == resumable.EventFinished || e.Kind == resumable.EventStarted && i > 0 {
			return
		}
		e.Part, e.Parts = i+1, len(s.plan())
		s.tr.emit(e)
	}
}

// wrote notes that slice i has written up to end: progress every MiB, the
// record every 8 MiB and at most once a second (for a process killed later,
// which continues each slice from its Done; a save waits for a file and a
// directory fsync, and all slices wait for it).
func (s *slicer) wrote(i int, end int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan()[i].Done = max(s.plan()[i].Done, end)
	n := s.written()
	if n-s.reported >= 1<<20 || n == s.size {
		s.reported = n
		s.c.progress(s.r, n, s.size)
	}
	if now := time.Now(); n-s.saved >= 8<<20 && now.Sub(s.savedAt) >= time.Second && !s.saving {
		s.saved, s.savedAt, s.tr.rec.Offset = n, now, n
		s.saveUnlocked()
	}
}

// saveUnlocked writes a copy of the record with s.mu released for the
// write (an fsync of a file and a directory), so the other slices go on
// writing meanwhile instead of waiting for it; one such write at a time
// (saving). The last save, in finish, runs after every slice has ended.
// s.mu is held on entry and on return.
func (s *slicer) saveUnlocked() {
	if s.c.store == nil {
		return
	}
	rec, dl := *s.tr.rec, *s.tr.rec.Download
	dl.Slices = slices.Clone(dl.Slices)
	rec.Download = &dl
	s.saving = true
	s.mu.Unlock()
	err := s.tr.claim.take()
	if err == nil {
		err = s.c.store.Save(&rec)
	}
	s.mu.Lock()
	s.saving = false
	if s.tr.rec.Created.IsZero() {
		s.tr.rec.Created = rec.Created
	}
	if err != nil {
		s.c.saveFailed(s.r, err)
	}
	s.r.Saved = s.r.Saved || err == nil
}

// written is the bytes the slices have written (s.mu held).
func (s *slicer) written() int64 {
	var n int64
	for _, sl := range s.plan() {
		n += sl.Done - sl.Start
	}
	return n
}

// sliceFile is slice i's destination: the temporary file, telling the
// slicer how far the slice got. Its ReadAt reads back a slice continued
// from an earlier run.
type sliceFile struct {
	*os.File
	s *slicer
	i int
}

func (f *sliceFile) WriteAt(b []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(b, off)
	f.s.wrote(f.i, off+int64(n))
	return n, err
}
