package main

import (
	"context"
	"errors"
	"time"

	"github.com/gcsput/gcsput/internal/jobrec"
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
	help: `Copies to DST what SRC has and DST lacks or holds differently (by size and CRC32C, or
--mtime): a local directory to a gs:// prefix, a prefix to a directory, or prefix to prefix.
--delete then removes what SRC lacks, behind a guard that refuses to delete too much (exit 2).`,
	examples: `
  gcsput sync --delete ./site gs://my-bucket/site
  gcsput sync --exclude '*.tmp' --exclude '/cache/' --bwlimit 20MiB/s --json /srv/data gs://backups/data
  gcsput sync --dry-run gs://my-bucket/photos ./photos
  gcsput rsync -r -d -x '.*\.tmp$' ./site gs://my-bucket/site    # gsutil's spelling
`,
	see: `docs/sync.md for the delete guard and encrypted objects, docs/gsutil.md for
gsutil's and gcloud's flags; docs/commands.md#gcsput-sync for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &syncFlags{}
		fs.Group("Sync")
		fs.Bool(&f.del, "delete", "d", "delete what SRC lacks (after a sync without failures)\n"+"remove destination entries the source lacks (only after a sync without failures); gsutil's -d, gcloud's --delete-unmatched-destination-objects")
		fs.String(&f.maxDelete, "max-delete", "", "N|P%", "with --delete: delete at most N or P% of DST\n"+"with --delete: refuse to delete more than N entries or P% of the destination (default 50%, or 10 if more, never all)")
		fs.Bool(&f.dryRun, "dry-run", "n", "print the plan, change nothing (cp's -n is no-clobber)\n"+"print what would be copied and deleted; change nothing (-n as in gsutil rsync; cp's -n is no-clobber)")
		fs.Bool(&f.mtime, "mtime", "", "compare size and mtime, not size and CRC32C\n"+"compare size and modification time instead of size and CRC32C")
		fs.Group("Filters")
		fs.List(&f.include, "include", "", "GLOB", "take only paths that match (rclone's rules; repeatable)")
		fs.List(&f.exclude, "exclude", "", "GLOB", "leave paths that match alone, on both sides (repeatable)\n"+"leave paths that match alone, on both sides (repeatable; a glob, where gcloud's --exclude is a regex: use -x for one)")
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
	var err error
	if f.limit, err = upload.ParseMaxDelete(f.maxDelete); err != nil {
		return syncUsage(err)
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
	if err := upload.CheckSync(src, dst, o); err != nil {
		return syncUsage(err)
	}
	cfg := f.transfer
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &cfg, stateDir: f.state.stateDir,
		identity: jobrec.NewIdentity("sync", []string{ops[0]}, ops[1], cfg.shard.Count, jobrec.Filters(f.include, f.exclude, f.excludeRE))})
	if err != nil {
		return err
	}
	defer j.close()
	if f.dryRun {
		plan, err := j.client.PlanSync(ctx, src, dst, o)
		if err != nil {
			return libError(err)
		}
		return a.printPlan(plan, f.transfer.json)
	}
	o.OnPlan = func(p *upload.SyncPlan) {
		if dst.IsRemote() && !src.IsRemote() { // the bar's total covers the whole job from the first byte
			j.expectAll(p.Bytes) // counts, not a name per file: a million-file plan stays on disk
		}
	}
	rep, err := j.client.Sync(ctx, src, dst, o)
	var refused *upload.DeleteGuardError
	switch {
	case errors.As(err, &refused):
		return usagef("%s", guardMessage(refused))
	case rep == nil:
		return libError(err) // refused, or a side could not be read: nothing changed
	}
	if rep.DeletesWithheld > 0 {
		j.rep.withhold(rep.DeletesWithheld, rep.WithheldBecause)
	}
	ferr := j.finish() // the exit code comes from the records, as cp's
	if errors.Is(err, upload.ErrBatchStopped) {
		return err
	}
	return ferr
}

// syncSides reads the operands: a gs:// URL is a prefix, anything else a
// directory, and a near miss of gs:// is an error, not a path (upload.ParseSide).
func syncSides(ops []string) (src, dst upload.Side, err error) {
	var sides [2]upload.Side
	for i, op := range ops {
		if sides[i], err = upload.ParseSide(op); err != nil {
			return src, dst, usagef("%v", err)
		}
	}
	return sides[0], sides[1], nil
}
