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
transfers as cp's; a killed sync resumes when run again.

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
// when unknown), and for an object its generation.
type entry struct {
	size, mtime int64
	crc         uint32
	hasCRC      bool
	gen         int64
	path        string // local path, for CRCs read on demand
}

// syncPlan is what a sync will do.
type syncPlan struct {
	copy    []string // relative paths to copy
	skip    []string // relative paths already the same
	del     []string // relative paths to delete from the destination
	bytes   int64    // bytes to copy
	partial string   // why deletions are off (an incomplete walk), or ""
	sizes   map[string]int64
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

func (s *syncer) prefix() string {
	p := s.remote.object
	if p != "" && !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

func (s *syncer) run(ctx context.Context) error {
	objects, err := s.listRemote(ctx)
	if err != nil {
		return err
	}
	files, partial, err := s.walkLocal()
	if err != nil {
		return err
	}
	from, to := files, objects
	if !s.up {
		from, to = objects, files
	}
	plan, err := s.compare(from, to)
	if err != nil {
		return err
	}
	plan.partial = partial
	if s.f.dryRun {
		return s.printPlan(plan)
	}
	if !s.copy(ctx, plan, from) {
		return s.j.finish() // a copy failed: nothing is deleted
	}
	if s.f.del {
		s.remove(ctx, plan, to)
	}
	return s.j.finish()
}

// listRemote reads the whole listing of the prefix, page by page; a page
// that fails fails the sync before anything changes.
func (s *syncer) listRemote(ctx context.Context) (map[string]*entry, error) {
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
		if ok, _ := s.rules.Match(rel); !ok {
			continue
		}
		out[rel] = objectEntry(o)
	}
	return out, nil
}

func objectEntry(o *storage.ObjectAttrs) *entry {
	e := &entry{size: o.Size, crc: o.CRC32C, hasCRC: true, gen: o.Generation, mtime: o.Updated.Unix()}
	if v, err := strconv.ParseInt(o.Metadata[upload.MetaMTime], 10, 64); err == nil {
		e.mtime = v
	}
	return e
}

// walkLocal reads the local tree. A directory that does not exist is empty
// (a download sync creates it); one that could not be read in full makes the
// walk partial, which turns deletions off.
func (s *syncer) walkLocal() (map[string]*entry, string, error) {
	out := map[string]*entry{}
	if _, err := os.Stat(s.local); errors.Is(err, fs.ErrNotExist) && !s.up {
		return out, "", nil
	}
	ents, err := upload.Walk(s.local)
	partial := ""
	if err != nil {
		if ents == nil {
			return nil, "", err
		}
		partial = err.Error()
	}
	for _, e := range ents {
		if ok, _ := s.rules.Match(e.Rel); !ok {
			continue
		}
		if e.Skip != "" || e.Err != nil || e.Info == nil {
			if s.up { // reported as cp reports them
				s.j.add(&upload.Result{Source: e.Path, Dest: s.url(e.Rel), Status: statusOf(e), Note: e.Skip, Err: e.Err})
			}
			continue
		}
		out[e.Rel] = &entry{size: e.Info.Size(), mtime: e.Info.ModTime().Unix(), path: e.Path}
	}
	return out, partial, nil
}

func statusOf(e upload.Entry) upload.Status {
	if e.Err != nil {
		return upload.StatusFailed
	}
	return upload.StatusSkipped
}

// compare sorts the source's entries into copy and skip, and the
// destination's extra ones into delete.
func (s *syncer) compare(from, to map[string]*entry) (*syncPlan, error) {
	p := &syncPlan{sizes: map[string]int64{}}
	for _, rel := range sortedKeys(from) {
		p.sizes[rel] = from[rel].size
		same, err := s.same(from[rel], to[rel])
		if err != nil {
			return nil, err
		}
		if same {
			p.skip = append(p.skip, rel)
			continue
		}
		p.copy = append(p.copy, rel)
		p.bytes += from[rel].size
	}
	for _, rel := range sortedKeys(to) {
		if from[rel] == nil {
			p.del = append(p.del, rel)
			p.sizes[rel] = to[rel].size
		}
	}
	return p, nil
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

// copy runs the copies through the job (progress, records, sessions) and
// reports the unchanged entries as skipped. It returns true when every
// copy succeeded.
func (s *syncer) copy(ctx context.Context, p *syncPlan, from map[string]*entry) bool {
	for _, rel := range p.skip {
		r := &upload.Result{Source: s.localPath(rel), Dest: s.url(rel), Status: upload.StatusSkipped, Note: "unchanged", Size: from[rel].size}
		if !s.up {
			r.Source, r.Dest = r.Dest, r.Source
		}
		s.j.add(r)
	}
	items := make([]upload.Item, 0, len(p.copy))
	for _, rel := range p.copy {
		u := upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + rel}
		items = append(items, upload.Item{Local: s.localPath(rel), Remote: u})
		if s.up {
			s.j.expect(u.String(), s.localPath(rel), from[rel].size)
		}
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

// remove deletes what the source lacks, unless the walk was partial.
func (s *syncer) remove(ctx context.Context, p *syncPlan, to map[string]*entry) {
	if p.partial != "" {
		s.j.prog.printf("gcsput: not deleting anything: the walk of %s was incomplete (%s)\n", escapeText(s.local), escapeText(p.partial))
		return
	}
	for _, rel := range p.del {
		rec := fileRecord{Type: "file", Op: "delete", Status: "deleted", Bytes: to[rel].size}
		var err error
		if s.up {
			rec.Destination = s.url(rel)
			err = s.j.client.DeleteGeneration(ctx, upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + rel}, to[rel].gen)
		} else {
			rec.Destination = s.localPath(rel)
			err = os.Remove(rec.Destination)
		}
		if err != nil {
			rec.Status, rec.Error = "failed", err.Error()
		}
		s.j.log.write("result", rec)
		s.j.rep.add(rec)
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
	for _, rel := range p.copy {
		line("copy", rel, p.sizes[rel])
	}
	del := 0
	if s.f.del && p.partial == "" {
		del = len(p.del)
		for _, rel := range p.del {
			line("delete", rel, p.sizes[rel])
		}
	}
	sum := fmt.Sprintf("dry run: %d to copy (%s), %d unchanged, %d to delete; nothing was changed", len(p.copy), formatSize(p.bytes), len(p.skip), del)
	if s.f.transfer.json {
		printJSON(s.a.stdout, map[string]any{"type": "summary", "dry_run": true, "copy": len(p.copy), "bytes": p.bytes, "skip": len(p.skip), "delete": del})
	} else {
		fmt.Fprintln(s.a.stderr, sum)
	}
	return nil
}
