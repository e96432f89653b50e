package main

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/filter"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/posix"
	"github.com/gcsput/gcsput/internal/walk"
	"github.com/gcsput/gcsput/upload"
)

// syncFlags are sync's options.
type syncFlags struct {
	remote   remoteFlags
	transfer transferFlags
	state    stateFlags

	del       bool      // --delete: remove destination entries the source lacks
	maxDelete string    // --max-delete N|P%: the most one sync may delete
	limit     maxDelete // maxDelete, parsed
	dryRun    bool      // --dry-run: print the plan, change nothing
	mtime     bool      // --mtime: compare size and mtime instead of size and CRC32C
	include   []string  // --include GLOB
	exclude   []string  // --exclude GLOB
	excludeRE []string  // -x, --exclude-regex REGEX: gsutil rsync's exclusion
	recursive bool      // -r: accepted, sync is always recursive
}

var syncCommand = &command{
	name:    "sync",
	aliases: []string{"rsync"},
	args:    "[flags] SRC DST",
	summary: "make a prefix mirror a directory, or a directory mirror a prefix",
	help: `
Copies to DST what SRC has and DST lacks or holds differently: local directory to gs://
prefix, or gs:// prefix to local directory. Entries are compared by size and CRC32C (the
local file is read), or with --mtime by size and modification time (stored, as gsutil and
gcloud store it, in goog-reserved-file-mtime). Copies are the same resumable, verified
transfers as cp's; a killed sync resumes when run again. Downloading, objects that collide
locally (gs://bkt/p/a and gs://bkt/p/a/b) are settled as cp settles them: the directory wins.

An object stored with Content-Encoding: gzip (cp -z, -Z) is downloaded decompressed, as cp
does, so its own size and CRC32C (of the compressed bytes) never match a local file: it is
compared by the size and CRC32C of its content that cp -z stored with it
(gcsput-decoded-size, gcsput-decoded-crc32c), else by goog-reserved-file-mtime alone, else it
is copied every run (gsutil rsync does the same with such objects). sync uploads plainly: a
changed file replaces a gzip-encoded object with a plain one.

--delete then removes from DST what SRC lacks: only after a sync without a single failure (in
the walk, the listing or the copies; the summary says how many deletes were withheld and why),
never when a listing or the walk was incomplete, and each object deletion is conditional on the
generation that was listed. The files gcsput writes beside a download (.NAME.gcsput-partial,
.NAME.gcsput-gunzip, perhaps of a download in progress) are neither copied nor deleted, nor
are objects named like them (a download reports them skipped: the names are gcsput's). An
entry the walk skips (a symlink to a directory, not followed; a pipe) keeps what DST holds at
and under its path: a directory replaced by a link is not a directory gone.

The delete guard refuses the whole sync, before anything is copied or deleted, with exit code 2:
  - when SRC holds no entries (after --include/--exclude) and DST would lose some: an unmounted
    volume is an empty directory, and a mistyped prefix an empty listing. There is no override:
    to empty DST on purpose, use 'gcsput rm -r' (or rm -r for a directory).
  - when the deletes are more than --max-delete allows: N entries, or P% of DST's entries. The
    default lets a sync delete half of DST's entries, or 10 if that is more: a nightly backup
    loses a few per cent a night, while a wrong source, a renamed top directory or a tree
    encrypted under new names deletes most of it; the 10 keep a small DST usable.
  - by default, when the deletes would remove every entry of DST however few (SRC and DST share
    no path, as when one is mistyped): the 10 apply only when the two sides overlap.
    --max-delete N or P% replaces the default; --max-delete 100% turns the limit off.
--dry-run prints the plan, the deletes the guard would refuse or withhold, and changes nothing;
it exits 2 when the sync would be refused.

--include and --exclude follow rclone's rules: includes first, the first match decides, any
include excludes what matches none. A pattern without "/" matches a name in any directory
(*.tmp), a leading "/" anchors at the root, ** crosses directories. The rules apply to both
sides: an excluded object is never deleted. A second sync of an unchanged tree sends nothing.

rsync is the same command, spelt as gsutil and gcloud storage spell it, and sync takes their
flags: -r, -R and --recursive are accepted (sync always takes the whole tree); -d and
--delete-unmatched-destination-objects are --delete; -n is --dry-run, as in gsutil rsync
(careful: on cp, -n is gsutil cp's no-clobber); -x REGEX (--exclude-regex) leaves alone the
paths whose relative path matches a Python-style regular expression from its start, as
gsutil's -x does (-x '.*\.tmp$|^cache/'; Go's RE2 syntax: no lookaround). gcloud's --exclude
takes a regular expression too, gcsput's --exclude a glob: one that is plainly a regular
expression (^..., ...$, \.) is refused with this hint. Entries are compared by CRC32C, as
gsutil rsync -c does.

Before listing, the bucket is asked once whether it exists and whether these credentials
may list it and write there (and delete, with --delete): a mistyped bucket
or a key that may not write is one line and exit code 2, as cp's batches. A source directory
that does not exist, or a file given for a directory, is refused in those words.

Exit codes are cp's, and 2 when the delete guard refuses. gs:// to gs:// is not supported.

Examples:
  gcsput sync --delete ./site gs://my-bucket/site
  gcsput sync --exclude '*.tmp' --exclude '/cache/' --bwlimit 20MiB/s --json /srv/data gs://backups/data
  gcsput sync --dry-run gs://my-bucket/photos ./photos
  gcsput rsync -r -d -x '.*\.tmp$' ./site gs://my-bucket/site    # gsutil's spelling
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &syncFlags{}
		fs.Bool(&f.del, "delete", "d", "remove destination entries the source lacks (only after a sync without failures); gsutil's -d, gcloud's --delete-unmatched-destination-objects")
		fs.String(&f.maxDelete, "max-delete", "", "N|P%", "with --delete: refuse to delete more than N entries or P% of the destination (default 50%, or 10 if more, never all)")
		fs.Bool(&f.dryRun, "dry-run", "n", "print what would be copied and deleted; change nothing (-n as in gsutil rsync; cp's -n is no-clobber)")
		fs.Bool(&f.mtime, "mtime", "", "compare size and modification time instead of size and CRC32C")
		fs.List(&f.include, "include", "", "GLOB", "take only paths that match (rclone's rules; repeatable)")
		fs.List(&f.exclude, "exclude", "", "GLOB", "leave paths that match alone, on both sides (repeatable; a glob, where gcloud's --exclude is a regex: use -x for one)")
		f.registerRsyncSpellings(fs)
		f.transfer.register(fs)
		f.state.register(fs)
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.sync(ctx, f, ops) }
	},
}

// entry is one side's view of a path: size, CRC32C and mtime (seconds; 0
// when unknown), and for an object its generation. seen marks the entries of
// the side held in memory that the streamed side also has.
type entry struct {
	size, mtime int64
	crc         uint32
	hasCRC      bool
	gen         int64
	path        string // local path, for CRCs read on demand
	name        string // object name, for an object
	seen        bool
	// An object stored gzip-encoded (gz) has a size and CRC32C of its compressed bytes,
	// which no local file holds: a download writes its content. content is the content's,
	// from the metadata -z and -Z write (nil without it); fileMTime says mtime is the
	// stored goog-reserved-file-mtime, not the object's update time.
	gz        bool
	content   *entry
	fileMTime bool
}

// syncPlan is what a sync will do. Only the changes are kept: unchanged
// entries are reported as they are met.
type syncPlan struct {
	copy  []planned // source entries to copy
	del   []planned // destination entries to delete (--delete)
	skip  int       // entries already the same
	bytes int64     // bytes to copy
	dest  int       // destination entries (this shard's)
}

// planned is one change: the path under the sync's root and its entry.
type planned struct {
	rel string
	e   *entry
}

func (a *app) sync(ctx context.Context, f *syncFlags, ops []string) error {
	if len(ops) != 2 {
		return usagef("sync takes a source and a destination, e.g. 'gcsput sync ./dir gs://bucket/prefix'")
	}
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	rules, excludeRE, err := f.filters()
	if err != nil {
		return err
	}
	if f.limit, err = parseMaxDelete(f.maxDelete); err != nil {
		return err
	}
	src, dst := ops[0], ops[1]
	for _, op := range ops {
		if err := checkTypo(op); err != nil {
			return err
		}
	}
	switch {
	case isRemote(src) && isRemote(dst):
		return usagef("sync from gs:// to gs:// is not supported: sync down to a directory, then up")
	case !isRemote(src) && !isRemote(dst):
		return usagef("one side of sync must be gs://")
	}
	var remote remoteURL
	local := src
	if isRemote(dst) {
		remote, err = parseRemote(dst)
	} else {
		remote, err = parseRemote(src)
		local = dst
	}
	if err != nil {
		return err
	}
	up := isRemote(dst)
	if err := checkSyncDir(local, up); err != nil {
		return err
	}
	cfg := f.transfer
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &cfg, stateDir: f.state.stateDir,
		identity: newJobIdentity("sync", []string{src}, dst, cfg.shard.Count, filterList(f.include, f.exclude, f.excludeRE))})
	if err != nil {
		return err
	}
	defer j.close()
	if ctx, err = j.preflight(ctx, remote.bucket, f.perms(up)...); err != nil {
		return err
	}
	s := &syncer{a: a, j: j, f: f, rules: rules, excludeRE: excludeRE, remote: remote, local: local, up: up, src: src, dst: dst}
	return s.run(ctx)
}

// syncer runs one sync.
type syncer struct {
	a     *app
	j     *job
	f     *syncFlags
	rules *filter.Rules
	// excludeRE are the -x patterns: a path one matches is left alone, as one --exclude
	// matches.
	excludeRE []*regexp.Regexp
	remote    remoteURL
	local     string
	up        bool // local → gs://
	src       string
	dst       string // the operands, as given
	// sources counts the source's entries (after the filters, in every
	// shard): an empty source is what the delete guard refuses.
	sources int
	// kept are the paths of the local entries an upload skips (a symlink to
	// a directory, a pipe): what the destination holds at or under them is
	// not the source's to delete, since the walk did not look.
	kept []string
	// otherFailures counts the walk's failures other shards report: each
	// withholds this shard's deletes too.
	otherFailures int
}

func (s *syncer) prefix() string { return folderPrefix(s.remote.object) }

// run plans, asks the delete guard, copies, and deletes only when nothing
// failed on the way. Nothing changes until both sides are read in full.
func (s *syncer) run(ctx context.Context) error {
	plan, err := s.plan(ctx)
	if err != nil {
		return err
	}
	guard := s.deletePlan(plan)
	if s.f.dryRun {
		return s.printPlan(plan, guard)
	}
	if err := guard.refusal(); err != nil {
		return err
	}
	ok := s.copy(ctx, plan)
	guard.failed, guard.interr = s.j.rep.failures()
	if why := guard.withheld(ok); why != "" {
		s.j.rep.withhold(len(plan.del), why)
	} else {
		s.remove(ctx, plan)
	}
	err = s.j.finish()
	if stopped := s.j.stop.err(); stopped != nil {
		return stopped
	}
	return err
}

// plan holds one side in memory and streams the other past it: for an
// upload the bucket's listing is held and the tree walked; for a download
// the tree is held and the listing read page by page. The held side is the
// destination: what the source did not meet there is to delete (--delete).
func (s *syncer) plan(ctx context.Context) (*syncPlan, error) {
	plan := &syncPlan{}
	var held map[string]*entry
	var err error
	if s.up {
		if held, err = s.listRemote(ctx, nil); err == nil {
			err = s.walkLocal(func(rel string, e *entry) error { return s.meet(plan, rel, e, held[rel]) })
		}
	} else {
		held = map[string]*entry{}
		if err = s.walkLocal(func(rel string, e *entry) error { held[rel] = e; return nil }); err == nil {
			_, err = s.listRemote(ctx, func(rel string, e *entry) error { return s.meet(plan, rel, e, held[rel]) })
		}
	}
	if err != nil {
		return nil, err
	}
	for _, rel := range sortedKeys(held) {
		if !s.j.shard.Owns(rel) {
			continue // --delete deletes only this shard's
		}
		plan.dest++
		if !held[rel].seen && s.f.del && !s.isKept(rel) {
			plan.del = append(plan.del, planned{rel, held[rel]})
		}
	}
	return plan, nil
}

// isKept reports whether rel is, or is under, a path the walk skipped.
func (s *syncer) isKept(rel string) bool {
	for _, k := range s.kept {
		if rel == k || strings.HasPrefix(rel, k+"/") {
			return true
		}
	}
	return false
}

// deletePlan is what the delete guard needs to know of this sync.
func (s *syncer) deletePlan(p *syncPlan) deletePlan {
	d := deletePlan{src: s.src, dst: s.dst, srcNoun: "file", dstNoun: "object", emptyHint: "gcsput rm -r " + s.dst,
		source: s.sources, dest: p.dest, del: len(p.del), filtered: len(s.f.include)+len(s.f.exclude)+len(s.f.excludeRE) > 0, limit: s.f.limit}
	if !s.up {
		d.srcNoun, d.dstNoun, d.emptyHint = "object", "file", "rm -r "+s.dst
	}
	d.failed, d.interr = s.j.rep.failures()
	d.elsewhere = s.otherFailures
	return d
}

// meet compares a source entry with the destination's (nil: none there):
// the same is reported skipped at once, a difference is planned.
func (s *syncer) meet(p *syncPlan, rel string, src, dst *entry) error {
	s.sources++
	if dst != nil {
		dst.seen = true
	}
	if !s.j.shard.Owns(rel) {
		return nil // another shard's
	}
	same, err := s.same(src, dst)
	if err != nil { // a file that cannot be read: a failure, which withholds the deletes
		s.j.add(s.result(rel, src.size, upload.StatusFailed, "", err))
		return nil
	}
	if !same {
		p.copy = append(p.copy, planned{rel, src})
		p.bytes += src.size
		return nil
	}
	p.skip++
	if !s.f.dryRun {
		s.j.add(s.result(rel, src.size, upload.StatusSkipped, "unchanged", nil))
	}
	return nil
}

// result is the record of rel in the sync's direction.
func (s *syncer) result(rel string, size int64, st upload.Status, note string, err error) *upload.Result {
	r := &upload.Result{Source: s.localPath(rel), Dest: s.url(rel), Status: st, Note: note, Size: size, Err: err}
	if !s.up {
		r.Source, r.Dest = r.Dest, r.Source
	}
	return r
}

// listRemote reads the prefix's listing page by page, giving each object to
// each (when set) or keeping it in the map it returns. A page that fails
// fails the sync before anything changes.
func (s *syncer) listRemote(ctx context.Context, each func(rel string, e *entry) error) (map[string]*entry, error) {
	out := map[string]*entry{}
	prefix := s.prefix()
	for o, err := range s.j.client.List(ctx, s.remote.bucket, prefix, "") {
		if err != nil {
			return nil, fmt.Errorf("listing gs://%s/%s (nothing was changed): %w", s.remote.bucket, prefix, err)
		}
		rel := strings.TrimPrefix(o.Name, prefix)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a folder placeholder
		}
		if upload.IsComponentName(o.Name) {
			continue // a composite upload's, maybe in progress: neither copied nor deleted
		}
		if !s.keep(rel) {
			continue
		}
		if upload.IsTempFileName(rel) {
			s.reserved(rel)
			continue
		}
		if !s.up {
			// The name becomes a local path: checked, and cleaned, as a prefix download's.
			local, _, err := naming.LocalPath(s.local, prefix, o.Name)
			if err != nil {
				s.sources++
				if s.j.shard.Owns(rel) {
					s.j.add(&upload.Result{Source: s.url(rel), Dest: s.local, Status: upload.StatusFailed, Err: err})
				}
				continue
			}
			rel = filepath.ToSlash(local)
		}
		if each == nil {
			out[rel] = objectEntry(o)
		} else if err := each(rel, objectEntry(o)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reserved passes over an object named like a file gcsput writes beside a
// download (.NAME.gcsput-partial): downloaded, it would take the place of
// NAME's partial file. It is neither copied nor deleted, in either direction;
// a download reports it skipped.
func (s *syncer) reserved(rel string) {
	if s.up {
		return
	}
	if s.sources++; !s.j.shard.Owns(rel) {
		return
	}
	s.j.add(&upload.Result{Source: s.url(rel), Dest: s.localPath(rel), Status: upload.StatusSkipped,
		Note: upload.ReservedNote})
}

func objectEntry(o *storage.ObjectAttrs) *entry {
	e := &entry{size: o.Size, crc: o.CRC32C, hasCRC: true, gen: o.Generation, mtime: o.Updated.Unix(), name: o.Name}
	if v, err := strconv.ParseInt(o.Metadata[posix.MTimeKey], 10, 64); err == nil {
		e.mtime, e.fileMTime = v, true
	}
	if e.gz = upload.IsGzip(o.ContentEncoding); e.gz {
		if size, crc, ok := upload.Decoded(o); ok {
			e.content = &entry{size: size, crc: crc, hasCRC: true, mtime: e.mtime}
		}
	}
	return e
}

// walkLocal streams the local tree to each. A directory that does not exist
// is empty (a download sync creates it); one that cannot be read in full
// fails the sync, after the walk, before anything changes.
func (s *syncer) walkLocal(each func(rel string, e *entry) error) error {
	if _, err := os.Stat(s.local); errors.Is(err, fs.ErrNotExist) && !s.up {
		return nil
	}
	return walk.Each(s.local, func(e walk.Entry) error {
		if upload.IsTempFileName(e.Rel) {
			return nil // gcsput's own, perhaps a live download's: neither copied nor deleted
		}
		if !s.keep(e.Rel) {
			return nil
		}
		if e.Skip != "" || e.Err != nil || e.Info == nil {
			if s.up {
				s.skipped(e)
			}
			return nil
		}
		return each(e.Rel, &entry{size: e.Info.Size(), mtime: e.Info.ModTime().Unix(), path: e.Path})
	})
}

// skipped reports an entry an upload does not copy as cp reports it, in its
// own shard only; a failure withholds the deletes of every shard, and a
// skipped entry keeps what the destination holds at and under its path.
func (s *syncer) skipped(e walk.Entry) {
	s.sources++
	note := e.Skip
	if e.Skip != "" {
		s.kept = append(s.kept, e.Rel)
		if s.f.del {
			note += "; sync --delete keeps what " + s.dst + " holds under this name"
		}
	}
	switch {
	case s.j.shard.Owns(e.Rel):
		s.j.add(&upload.Result{Source: e.Path, Dest: s.url(e.Rel), Status: statusOf(e), Note: note, Err: e.Err})
	case statusOf(e) == upload.StatusFailed:
		s.otherFailures++
	}
}

func statusOf(e walk.Entry) upload.Status {
	if e.Err != nil {
		return upload.StatusFailed
	}
	return upload.StatusSkipped
}

// same reports whether dst already holds src: same size, then same mtime
// (--mtime) or same CRC32C (the local side's is read from the file). An
// object stored gzip-encoded is compared by its content (see sameContent).
func (s *syncer) same(src, dst *entry) (bool, error) {
	if dst == nil {
		return false, nil
	}
	if obj, file := s.sides(src, dst); obj.gz {
		return s.sameContent(obj, file)
	}
	if src.size != dst.size {
		return false, nil
	}
	if s.f.mtime {
		return src.mtime == dst.mtime, nil
	}
	for _, e := range []*entry{src, dst} {
		if !e.hasCRC {
			crc, err := fileCRC(e.path)
			if err != nil {
				return false, err
			}
			e.crc, e.hasCRC = crc, true
		}
	}
	return src.crc == dst.crc, nil
}

func fileCRC(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	if _, err := io.Copy(h, f); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return h.Sum32(), nil
}

func (s *syncer) url(rel string) string { return "gs://" + s.remote.bucket + "/" + s.prefix() + rel }

func (s *syncer) localPath(rel string) string { return filepath.Join(s.local, filepath.FromSlash(rel)) }
