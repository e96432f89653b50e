package main

import (
	"context"
	"errors"
	"time"

	"github.com/gcsput/gcsput/upload"
)

// syncFlags are sync's options.
type syncFlags struct {
	remote   remoteFlags
	transfer transferFlags
	state    stateFlags

	del       bool             // --delete: remove destination entries the source lacks
	maxDelete string           // --max-delete N|P%: the most one sync may delete
	limit     upload.MaxDelete // maxDelete, parsed
	dryRun    bool             // --dry-run: print the plan, change nothing
	mtime     bool             // --mtime: compare size and mtime instead of size and CRC32C
	include   []string         // --include GLOB
	exclude   []string         // --exclude GLOB
	excludeRE []string         // -x, --exclude-regex REGEX: gsutil rsync's exclusion
	recursive bool             // -r: accepted, sync is always recursive
	hold      holdFlags        // the holds and retention of the objects written
	checksums bool             // --checksums-only: accepted, sync compares CRC32C (not with --mtime)
	noClobber bool             // --no-clobber: never replace what DST holds
	newer     bool             // -u, --skip-if-dest-has-newer-mtime
	ignoreLn  bool             // --ignore-symlinks: skip every symlink of a local source
	followLn  bool             // --no-ignore-symlinks: the default, spelt out
	custom    string           // --custom-time RFC3339: customTime of the objects written
	customAt  time.Time        // custom, parsed
}

var syncCommand = &command{
	name:    "sync",
	aliases: []string{"rsync"},
	args:    "[flags] SRC DST",
	summary: "make a prefix mirror a directory or another prefix, or a directory mirror a prefix",
	help: `
Copies to DST what SRC has and DST lacks or holds differently: local directory to gs://
prefix, gs:// prefix to local directory, or gs:// prefix to gs:// prefix (copied on the
server). Entries are compared by size and CRC32C (the
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

With --encryption-key, every copy is written under the key, an object under another key (or
none) is re-written under it, and an unchanged object under a customer-supplied key is found by
the CRC32C read with the key (one request per object whose size matches). Without a key to
write with, an object under a customer-supplied key is never replaced by an unencrypted one: it
fails, naming its key's SHA256 prefix, the rest is synced, and the exit code is 1
(docs/sync.md).

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
--dry-run prints the plan, the entries that would fail (the summary counts them), the deletes
the guard would refuse or withhold, and changes nothing; it exits 2 when the sync would be refused.

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

gcloud's rsync flags: --checksums-only is accepted (it is how sync compares); --no-clobber
(gsutil's -i) leaves alone every entry DST holds, alike or not; --skip-if-dest-has-newer-mtime
leaves alone an entry whose DST copy is newer (gcloud's -u: gcsput's -u is gsutil's -u PROJECT,
--billing-project); each is reported skipped with why, and a dry run counts them as kept.
--ignore-symlinks (gsutil's -e) skips every symlink of a source directory, keeping what DST
holds under its name; the default, --no-ignore-symlinks, is gsutil's: a symlink to a file is
copied with its target's content (gcloud rsync ignores symlinks by default). gcloud rsync's -n
is --no-clobber; gcsput's -n stays gsutil's dry run. --custom-time TIME (RFC 3339) sets the
customTime of every object an upload sync writes, as gcloud's does.

Before listing, the bucket is asked once whether it exists and whether these credentials
may list it and write there (and delete, with --delete): a mistyped bucket
or a key that may not write is one line and exit code 2, as cp's batches. A source directory
that does not exist, or a file given for a directory, is refused in those words.

Exit codes are cp's, and 2 when the delete guard refuses. Between two gs:// prefixes each object
is copied on the server (rewrite), as cp between buckets copies (docs/copy.md): nothing passes
through this machine.
A Go program has the same sync from the library: upload.Client.Sync, and Client.PlanSync
for the dry run (docs/library-sync.md).

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
		f.hold.register(fs)
		f.transfer.register(fs)
		f.state.register(fs)
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.sync(ctx, f, ops) }
	},
}

// sync parses the operands, asks the library to sync (or, with --dry-run, to
// plan) and prints: the comparing, planning, guarding, copying and deleting
// are upload.Client.Sync's.
func (a *app) sync(ctx context.Context, f *syncFlags, ops []string) error {
	if err := f.checkNewerU(ops); err != nil {
		return err
	}
	if len(ops) != 2 {
		return usagef("sync takes a source and a destination, e.g. 'gcsput sync ./dir gs://bucket/prefix'")
	}
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	if err := f.checkFilters(); err != nil {
		return err
	}
	var err error
	if f.limit, err = parseMaxDelete(f.maxDelete); err != nil {
		return err
	}
	src, dst, err := syncSides(ops)
	if err != nil {
		return err
	}
	if err := f.checkRsyncFlags(); err != nil {
		return err
	}
	holds, err := f.hold.holds()
	if err != nil {
		return err
	}
	o := upload.SyncOptions{Delete: f.del, MaxDelete: f.limit, CompareMTime: f.mtime, Include: f.include, Exclude: f.exclude, ExcludeRegexp: f.excludeRE,
		Holds: holds, NoClobber: f.noClobber, SkipIfDestNewer: f.newer, IgnoreSymlinks: f.ignoreLn, CustomTime: f.customAt}
	if f.custom != "" && (src.IsRemote() || !dst.IsRemote()) {
		return usagef("--custom-time sets the customTime of the objects an upload sync (a directory to gs://) writes; this sync writes none (a copy between buckets keeps the source's)")
	}
	if err := checkSyncSides(src, dst); err != nil {
		return err
	}
	if err := upload.CheckSync(src, dst, o); err != nil {
		return usagef("%v", err)
	}
	cfg := f.transfer
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &cfg, stateDir: f.state.stateDir,
		identity: newJobIdentity("sync", []string{ops[0]}, ops[1], cfg.shard.Count, filterList(f.include, f.exclude, f.excludeRE))})
	if err != nil {
		return err
	}
	defer j.close()
	if ctx, err = j.preflight(ctx, remoteOf(src, dst).Bucket, f.perms(dst.IsRemote())...); err != nil {
		return err
	}
	if f.dryRun {
		plan, err := j.client.PlanSync(ctx, src, dst, o)
		if err != nil {
			return err
		}
		return a.printPlan(plan, f.transfer.json)
	}
	o.OnPlan = func(p *upload.SyncPlan) {
		if dst.IsRemote() && !src.IsRemote() { // the bar's total covers the whole job from the first byte
			j.expectAll(p.NumCopies, p.Bytes) // counts, not a name per file: a million-file plan stays on disk
		}
	}
	rep, err := j.client.Sync(ctx, src, dst, o)
	var refused *upload.DeleteGuardError
	switch {
	case errors.As(err, &refused):
		return usagef("%s", guardMessage(refused))
	case rep == nil:
		return err // a side could not be read: nothing changed
	}
	if rep.DeletesWithheld > 0 {
		j.rep.withhold(rep.DeletesWithheld, rep.WithheldBecause)
	}
	err = j.finish() // the exit code comes from the records, as cp's
	if stopped := j.stop.err(); stopped != nil {
		return stopped
	}
	return err
}

// syncSides reads the operands: a gs:// URL is a prefix, anything else a
// directory, and a near miss of gs:// is an error, not a path.
func syncSides(ops []string) (src, dst upload.Side, err error) {
	var sides [2]upload.Side
	for i, op := range ops {
		if err := checkTypo(op); err != nil {
			return src, dst, err
		}
		if sides[i], err = upload.ParseSide(op); err != nil {
			return src, dst, usagef("%v", err)
		}
	}
	return sides[0], sides[1], nil
}
