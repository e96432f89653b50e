package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/filter"
	"github.com/gcsput/gcsput/internal/gzmeta"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/posix"
	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/internal/walk"
)

// syncEntry is one side's view of a path: size, CRC32C and mtime (seconds;
// 0 when unknown), and for an object its generation.
type syncEntry struct {
	size, mtime int64
	crc         uint32
	hasCRC      bool
	gen         int64
	path        string // local path, for CRCs read on demand
	name        string // object name, for an object
	// An object stored gzip-encoded (gz) has a size and CRC32C of its
	// compressed bytes, which no local file holds: a download writes its
	// content. content is the content's, from the metadata cp -z and -Z
	// write (nil without it); fileMTime says mtime is the stored
	// goog-reserved-file-mtime, not the object's update time.
	gz        bool
	content   *syncEntry
	fileMTime bool
	// An object's encryption, as listed: the SHA256 of its customer-supplied
	// key (whose CRC32C the listing hides), or its Cloud KMS key.
	keySHA, kms string
}

// syncRun is one Sync or PlanSync.
type syncRun struct {
	c        *Client
	src, dst Side
	o        SyncOptions
	keys     Encryption // the call's (see Client.withKeys)
	rules    *filter.Rules
	regexps  []*regexp.Regexp
	shard    shard.Spec
	unchange bool // give unchanged entries to OnResult (Sync; a dry run only counts them)
	// sources counts the source's entries (after the filters, in every
	// shard): an empty source is what the delete guard refuses.
	sources int
	// kept are the paths of the local source entries the walk skips (a
	// symlink to a directory, a pipe): what the destination holds at or
	// under them is not the source's to delete, since the walk did not look.
	kept []string
	// elsewhere counts the walk's failures other shards report: each
	// withholds this shard's deletes too.
	elsewhere int
	mu        sync.Mutex // guards rep and first while copies run
	rep       SyncReport
	first     error // the first failure, for the error
	// keyed are the entries held back until their CSEK objects' CRC32Cs
	// are read, several at once (see keyedLater).
	keyed []keyedMeet
	// odd are the objects of a download whose names are not their local
	// paths ("a//x", "a/./x" are written at a/x): out of the listing's
	// order, they are compared with the file at their path once the merge
	// is done (see meetOdd).
	odd []oddEntry
	// planErr is the first failure to write the plan down (a full disk).
	planErr error
	// hook, set by Sync, marks the failures of an upload stopped at its
	// first 403 or 404 (see Client.preflight); nil for a dry run.
	hook *callHook
	// live counts the entries read from the sides and not yet compared;
	// liveHigh is its high-water mark, which tests hold below the widest
	// directory and the batches in flight.
	live, liveHigh int
}

func (c *Client) newSyncRun(ctx context.Context, src, dst Side, o SyncOptions, unchanged bool) (*syncRun, error) {
	if err := CheckSync(src, dst, o); err != nil {
		return nil, err
	}
	s := &syncRun{c: c, src: src, dst: dst, o: o, keys: c.keys(ctx), unchange: unchanged}
	s.rules, _ = filter.New(o.Include, o.Exclude) // checked by CheckSync
	s.regexps, _ = compileRegexps(o.ExcludeRegexp)
	if c.opts.Shard != "" {
		sp, err := shard.Parse(c.opts.Shard)
		if err != nil {
			return nil, fmt.Errorf("upload: %w: Options.Shard: %w", ErrBadOption, err)
		}
		s.shard = sp
	}
	return s, nil
}

// plan merges the two sides, each read in the order GCS lists names (the
// bytes of the path below the side; a local tree is walked in that order,
// see walk.Ordered): what only the source holds is a copy, what only the
// destination holds a delete (Delete), what both hold is compared. So
// memory is bounded by the widest directory and the batches in flight, not
// by the number of entries; the copies and deletes are written down
// (planList), the ones beyond a bound on disk. The caller closes the plan.
func (s *syncRun) plan(ctx context.Context) (*SyncPlan, error) {
	p := &SyncPlan{Source: s.src, Dest: s.dst, run: s}
	spill := s.o.spillAt
	if spill <= 0 {
		spill = DefaultSpillAt
	}
	p.copies = &planList{dir: s.c.opts.StateDir, spillAt: spill}
	p.deletes = &planList{dir: s.c.opts.StateDir, spillAt: spill}
	err := s.merge(ctx, p)
	if err == nil {
		s.flushKeyed(ctx, p)
		err = s.meetOdd(ctx, p)
	}
	if err == nil {
		err = s.planErr
	}
	if err != nil {
		p.close()
		return nil, err
	}
	p.SourceEntries, p.Failed = s.sources, s.rep.Failed
	if st := s.o.stats; st != nil {
		st.liveHigh, st.copiesMem, st.delsMem = s.liveHigh, len(p.copies.mem), len(p.deletes.mem)
		st.copiesDisk, st.delsDisk = p.copies.spilled(), p.deletes.spilled()
		for _, l := range []*planList{p.copies, p.deletes} {
			if fi, err := l.stat(); err == nil {
				st.modes = append(st.modes, fi.Mode())
			}
		}
	}
	g := s.guard(p)
	p.Refused, p.Withheld = g.refusal(), g.withheld(true, p.Failed, 0)
	return p, nil
}

// read gives fn the entries of side that the filters take: as the source,
// every entry (those skipped or failed are reported and counted, not
// given); as the destination, only what could be copied over or deleted.
// Each side must come in strictly increasing name order, which the merge
// relies on: one that does not fails the sync before anything changes.
func (s *syncRun) read(ctx context.Context, side Side, source bool, fn func(rel string, e *syncEntry) error) error {
	last := ""
	fn0 := fn
	fn = func(rel string, e *syncEntry) error {
		if rel <= last && last != "" {
			return fmt.Errorf("upload: %w: %s: %q came after %q, out of name order (nothing was changed)", ErrIncompleteSide, side, rel, last)
		}
		last = rel
		return fn0(rel, e)
	}
	if side.remote {
		return s.list(ctx, side, source, fn)
	}
	return s.walk(side, source, fn)
}

// takes applies the filters to a path below the sides.
func (s *syncRun) takes(rel string) bool {
	if ok, _ := s.rules.Match(rel); !ok {
		return false
	}
	for _, re := range s.regexps {
		if re.MatchString(rel) {
			return false
		}
	}
	return true
}

// isKept reports whether rel is, or is under, a path the walk skipped.
func (s *syncRun) isKept(rel string) bool {
	for _, k := range s.kept {
		if rel == k || strings.HasPrefix(rel, k+"/") {
			return true
		}
	}
	return false
}

// meet takes a source entry and the destination's (nil: none there) to
// compare, at once or, when CSEK objects' CRC32Cs must be read first, with
// others (keyedLater).
func (s *syncRun) meet(ctx context.Context, p *SyncPlan, rel string, src, dst *syncEntry) error {
	s.sources++
	held := 1
	if dst != nil {
		held++
	}
	if !s.shard.Owns(rel) {
		s.release(held)
		return nil // another shard's
	}
	if dst != nil {
		p.DestEntries++
	}
	if note := s.leftAlone(src, dst); note != "" {
		p.Kept++
		if s.unchange {
			s.told(s.result(rel, src.size, StatusSkipped, note, nil))
		}
		s.release(held)
		return nil
	}
	if !s.keyedLater(ctx, p, rel, src, dst) {
		s.compare(ctx, p, rel, src, dst)
		s.release(held)
	}
	return nil
}

// leftAlone says why the destination's entry is kept as it is without a
// comparison (NoClobber, SkipIfDestNewer); "" when it is to be compared.
func (s *syncRun) leftAlone(src, dst *syncEntry) string {
	switch {
	case dst == nil:
		return ""
	case s.o.NoClobber:
		return "exists (no-clobber)"
	case s.o.SkipIfDestNewer && src.mtime != 0 && dst.mtime > src.mtime:
		return "destination is newer"
	}
	return ""
}

// compare compares a source entry with the destination's: the same is
// reported skipped at once, a difference is planned unless the copy is
// refused (see refusal), which is a failure.
func (s *syncRun) compare(ctx context.Context, p *SyncPlan, rel string, src, dst *syncEntry) {
	same, err := s.unchanged(ctx, src, dst)
	if err == nil && !same {
		err = s.refusal(src, dst)
	}
	if err != nil { // a file that cannot be read, a copy refused: a failure, which withholds the deletes
		s.told(s.result(rel, src.size, StatusFailed, "", err))
		return
	}
	if !same {
		s.planned(p.copies, SyncItem{Path: rel, Size: src.size, e: src})
		p.Bytes += src.size
		return
	}
	p.Unchanged++
	if s.unchange {
		s.told(s.result(rel, src.size, StatusSkipped, "unchanged", nil))
	}
}

// result is the record of rel, from the source to the destination.
func (s *syncRun) result(rel string, size int64, st Status, note string, err error) *Result {
	r := &Result{Source: s.name(s.src, rel), Dest: s.name(s.dst, rel), Status: st, Note: note, Size: size, Err: err}
	for _, side := range []Side{s.src, s.dst} {
		if side.remote {
			r.Bucket, r.Object = side.url.Bucket, side.prefix()+rel
		}
	}
	return r
}

// name is rel on side: a local path or a gs:// URL.
func (s *syncRun) name(side Side, rel string) string {
	if side.remote {
		return "gs://" + side.url.Bucket + "/" + side.prefix() + rel
	}
	return filepath.Join(side.dir, filepath.FromSlash(rel))
}

// list reads a prefix's listing page by page, in the order GCS lists
// names. A page that fails fails the sync before anything changes.
func (s *syncRun) list(ctx context.Context, side Side, source bool, fn func(rel string, e *syncEntry) error) error {
	prefix := side.prefix()
	toLocal := source && !s.dst.remote // a download: the name becomes a path
	for o, err := range s.c.List(ctx, side.url.Bucket, prefix, "") {
		if err != nil {
			return fmt.Errorf("upload: %w: listing gs://%s/%s (nothing was changed): %w", ErrIncompleteSide, side.url.Bucket, prefix, err)
		}
		rel := strings.TrimPrefix(o.Name, prefix)
		switch {
		case rel == "" || strings.HasSuffix(rel, "/"):
			continue // a folder placeholder
		case isComponentName(o.Name):
			continue // a composite upload's, maybe in progress: neither copied nor deleted
		case !s.takes(rel):
			continue
		case isTempFileName(rel):
			if source {
				s.reserved(rel)
			}
			continue
		}
		if toLocal {
			// The name becomes a local path: checked, and cleaned, as a prefix download's.
			local, _, err := naming.LocalPath(s.dst.dir, prefix, o.Name)
			if err != nil {
				if s.sources++; s.shard.Owns(rel) {
					s.told(&Result{Source: s.name(side, rel), Dest: s.dst.dir, Bucket: side.url.Bucket, Object: o.Name, Status: StatusFailed, Err: err})
				}
				continue
			}
			if clean := filepath.ToSlash(local); clean != rel {
				s.hold()
				s.odd = append(s.odd, oddEntry{rel: clean, e: objectEntry(o)})
				continue
			}
		}
		s.hold()
		if err := fn(rel, objectEntry(o)); err != nil {
			return err
		}
	}
	return nil
}

// reserved passes over a source object named like a file gcsput writes
// beside a download (.NAME.gcsput-partial): downloaded, it would take the
// place of NAME's partial file. It is reported skipped, never copied; as a
// destination object it is never deleted either.
func (s *syncRun) reserved(rel string) {
	if s.sources++; s.shard.Owns(rel) {
		s.told(s.result(rel, 0, StatusSkipped, reservedNote, nil))
	}
}

func objectEntry(o *storage.ObjectAttrs) *syncEntry {
	// A listing shows no hashes of an object under a customer-supplied key:
	// its CRC32C is read with the key when the sizes match (see keyedCRC).
	e := &syncEntry{size: o.Size, crc: o.CRC32C, hasCRC: o.CustomerKeySHA256 == "", gen: o.Generation, mtime: o.Updated.Unix(), name: o.Name,
		keySHA: o.CustomerKeySHA256, kms: o.KMSKeyName}
	if v, err := strconv.ParseInt(o.Metadata[posix.MTimeKey], 10, 64); err == nil {
		e.mtime, e.fileMTime = v, true
	}
	if e.gz = gzmeta.IsGzip(o.ContentEncoding); e.gz {
		if size, crc, ok := gzmeta.Decoded(o); ok {
			e.content = &syncEntry{size: size, crc: crc, hasCRC: true, mtime: e.mtime}
		}
	}
	return e
}

// walk streams a local tree in the order GCS lists names. A destination directory that does not exist
// is empty (the download makes it); a tree that cannot be read in full
// fails the sync, after the walk, before anything changes.
func (s *syncRun) walk(side Side, source bool, fn func(rel string, e *syncEntry) error) error {
	if _, err := os.Stat(side.dir); errors.Is(err, fs.ErrNotExist) && !source {
		return nil
	}
	err := walk.Ordered(side.dir, func(e walk.Entry) error {
		if isTempFileName(e.Rel) {
			return nil // gcsput's own, perhaps a live download's: neither copied nor deleted
		}
		if !s.takes(e.Rel) {
			return nil
		}
		if source && s.o.IgnoreSymlinks && e.Link {
			e.Skip, e.Err = "symlink (ignored: --ignore-symlinks)", nil
		}
		if e.Skip != "" || e.Err != nil || e.Info == nil {
			if source {
				s.skipped(e)
			}
			return nil
		}
		s.hold()
		return fn(e.Rel, &syncEntry{size: e.Info.Size(), mtime: e.Info.ModTime().Unix(), path: e.Path})
	})
	if err != nil {
		return fmt.Errorf("upload: %w: %w", ErrIncompleteSide, err)
	}
	return nil
}

// skipped reports a source entry the walk does not copy, as UploadDir
// reports it, in its own shard only; a failure withholds the deletes of
// every shard, and a skipped entry keeps what the destination holds at and
// under its path.
func (s *syncRun) skipped(e walk.Entry) {
	s.sources++
	note := e.Skip
	if e.Skip != "" {
		s.kept = append(s.kept, e.Rel)
		if s.o.Delete {
			note += "; sync --delete keeps what " + s.dst.String() + " holds under this name"
		}
	}
	st := StatusSkipped
	if e.Err != nil {
		st = StatusFailed
	}
	switch {
	case s.shard.Owns(e.Rel):
		r := s.result(e.Rel, 0, st, note, e.Err)
		r.Source = e.Path
		s.told(r)
	case st == StatusFailed:
		s.elsewhere++
	}
}

// same reports whether dst already holds src: same size, then same mtime
// (CompareMTime) or same CRC32C (a local side's is read from the file, a
// CSEK object's with its key). An object stored gzip-encoded is compared by
// its content (see sameContent).
func (s *syncRun) same(ctx context.Context, src, dst *syncEntry) (bool, error) {
	switch {
	case dst == nil:
		return false, nil
	case src.name != "" && dst.name != "":
		// Two objects: a copy on the server copies the stored bytes, gzip or
		// not, so the stored size and CRC32C (or mtime) are what to compare.
		switch {
		case src.size != dst.size:
			return false, nil
		case s.o.CompareMTime:
			return src.mtime == dst.mtime, nil
		}
		return s.sameCRC(ctx, src, dst)
	case dst.gz:
		return s.sameContent(ctx, dst, src)
	case src.gz:
		return s.sameContent(ctx, src, dst)
	case src.size != dst.size:
		return false, nil
	case s.o.CompareMTime:
		return src.mtime == dst.mtime, nil
	}
	return s.sameCRC(ctx, src, dst)
}

// sameContent compares a file with an object stored gzip-encoded, whose own
// size and CRC32C describe compressed bytes the file never holds (a download
// decompresses them): with the content's size and CRC32C that cp -z and -Z
// store in its metadata, else by the mtime gsutil, gcloud and PreservePOSIX
// store (goog-reserved-file-mtime), else it differs: without either, the
// object's content is known only by downloading it, and gsutil's rsync
// copies such objects every run too.
func (s *syncRun) sameContent(ctx context.Context, obj, file *syncEntry) (bool, error) {
	switch {
	case obj.content != nil && file.size != obj.content.size:
		return false, nil
	case obj.content != nil:
		return s.same(ctx, obj.content, file)
	case obj.fileMTime:
		return file.mtime == obj.mtime, nil
	}
	return false, nil
}
