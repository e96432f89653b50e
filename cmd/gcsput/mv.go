package main

import (
	"context"
	"errors"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcsput/gcsput/internal/walk"
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

// mv checks the operands, plans every move and runs them.
func (a *app) mv(ctx context.Context, f *mvFlags, ops []string) error {
	if err := f.remote.check(); err != nil {
		return err
	}
	if err := f.transfer.check(); err != nil {
		return err
	}
	if _, err := f.hold.holds(); err != nil {
		return err
	}
	if f.transfer.shard.Count > 0 {
		return usagef("mv takes no --shard: a share of a move cannot know what the others kept; use cp --shard, then rm")
	}
	if len(ops) < 2 {
		return usagef("need a source and a destination, e.g. 'gcsput mv file.txt gs://bucket/'")
	}
	remote := 0
	for _, op := range ops {
		if err := checkTypo(op); err != nil {
			return err
		}
		if op == "-" {
			return usagef("mv cannot move standard input or output: use 'gcsput cp' for a stream")
		}
		if isRemote(op) {
			remote++
		}
	}
	srcs, dst := ops[:len(ops)-1], ops[len(ops)-1]
	if isRemote(dst) {
		remote--
	}
	if remote != 0 && remote != len(srcs) {
		return usagef("mv: the sources must be all local paths or all gs:// URLs")
	}
	f.identity = newJobIdentity("mv", srcs, dst, 0, nil)
	switch {
	case remote == 0 && isRemote(dst):
		return a.mvUp(ctx, f, srcs, dst)
	case remote == 0:
		return usagef("neither %s nor %s is a gs:// URL: one side of mv must be GCS (use your system's mv)", srcs[0], dst)
	case isRemote(dst):
		return a.mvAcross(ctx, f, srcs, dst)
	}
	return a.mvDown(ctx, f, srcs, dst)
}

func (f *mvFlags) jobConfig() jobConfig {
	return jobConfig{remote: &f.remote, transfer: &f.transfer, stateDir: f.state.stateDir, identity: f.identity, op: "move"}
}

func (f *mvFlags) options() upload.MoveOptions {
	// Objects stored gzip-encoded arrive decompressed, as cp writes them.
	holds, _ := f.hold.holds() // checked in mv
	return upload.MoveOptions{NoClobber: f.noClobber, Download: upload.DownloadOptions{Decompress: true},
		Upload: upload.UploadOptions{Attrs: upload.Attrs{Holds: holds}}}
}

// mvUp moves local files and directories to GCS.
func (a *app) mvUp(ctx context.Context, f *mvFlags, srcs []string, dst string) error {
	u, err := parseRemote(dst)
	if err != nil {
		return err
	}
	plan, err := planUpload(srcs, u, f.recursive)
	if err != nil {
		return err
	}
	var dsts []movedTo
	for _, it := range plan {
		dsts = append(dsts, movedTo{it.src.path, "gs://" + it.dst.bucket + "/" + it.dst.name, it.src.isDir})
	}
	if err := distinct(dsts); err != nil {
		return err
	}
	j, err := a.newJob(ctx, f.jobConfig())
	if err != nil {
		return err
	}
	defer j.close()
	if err := j.count(plan); err != nil {
		return err
	}
	var walkErr error
	_ = j.client.MoveSeq(ctx, moves(j.stream(plan, &walkErr)), f.options()) // results: j.add, as they ended
	for _, it := range plan {
		if it.src.isDir && walkErr == nil {
			if _, err := walk.RemoveEmptyDirs(it.src.path); err != nil {
				j.rep.warn("removing the emptied directories under " + it.src.path + ": " + err.Error())
			}
		}
	}
	if walkErr != nil {
		return walkErr
	}
	return j.finish()
}

// moves turns upload items (local → gs) into moves.
func moves(items iter.Seq[upload.Item]) iter.Seq[upload.MoveItem] {
	return func(yield func(upload.MoveItem) bool) {
		for it := range items {
			if !yield(upload.MoveItem{Src: upload.LocalSide(it.Local), Dst: upload.RemoteSide(it.Remote)}) {
				return
			}
		}
	}
}

// mvDown moves objects and prefixes to local paths.
func (a *app) mvDown(ctx context.Context, f *mvFlags, srcs []string, dst string) error {
	if _, err := planDownload(ctx, srcs, dst, f.recursive, parseRemote, nil); err != nil {
		return err
	}
	j, srcs, wild, err := a.moveJob(ctx, f, srcs)
	if err != nil {
		return err
	}
	defer j.close()
	plan, err := j.planExpanded(ctx, srcs, wild, dst, f.recursive)
	if err != nil {
		return err
	}
	var dsts []movedTo
	for _, it := range plan {
		dsts = append(dsts, movedTo{it.src.String(), it.dst, it.prefix})
	}
	if err := distinct(dsts); err != nil {
		return err
	}
	return j.runMoves(ctx, f, dsts)
}

// runMoves moves each prefix of plan in turn (a listing that fails stops the command), then
// its objects as one batch on the job's streams, and ends the job.
func (j *job) runMoves(ctx context.Context, f *mvFlags, plan []movedTo) error {
	var objects []upload.MoveItem
	for _, m := range plan {
		if !m.tree {
			src, err := upload.ParseSide(m.src)
			if err != nil {
				return err
			}
			dst, err := upload.ParseSide(m.dst)
			if err != nil {
				return err
			}
			objects = append(objects, upload.MoveItem{Src: src, Dst: dst})
			continue
		}
		from, err := parseRemote(m.src)
		if err != nil {
			return err
		}
		dst, err := upload.ParseSide(m.dst)
		if err != nil {
			return err
		}
		if _, err := j.client.MovePrefix(ctx, from.lib(), dst, f.options()); prefixFailed(err) {
			return err
		}
	}
	_ = j.client.MoveSeq(ctx, slices.Values(objects), f.options())
	return j.finish()
}

// prefixFailed is the error of a prefix move that stops the command: not one that only
// says some moves failed (each was reported), but one that moved nothing (a listing failed).
func prefixFailed(err error) bool { return err != nil && !errors.Is(err, upload.ErrSomeFailed) }

// moveJob starts the job of a move from gs:// and expands its sources'
// wildcards: wild reports that a pattern made them several sources (the
// destination is then a directory or folder, and no probe asks again what a
// match is).
func (a *app) moveJob(ctx context.Context, f *mvFlags, srcs []string) (j *job, out []string, wild bool, err error) {
	if j, err = a.newJob(ctx, f.jobConfig()); err != nil {
		return nil, nil, false, err
	}
	if out, wild, err = expandDownloadSources(ctx, j.client, srcs, f.recursive); err != nil {
		j.close()
		return nil, nil, false, err
	}
	return j, out, wild, nil
}

// mvAcross moves objects and prefixes between gs:// locations.
func (a *app) mvAcross(ctx context.Context, f *mvFlags, srcs []string, dst string) error {
	to, err := parseRemote(dst)
	if err != nil {
		return err
	}
	if _, err := planAcross(ctx, srcs, to, f.recursive, nil); err != nil {
		return err
	}
	j, srcs, wild, err := a.moveJob(ctx, f, srcs)
	if err != nil {
		return err
	}
	defer j.close()
	probe := j.probe
	if wild { // several sources, as cp's: the destination is a folder
		if to, err = parseRemote(strings.TrimSuffix(dst, "/") + "/"); err != nil {
			return err
		}
		probe = nil
	}
	plan, err := planAcross(ctx, srcs, to, f.recursive, probe)
	if err != nil {
		return err
	}
	return j.runMoves(ctx, f, plan)
}

// movedTo is one planned move: an object or file, or a prefix or directory (tree).
type movedTo struct {
	src, dst string
	tree     bool
}

// distinct refuses a plan in which two sources move to one destination, or one moves
// into another's tree: the second would overwrite what the first moved, whose source is
// gone by then.
func distinct(plan []movedTo) error {
	for i, a := range plan {
		for _, b := range plan[i+1:] {
			if a.dst == b.dst || a.tree && within(b.dst, a.dst) || b.tree && within(a.dst, b.dst) {
				return usagef("%s and %s both move to %s: move them one at a time, or to separate places", a.src, b.src, a.dst)
			}
			if onto(a, b) || onto(b, a) {
				return usagef("%s and %s: one moves onto what the other moves from, which would overwrite it before it moved: move them one at a time", a.src, b.src)
			}
		}
	}
	return nil
}

// onto reports whether a's destination is, holds, or lies under b's source.
func onto(a, b movedTo) bool {
	return a.dst == b.src || a.tree && within(b.src, a.dst) || b.tree && within(a.dst, b.src)
}

// within reports whether p is dir or under it (slash- or separator-separated).
func within(p, dir string) bool {
	dir = strings.TrimRight(dir, "/")
	return p == dir || strings.HasPrefix(p, dir+"/") || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// planAcross names the destinations of gs:// sources moved to the gs:// location to, by
// cp's rules (see naming.go). With -r a name without a trailing slash is a folder when
// objects exist under "name/" (the probe), as for downloads.
func planAcross(ctx context.Context, srcs []string, to remoteURL, recursive bool, probe prefixProbe) ([]movedTo, error) {
	container := isContainerSyntax(to) || len(srcs) > 1
	var plan []movedTo
	for _, op := range srcs {
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		folder := isContainerSyntax(u)
		if folder && !recursive {
			return nil, usagef("%s is a bucket or folder: add -r to move everything under it", op)
		}
		if recursive && !folder && probe != nil {
			if folder, err = probe(ctx, u.bucket, u.object+"/"); err != nil {
				return nil, err
			}
		}
		name := strings.TrimSuffix(u.object, "/")
		var dst string
		switch {
		case !container && folder:
			dst = folderPrefix(to.object)
		case !container:
			dst = to.object
		case folder && name == "":
			dst = folderPrefix(to.object) // a whole bucket lands as its contents
		case folder:
			dst = folderPrefix(to.object) + path.Base(name) + "/"
		default:
			dst = folderPrefix(to.object) + path.Base(name)
		}
		it := movedTo{src: u.String(), dst: "gs://" + to.bucket + "/" + dst, tree: folder}
		if folder {
			it.src = "gs://" + u.bucket + "/" + folderPrefix(u.object)
		}
		switch {
		case !folder && it.src == it.dst:
			return nil, usagef("%s is both the source and the destination", op)
		case folder && (within(it.dst, it.src) || within(it.src, it.dst)):
			return nil, usagef("%s and %s overlap: a prefix cannot be moved into itself (or hold its destination); move it to a folder outside it", it.src, it.dst)
		}
		plan = append(plan, it)
	}
	return plan, distinct(plan)
}
