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

	del     bool     // --delete: remove destination entries the source lacks
	dryRun  bool     // --dry-run: print the plan, change nothing
	mtime   bool     // --mtime: compare size and mtime instead of size and CRC32C
	include []string // --include GLOB
	exclude []string // --exclude GLOB
}

var syncCommand = &command{
	name:    "sync",
	args:    "[flags] SRC DST",
	summary: "make a prefix mirror a directory, or a directory mirror a prefix",
	help: `
Copies to DST what SRC has and DST lacks or holds differently: local directory to gs://
prefix, or gs:// prefix to local directory. Entries are compared by size and CRC32C (the
local file is read), or with --mtime by size and modification time (stored, as gsutil and
gcloud store it, in goog-reserved-file-mtime). Copies are the same resumable, verified
transfers as cp's; a killed sync resumes when run again. Downloading, objects that collide
locally (gs://bkt/p/a and gs://bkt/p/a/b) are settled as cp settles them: the directory wins.

--delete then removes from DST what SRC lacks: only after every copy succeeded, never when a
listing or the walk was incomplete, and each object deletion is conditional on the generation
that was listed. --dry-run prints the plan and changes nothing.

--include and --exclude follow rclone's rules: includes first, the first match decides, any
include excludes what matches none. A pattern without "/" matches a name in any directory
(*.tmp), a leading "/" anchors at the root, ** crosses directories. The rules apply to both
sides: an excluded object is never deleted. A second sync of an unchanged tree sends nothing.

Exit codes are cp's. gs:// to gs:// is not supported.

Examples:
  gcsput sync --delete ./site gs://my-bucket/site
  gcsput sync --exclude '*.tmp' --exclude '/cache/' --bwlimit 20MiB/s --json /srv/data gs://backups/data
  gcsput sync --dry-run gs://my-bucket/photos ./photos
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &syncFlags{}
		fs.Bool(&f.del, "delete", "d", "remove destination entries the source lacks (after every copy succeeded)")
		fs.Bool(&f.dryRun, "dry-run", "", "print what would be copied and deleted; change nothing")
		fs.Bool(&f.mtime, "mtime", "", "compare size and modification time instead of size and CRC32C")
		fs.List(&f.include, "include", "", "GLOB", "take only paths that match (rclone's rules; repeatable)")
		fs.List(&f.exclude, "exclude", "x", "GLOB", "leave paths that match alone, on both sides (repeatable)")
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
}

// syncPlan is what a sync will do. Only the changes are kept: unchanged
// entries are reported as they are met.
type syncPlan struct {
	copy  []planned // source entries to copy
	del   []planned // destination entries to delete
	skip  int       // entries already the same
	bytes int64     // bytes to copy
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
	rules, err := filter.New(f.include, f.exclude)
	if err != nil {
		return usagef("%v", err)
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
	if fi, err := os.Stat(local); up && (err != nil || !fi.IsDir()) {
		return usagef("%s: the source of an upload sync must be a directory", local)
	}
	cfg := f.transfer
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &cfg, stateDir: f.state.stateDir})
	if err != nil {
		return err
	}
	defer j.close()
	s := &syncer{a: a, j: j, f: f, rules: rules, remote: remote, local: local, up: up}
	return s.run(ctx)
}

// syncer runs one sync.
type syncer struct {
	a      *app
	j      *job
	f      *syncFlags
	rules  *filter.Rules
	remote remoteURL
	local  string
	up     bool // local → gs://
}

func (s *syncer) prefix() string { return folderPrefix(s.remote.object) }

// run holds one side in memory and streams the other past it: for an upload
// the bucket's listing is held and the tree walked; for a download the tree
// is held and the listing read page by page. Nothing changes until both are
// read in full.
func (s *syncer) run(ctx context.Context) error {
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
		return err
	}
	for _, rel := range sortedKeys(held) {
		if !held[rel].seen && s.j.shard.Owns(rel) { // --delete deletes only this shard's
			plan.del = append(plan.del, planned{rel, held[rel]})
		}
	}
	if s.f.dryRun {
		return s.printPlan(plan)
	}
	if !s.copy(ctx, plan) {
		return s.j.finish() // a copy failed: nothing is deleted
	}
	if s.f.del {
		s.remove(ctx, plan)
	}
	return s.j.finish()
}

// meet compares a source entry with the destination's (nil: none there):
// the same is reported skipped at once, a difference is planned.
func (s *syncer) meet(p *syncPlan, rel string, src, dst *entry) error {
	if dst != nil {
		dst.seen = true
	}
	if !s.j.shard.Owns(rel) {
		return nil // another shard's
	}
	same, err := s.same(src, dst)
	if err != nil {
		return err
	}
	if !same {
		p.copy = append(p.copy, planned{rel, src})
		p.bytes += src.size
		return nil
	}
	p.skip++
	if !s.f.dryRun {
		r := &upload.Result{Source: s.localPath(rel), Dest: s.url(rel), Status: upload.StatusSkipped, Note: "unchanged", Size: src.size}
		if !s.up {
			r.Source, r.Dest = r.Dest, r.Source
		}
		s.j.add(r)
	}
	return nil
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
		if ok, _ := s.rules.Match(rel); !ok {
			continue
		}
		if !s.up {
			// The name becomes a local path: checked, and cleaned, as a prefix download's.
			local, _, err := naming.LocalPath(s.local, prefix, o.Name)
			if err != nil {
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

func objectEntry(o *storage.ObjectAttrs) *entry {
	e := &entry{size: o.Size, crc: o.CRC32C, hasCRC: true, gen: o.Generation, mtime: o.Updated.Unix(), name: o.Name}
	if v, err := strconv.ParseInt(o.Metadata[posix.MTimeKey], 10, 64); err == nil {
		e.mtime = v
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
		if ok, _ := s.rules.Match(e.Rel); !ok {
			return nil
		}
		if e.Skip != "" || e.Err != nil || e.Info == nil {
			if s.up { // reported as cp reports them
				s.j.add(&upload.Result{Source: e.Path, Dest: s.url(e.Rel), Status: statusOf(e), Note: e.Skip, Err: e.Err})
			}
			return nil
		}
		return each(e.Rel, &entry{size: e.Info.Size(), mtime: e.Info.ModTime().Unix(), path: e.Path})
	})
}

func statusOf(e walk.Entry) upload.Status {
	if e.Err != nil {
		return upload.StatusFailed
	}
	return upload.StatusSkipped
}

// same reports whether dst already holds src: same size, then same mtime
// (--mtime) or same CRC32C (the local side's is read from the file).
func (s *syncer) same(src, dst *entry) (bool, error) {
	if dst == nil || src.size != dst.size {
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

// copy runs the planned copies through the job (progress, records,
// sessions). It returns true when every copy succeeded.
func (s *syncer) copy(ctx context.Context, p *syncPlan) bool {
	items := make([]upload.Item, 0, len(p.copy))
	for _, c := range p.copy {
		u, local := upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + c.rel}, s.localPath(c.rel)
		switch {
		case s.up:
			s.j.expect(u.String(), local, c.e.size)
		case !inside(s.local, local):
			s.j.add(&upload.Result{Source: s.url(c.rel), Dest: local, Status: upload.StatusFailed,
				Err: fmt.Errorf("refusing to download %s: a symlink on its path leads out of %s", c.e.name, s.local)})
			continue
		default:
			u.Object = c.e.name // the name as listed; rel is its cleaned local form
		}
		items = append(items, upload.Item{Local: local, Remote: u})
	}
	if len(items) == 0 {
		return true
	}
	var err error
	if s.up {
		_, err = s.j.client.Upload(ctx, items, upload.UploadOptions{PreservePOSIX: true})
	} else {
		_, err = s.j.client.DownloadObjects(ctx, items, upload.DownloadOptions{PreservePOSIX: true})
	}
	return err == nil
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

// remove deletes what the source lacks: the entries of the side held in
// memory that the streamed side did not have.
func (s *syncer) remove(ctx context.Context, p *syncPlan) {
	for _, d := range p.del {
		rec := fileRecord{Type: "file", Op: "delete", Status: "deleted", Bytes: d.e.size}
		var err error
		if s.up {
			rec.Destination = s.url(d.rel)
			err = s.j.client.DeleteGeneration(ctx, upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + d.rel}, d.e.gen)
		} else {
			rec.Destination = s.localPath(d.rel)
			err = os.Remove(rec.Destination)
		}
		if err != nil {
			rec.Status, rec.Error = "failed", err.Error()
		}
		s.j.record(rec)
	}
}

// printPlan prints what a sync would do, changing nothing.
func (s *syncer) printPlan(p *syncPlan) error {
	line := func(action, rel string, size int64) {
		src, dst := s.localPath(rel), s.url(rel)
		if !s.up {
			src, dst = dst, src
		}
		if action == "delete" {
			src = ""
		}
		if s.f.transfer.json {
			printJSON(s.a.stdout, map[string]any{"type": "plan", "action": action, "source": src, "destination": dst, "bytes": size})
			return
		}
		if action == "delete" {
			fmt.Fprintf(s.a.stdout, "would delete %10s  %s\n", formatSize(size), escapeText(dst))
			return
		}
		fmt.Fprintf(s.a.stdout, "would %-6s %10s  %s -> %s\n", action, formatSize(size), escapeText(src), escapeText(dst))
	}
	for _, c := range p.copy {
		line("copy", c.rel, c.e.size)
	}
	del := 0
	if s.f.del {
		del = len(p.del)
		for _, d := range p.del {
			line("delete", d.rel, d.e.size)
		}
	}
	sum := fmt.Sprintf("dry run: %d to copy (%s), %d unchanged, %d to delete; nothing was changed", len(p.copy), formatSize(p.bytes), p.skip, del)
	if s.f.transfer.json {
		printJSON(s.a.stdout, map[string]any{"type": "summary", "dry_run": true, "copy": len(p.copy), "bytes": p.bytes, "skip": p.skip, "delete": del})
	} else {
		fmt.Fprintln(s.a.stderr, sum)
	}
	return nil
}
