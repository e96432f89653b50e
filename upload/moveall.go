package upload

import (
	"context"
	"errors"
	"iter"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/shard"
	"github.com/gcsput/gcsput/internal/walk"
)

// MoveAllOptions configure [Client.MoveAll]. The zero value moves files and
// objects (not directories or prefixes) over whatever the destination holds.
type MoveAllOptions struct {
	// Recursive moves directories and prefixes with everything under them,
	// then removes the local directories left empty.
	Recursive bool
	// NoClobber skips destinations that exist, and keeps their sources.
	NoClobber bool
	// Holds are set on the objects the moves write.
	Holds Holds
	// DiscardResults returns no results: each still goes to
	// Options.OnResult as it ends.
	DiscardResults bool
	// Encryption, when set, is the keys of this call: they replace the
	// Client's (Options.EncryptionKey, KMSKeyName, DecryptionKeys) for
	// every upload, download and copy it makes. nil: the Client's. See
	// Encryption.
	Encryption *Encryption
}

// MoveAll moves srcs to dst as 'gcsput mv' does: local files and
// directories to a gs:// URL, gs:// objects and prefixes (with wildcards)
// to a local path or to another gs:// URL. Destinations are named as
// CopyAll names them. Each move is a copy, verified, then the removal of
// its source (see Client.Move), so a failure leaves both, never neither.
// Two sources moving to one destination, or one onto another's source, a
// prefix moved into itself, "-", and a Client with Options.Shard are
// refused before anything moves (errors matching ErrBadOperand).
//
// Results and the error are CopyAll's.
func (c *Client) MoveAll(ctx context.Context, srcs []string, dst string, o MoveAllOptions) ([]*Result, error) {
	if err := CheckMoveAll(srcs, dst, o); err != nil {
		return nil, err
	}
	if c.opts.Shard != "" {
		// As 'gcsput mv' refuses --shard: each share would remove sources
		// whose fate in the other shares it cannot know.
		return nil, badOperand("MoveAll on a Client with Options.Shard %q: a share of a move cannot know what the others kept; copy in shards (CopyAll), then remove", c.opts.Shard)
	}
	ctx, err := c.withKeys(ctx, o.Encryption, "MoveAllOptions")
	if err != nil {
		return nil, err
	}
	h := &callHook{keep: !o.DiscardResults, originals: map[string]string{}}
	ctx = withHook(ctx, h)
	mo := MoveOptions{NoClobber: o.NoClobber, Download: DownloadOptions{Decompress: true},
		Upload: UploadOptions{Attrs: Attrs{Holds: o.Holds}}}
	switch {
	case !naming.IsRemote(srcs[0]):
		err = c.moveAllUp(ctx, srcs, dst, o, mo)
	case naming.IsRemote(dst):
		err = c.moveAllAcross(ctx, srcs, dst, o, mo)
	default:
		err = c.moveAllDown(ctx, srcs, dst, o, mo)
	}
	return h.end(ctx, err)
}

// CheckMoveAll is what MoveAll checks before any request: the operands and
// the destinations they name. It returns nil or an error matching
// ErrBadOperand.
func CheckMoveAll(srcs []string, dst string, o MoveAllOptions) error {
	if len(srcs) == 0 {
		return badOperand("need a source and a destination, e.g. 'gcsput mv file.txt gs://bucket/'")
	}
	remote := 0
	for _, op := range append(slices.Clip(srcs), dst) {
		if err := checkTypo(op); err != nil {
			return err
		}
		if op == "-" {
			return badOperand("mv cannot move standard input or output: use 'gcsput cp' for a stream")
		}
		if naming.IsRemote(op) {
			remote++
		}
	}
	if naming.IsRemote(dst) {
		remote--
	}
	if remote != 0 && remote != len(srcs) {
		return badOperand("mv: the sources must be all local paths or all gs:// URLs")
	}
	switch {
	case remote == 0 && naming.IsRemote(dst):
		_, err := planMoveUp(srcs, dst, o.Recursive)
		return err
	case remote == 0:
		return badOperand("neither %s nor %s is a gs:// URL: one side of mv must be GCS (use your system's mv)", srcs[0], dst)
	case naming.IsRemote(dst):
		to, err := parseOperand(dst)
		if err != nil {
			return err
		}
		_, err = planAcross(context.Background(), srcs, to, o.Recursive, nil)
		return err
	}
	_, err := planDownload(context.Background(), srcs, dst, o.Recursive, nil)
	return err
}

// planMoveUp names the destinations of local sources moved to dst.
func planMoveUp(srcs []string, dst string, recursive bool) ([]upItem, error) {
	u, err := parseOperand(dst)
	if err != nil {
		return nil, err
	}
	plan, err := planUpload(srcs, u, recursive)
	if err != nil {
		return nil, err
	}
	var dsts []movedTo
	for _, it := range plan {
		dsts = append(dsts, movedTo{it.src.path, it.dst.String(), it.src.isDir})
	}
	return plan, distinct(dsts)
}

// moveAllUp moves local files and directories to GCS, then removes the
// directories left empty.
func (c *Client) moveAllUp(ctx context.Context, srcs []string, dst string, o MoveAllOptions, mo MoveOptions) error {
	plan, err := planMoveUp(srcs, dst, o.Recursive)
	if err != nil {
		return err
	}
	sh, _ := shard.Parse(c.opts.Shard)
	if err := c.countUp(plan, sh); err != nil {
		return err
	}
	var walkErr error
	_ = c.MoveSeq(ctx, moves(c.streamUp(ctx, plan, sh, &walkErr)), mo) // results: the hook's
	for _, it := range plan {
		if it.src.isDir && walkErr == nil {
			if _, err := walk.RemoveEmptyDirs(it.src.path); err != nil {
				c.warn("removing the emptied directories under " + it.src.path + ": " + err.Error())
			}
		}
	}
	return walkErr
}

// moves turns upload items (local → gs) into moves.
func moves(items iter.Seq[Item]) iter.Seq[MoveItem] {
	return func(yield func(MoveItem) bool) {
		for it := range items {
			if !yield(MoveItem{Src: LocalSide(it.Local), Dst: RemoteSide(it.Remote)}) {
				return
			}
		}
	}
}

// moveAllDown moves objects and prefixes to local paths.
func (c *Client) moveAllDown(ctx context.Context, srcs []string, dst string, o MoveAllOptions, mo MoveOptions) error {
	plan, err := c.expandDownload(ctx, srcs, dst, o.Recursive, false)
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
	return c.runMoves(ctx, dsts, true, mo)
}

// moveAllAcross moves objects and prefixes between gs:// locations.
func (c *Client) moveAllAcross(ctx context.Context, srcs []string, dst string, o MoveAllOptions, mo MoveOptions) error {
	to, err := parseOperand(dst)
	if err != nil {
		return err
	}
	srcs, wild, probe, err := c.expandRemoteSources(ctx, srcs, o.Recursive)
	if err != nil {
		return err
	}
	if wild { // several sources: the destination is a folder
		to.Object = naming.Folder(to.Object)
	}
	plan, err := planAcross(ctx, srcs, to, o.Recursive, probe)
	if err != nil {
		return err
	}
	return c.runMoves(ctx, plan, false, mo)
}

// runMoves moves each prefix of plan in turn (a listing that fails ends
// the call), then its objects as one batch. Every source is a gs:// URL;
// the destinations are local paths when local is set, else gs:// URLs.
func (c *Client) runMoves(ctx context.Context, plan []movedTo, local bool, mo MoveOptions) error {
	var objects []MoveItem
	for _, m := range plan {
		from, err := parseOperand(m.src)
		if err != nil {
			return err
		}
		to := LocalSide(m.dst)
		if !local {
			if to, err = ParseSide(m.dst); err != nil {
				return err
			}
		}
		if !m.tree {
			objects = append(objects, MoveItem{Src: RemoteSide(from), Dst: to})
			continue
		}
		if _, err := c.MovePrefix(ctx, from, to, mo); err != nil && !errors.Is(err, ErrSomeFailed) {
			return err // it moved nothing: a listing failed
		}
	}
	_ = c.MoveSeq(ctx, slices.Values(objects), mo)
	return nil
}

// movedTo is one planned move: an object or file, or a prefix or directory (tree).
type movedTo struct {
	src, dst string
	tree     bool
}

// distinct refuses a plan in which two sources move to one destination, or
// one moves into another's tree: the second would overwrite what the first
// moved, whose source is gone by then.
func distinct(plan []movedTo) error {
	for i, a := range plan {
		for _, b := range plan[i+1:] {
			if a.dst == b.dst || a.tree && within(b.dst, a.dst) || b.tree && within(a.dst, b.dst) {
				return badOperand("%s and %s both move to %s: move them one at a time, or to separate places", a.src, b.src, a.dst)
			}
			if onto(a, b) || onto(b, a) {
				return badOperand("%s and %s: one moves onto what the other moves from, which would overwrite it before it moved: move them one at a time", a.src, b.src)
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

// planAcross names the destinations of gs:// sources moved to the gs://
// location to, by CopyAll's rules. Recursive, a name without a trailing
// slash is a folder when objects exist under "name/" (the probe).
func planAcross(ctx context.Context, srcs []string, to URL, recursive bool, probe prefixProbe) ([]movedTo, error) {
	container := isContainerSyntax(to) || len(srcs) > 1
	var plan []movedTo
	for _, op := range srcs {
		u, err := parseOperand(op)
		if err != nil {
			return nil, err
		}
		folder := isContainerSyntax(u)
		if folder && !recursive {
			return nil, badOperand("%s is a bucket or folder: add -r to move everything under it", op)
		}
		if recursive && !folder && probe != nil {
			if folder, err = probe(ctx, u.Bucket, u.Object+"/"); err != nil {
				return nil, err
			}
		}
		name := strings.TrimSuffix(u.Object, "/")
		var dst string
		switch {
		case !container && folder:
			dst = naming.Folder(to.Object)
		case !container:
			dst = to.Object
		case folder && name == "":
			dst = naming.Folder(to.Object) // a whole bucket lands as its contents
		case folder:
			dst = naming.Folder(to.Object) + path.Base(name) + "/"
		default:
			dst = naming.Folder(to.Object) + path.Base(name)
		}
		it := movedTo{src: u.String(), dst: "gs://" + to.Bucket + "/" + dst, tree: folder}
		if folder {
			it.src = "gs://" + u.Bucket + "/" + naming.Folder(u.Object)
		}
		switch {
		case !folder && it.src == it.dst:
			return nil, badOperand("%s is both the source and the destination", op)
		case folder && (within(it.dst, it.src) || within(it.src, it.dst)):
			return nil, badOperand("%s and %s overlap: a prefix cannot be moved into itself (or hold its destination); move it to a folder outside it", it.src, it.dst)
		}
		plan = append(plan, it)
	}
	return plan, distinct(plan)
}
