package main

import (
	"context"

	"github.com/gcsput/gcsput/upload"
)

// mvFlags are mv's options: cp's shared ones, -r and -n.
type mvFlags struct {
	remote   remoteFlags
	transfer transferFlags
	state    stateFlags

	recursive bool // -r, -R: directories and prefixes
	noClobber bool // -n: never overwrite; the source of a skipped move is kept
	hold      holdFlags

	identity *jobIdentity
}

var mvCommand = &command{
	name:    "mv",
	args:    "[flags] SRC... DST",
	summary: "move files and objects: copy, verify, then remove the source",
	help: `
Moves local files and directories (-r) to GCS, objects and prefixes (-r) to local paths, and
objects and prefixes between gs:// locations. Operands and destination names are cp's (see
'gcsput cp --help'); sources are all local or all gs://. A gs:// source may be a wildcard
(*, ?, [ab], **), expanded as cp's: every match moves into the destination directory or folder.

Each file or object is copied as cp copies it (resumable, retried, checked by CRC32C), then
verified, and only then is its source removed, so a failure at any step leaves both, never
neither:
  local -> gs   the object's generation, size and CRC32C are read back and must be those
                of the upload (whose CRC32C GCS checked against the bytes read); the file
                must still have the size, mtime, ctime and inode it had before the upload,
                else it is kept (it changed: the object holds the version before).
  gs -> local   the download is checked by CRC32C before its rename; the object is then
                deleted only if it is still the generation downloaded (ifGenerationMatch):
                an object overwritten in between is kept.
  gs -> gs      inside one bucket, one objects.move call (nothing copied, never neither):
                the source must still be the generation read (ifSourceGenerationMatch).
                Across buckets (or with another key, or holds to add): a server-side
                copy of the generation read, as cp copies it (keys included); the
                destination's CRC32C must be the source's; the source is deleted
                under ifGenerationMatch as above.
A move that wrote its destination but kept its source is "failed" and says why (the
destination's state included). Run the same mv again to finish it: an upload cut short
resumes from the server's offset, a copy between gs:// locations from its saved rewrite token.

mv -r moves every file under a directory, then removes the directories left empty (those
holding a symlink, a special file or a file that failed stay), or every object under a
prefix, each deleted under the generation listed; folder placeholder objects stay. Two
sources moving to one destination, a prefix moved into itself, and standard input or
output are refused before anything moves. -n skips destinations that exist and keeps their
sources. --shard is refused: a share of a move cannot know what the others kept. Results
and exit codes are cp's: a line per file (moved, skipped, failed; --json records say
"op":"move"), the summary, 1 if any move failed, 2 for a usage error, 130 when interrupted.

Examples:
  gcsput mv report.pdf gs://my-bucket/reports/
  gcsput mv -r ./outbox gs://my-bucket/inbox/          # ./outbox is gone afterwards
  gcsput mv gs://my-bucket/big.tar /srv/restore/
  gcsput mv -r gs://my-bucket/staging/ gs://my-bucket/published/
  gcsput mv --json -r ./logs gs://archive/logs/ > moved.ndjson
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &mvFlags{}
		fs.Bool(&f.recursive, "recursive", "r", "move directories and prefixes with everything under them")
		fs.Alias("R", "recursive")
		fs.Bool(&f.noClobber, "no-clobber", "n", "never overwrite: skip destinations that exist, and keep their sources")
		f.hold.register(fs)
		f.transfer.register(fs)
		f.state.register(fs)
		f.remote.register(fs)
		return func(ctx context.Context, ops []string) error { return a.mv(ctx, f, ops) }
	},
}

// mv turns the flags into options, makes one library call (which checks the operands,
// plans every move and runs them) and prints what it reports.
func (a *app) mv(ctx context.Context, f *mvFlags, ops []string) error {
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	holds, err := f.hold.holds()
	if err != nil {
		return err
	}
	if f.transfer.shard.Count > 0 {
		return usagef("mv takes no --shard: a share of a move cannot know what the others kept; use cp --shard, then rm")
	}
	if len(ops) < 2 {
		return usagef("need a source and a destination, e.g. 'gcsput mv file.txt gs://bucket/'")
	}
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	o := upload.MoveAllOptions{Recursive: f.recursive, NoClobber: f.noClobber, Holds: holds, DiscardResults: true}
	// The operands are checked before connecting: a typo must not wait for credentials.
	if err := upload.CheckMoveAll(srcs, dst, o); err != nil {
		return libError(err)
	}
	f.identity = newJobIdentity("mv", srcs, dst, 0, nil)
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &f.transfer, stateDir: f.state.stateDir,
		identity: f.identity, op: "move"})
	if err != nil {
		return err
	}
	defer j.close()
	_, err = j.client.MoveAll(ctx, srcs, dst, o) // each result went to j.add as it ended
	return j.end(err)
}
