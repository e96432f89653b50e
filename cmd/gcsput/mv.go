package main

import (
	"context"

	"github.com/gcsput/gcsput/internal/jobrec"
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

	identity *jobrec.Identity
}

var mvCommand = &command{
	name:    "mv",
	args:    "[flags] SRC... DST",
	summary: "move files and objects: copy, verify, then remove the source",
	help: `Moves local files and directories (-r) to GCS, objects and prefixes (-r) to local paths, and
objects between gs:// locations: each is copied as cp copies it and verified, and only then is
its source removed, so a failure leaves both, never neither.`,
	examples: `
  gcsput mv report.pdf gs://my-bucket/reports/
  gcsput mv -r ./outbox gs://my-bucket/inbox/          # ./outbox is gone afterwards
  gcsput mv gs://my-bucket/big.tar /srv/restore/
  gcsput mv -r gs://my-bucket/staging/ gs://my-bucket/published/
  gcsput mv --json -r ./logs gs://archive/logs/ > moved.ndjson
`,
	see: `docs/mv.md for what is checked before a source is removed; docs/commands.md#gcsput-mv for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		f := &mvFlags{}
		fs.Group("Transfer")
		fs.Bool(&f.recursive, "recursive", "r", "move directories and prefixes with everything under them")
		fs.Alias("R", "recursive")
		fs.Group("Preconditions")
		fs.Bool(&f.noClobber, "no-clobber", "n", "skip existing destinations and keep their sources\n"+"never overwrite: skip destinations that exist, and keep their sources")
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
	f.identity = jobrec.NewIdentity("mv", srcs, dst, 0, nil)
	j, err := a.newJob(ctx, jobConfig{remote: &f.remote, transfer: &f.transfer, stateDir: f.state.stateDir,
		identity: f.identity, op: "move"})
	if err != nil {
		return err
	}
	defer j.close()
	_, err = j.client.MoveAll(ctx, srcs, dst, o) // each result went to j.add as it ended
	return j.end(err)
}
