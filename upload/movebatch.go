package upload

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/walk"
	"sync"
)

// moveJob is one move of a batch: base is its result before it runs (the
// one reported if it never starts), run does it.
type moveJob struct {
	base *Result
	run  func(ctx context.Context) *Result
	i    int // its place in the batch, for the results a call returns
}

// MoveSeq moves items (see [Client.Move]), Options.Parallelism at a time.
// Like UploadSeq it is the streaming form: it keeps no result, each goes to
// Options.OnResult as it ends, so memory does not grow with the items
// ([Client.MoveDir] and [Client.MovePrefix] return theirs). Two items with
// one destination (the same object, or the same local file, its case
// folded where the filesystem ignores case) would have the second
// overwrite the first's source's only copy: the second fails with an error
// matching ErrCollision, and its source is kept. The error is nil when
// every item was moved or skipped, else one matching ErrSomeFailed. When
// ctx ends, no new item starts.
func (c *Client) MoveSeq(ctx context.Context, items iter.Seq[MoveItem], o MoveOptions) error {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "MoveOptions"); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	dsts := newDestinations()
	_, err = c.moveAll(ctx, func(yield func(moveJob) bool) {
		for it := range items {
			if !yield(c.itemJob(dsts, it, o)) {
				return
			}
		}
	}, false)
	return err
}

// itemJob is the job of one MoveItem of a batch whose destinations are
// dsts.
func (c *Client) itemJob(dsts *destinations, it MoveItem, o MoveOptions) moveJob {
	base := &Result{Source: it.Src.String(), Dest: it.Dst.String(), Attempts: 1}
	run := func(ctx context.Context) *Result { return c.move(ctx, it, o) }
	if it.Src.IsRemote() && !it.Dst.IsRemote() && isTempFileName(it.Dst.Dir()) {
		// As MovePrefix: the name of another download's partial file, never
		// claimed nor written.
		return moveJob{base: base, run: func(context.Context) *Result {
			base.Status, base.Note = StatusSkipped, reservedNote+" (kept)"
			return base
		}}
	}
	if err := dsts.claim(it.Src.String(), it.Dst.String()); err != nil {
		run = failed(base, err)
	}
	return moveJob{base: base, run: run}
}

// moveAll runs jobs as runSeq does: at most Parallelism at once, each
// result to OnResult, and once ctx ends the job in hand reported "not
// started" and no further one pulled (MoveDir's walk stops at once). With
// keep it also returns the results, in the order of jobs.
func (c *Client) moveAll(ctx context.Context, jobs iter.Seq[moveJob], keep bool) ([]*Result, error) {
	var mu sync.Mutex
	got := map[int]*Result{}
	n := 0
	record := func(j moveJob, r *Result) *Result {
		if keep {
			mu.Lock()
			got[j.i] = r
			mu.Unlock()
		}
		return r
	}
	err := runSeq(ctx, c, func(yield func(moveJob) bool) {
		for j := range jobs {
			j.i = n
			n++
			if !yield(j) {
				return
			}
		}
	}, func(ctx context.Context, j moveJob) *Result {
		start := time.Now()
		r := j.run(ctx)
		r.Elapsed = time.Since(start) // the whole move, not its copy alone
		return record(j, r)
	}, func(j moveJob) *Result {
		j.base.Status, j.base.Note, j.base.Err = StatusInterrupted, "not started", ctx.Err()
		return record(j, j.base)
	})
	if !keep {
		return nil, err
	}
	results := make([]*Result, 0, len(got))
	for i := range n {
		if r, ok := got[i]; ok {
			results = append(results, r)
		}
	}
	return results, err
}

// destinations are the destinations claimed by the moves of one batch.
type destinations struct {
	objects map[string]string // gs:// URL → the source moved there
	sources map[string]string // gs:// source URL → where it moves
	files   *claims
}

func newDestinations() *destinations {
	return &destinations{objects: map[string]string{}, sources: map[string]string{}, files: newClaims()}
}

// claim reserves dst for src, or says which source has it. A move whose
// destination is another move's source, or whose source is another move's
// destination, is refused too: run in either order (or at once) one would
// copy over an object the other has yet to move, its only copy.
func (d *destinations) claim(src, dst string) error {
	if to, ok := d.sources[dst]; ok {
		return fmt.Errorf("move: %w: %s is also moved (to %s) in this batch; %s was not moved onto it (it is kept): move them one at a time",
			ErrCollision, dst, to, src)
	}
	if from, ok := d.objects[src]; ok {
		return fmt.Errorf("move: %w: %s is the destination of %s in this batch; it was not moved (it is kept): move them one at a time",
			ErrCollision, src, from)
	}
	if naming.IsRemote(src) {
		d.sources[src] = dst
	}
	if naming.IsRemote(dst) {
		if other, ok := d.objects[dst]; ok {
			return fmt.Errorf("move: %w: %s and %s both move to %s; %s was not moved (it is kept): move them to separate places",
				ErrCollision, other, src, dst, src)
		}
		d.objects[dst] = src
		return nil
	}
	abs, err := filepath.Abs(dst)
	if err != nil {
		return fmt.Errorf("move: %w", err)
	}
	if err := d.files.claim(filepath.Dir(abs), abs, src); err != nil {
		return fmt.Errorf("move: %w; %s is kept", err, src)
	}
	return nil
}

// MovePrefix moves every object under the folder src.Object ("p" means
// "p/"; "" the whole bucket) to dst: a local directory, the rest of each
// name becoming the path below it as [Client.DownloadPrefix] writes it
// (confined to dst, collisions refused before anything moves), or a
// gs:// folder, the rest of each name appended to it. The listing is read
// whole first: a listing that fails moves nothing. Each object moves as
// [Client.Move] says, deleted under ifGenerationMatch of the generation
// listed. Folder placeholders stay. In a bucket with hierarchical
// namespace, a move to a new folder of the same bucket is one
// [Client.RenameFolder] when nothing about the objects must change (no
// holds, the same keys); a destination folder that exists is filled object
// by object. A gs:// dst in the same bucket inside
// src, or holding it, is refused (ErrBadOption): the moves would overwrite
// sources not yet moved. It returns every object's Result in listing
// order, each also given to Options.OnResult as it ends; the error is nil
// when every object was moved or skipped, else one matching ErrSomeFailed.
// A dst that is the zero Side is refused (ErrBadOption).
func (c *Client) MovePrefix(ctx context.Context, src URL, dst Side, o MoveOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "MoveOptions"); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := validateBucket(src.Bucket); err != nil {
		return nil, err
	}
	prefix := naming.Folder(src.Object)
	switch {
	case dst == Side{}:
		return nil, fmt.Errorf("move: %w: the destination is the zero Side: make it with LocalSide, RemoteSide or ParseSide", ErrBadOption)
	case !dst.IsRemote():
		return c.movePrefixDown(ctx, src.Bucket, prefix, dst.Dir(), o)
	}
	to := dst.URL()
	if err := validateBucket(to.Bucket); err != nil {
		return nil, err
	}
	toPrefix := naming.Folder(to.Object)
	if to.Bucket == src.Bucket && (strings.HasPrefix(toPrefix, prefix) || strings.HasPrefix(prefix, toPrefix)) {
		return nil, fmt.Errorf("move: %w: gs://%s/%s and gs://%s/%s overlap: move to a folder outside the source", ErrBadOption, src.Bucket, prefix, to.Bucket, toPrefix)
	}
	objs, err := c.listAll(ctx, src.Bucket, prefix)
	if err != nil {
		return nil, fmt.Errorf("move: %w (nothing was moved)", err)
	}
	if to.Bucket == src.Bucket { // a folder of an HNS bucket: one renameFolder (folders.go)
		if renamed, results, err := c.renamePrefix(ctx, src.Bucket, prefix, toPrefix, objs, o); renamed || err != nil {
			return results, err
		}
	}
	return c.moveAll(ctx, func(yield func(moveJob) bool) {
		for _, a := range objs {
			from := URL{Bucket: a.Bucket, Object: a.Name}
			rel := strings.TrimPrefix(a.Name, prefix)
			u := URL{Bucket: to.Bucket, Object: naming.ObjectName(toPrefix, rel)}
			base := &Result{Source: from.String(), Dest: u.String(), Bucket: u.Bucket, Object: u.Object, Attempts: 1}
			run := func(ctx context.Context) *Result { return c.moveAcross(ctx, from, u, a.Generation, o, false) }
			if rel == "" {
				run = placeholder(base)
			}
			if !yield(moveJob{base: base, run: run}) {
				return
			}
		}
	}, true)
}

// placeholder is the job of a folder placeholder object: it stays.
func placeholder(r *Result) func(context.Context) *Result {
	return func(context.Context) *Result { r.Status, r.Note = StatusSkipped, "folder placeholder (kept)"; return r }
}

// movePrefixDown is MovePrefix to the local directory dir.
func (c *Client) movePrefixDown(ctx context.Context, bucket, prefix, dir string, o MoveOptions) ([]*Result, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(abs, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("move: %w", err)
	}
	root, err := withFDs(ctx, func() (*os.Root, error) { return os.OpenRoot(abs) })
	if err != nil {
		return nil, fmt.Errorf("move: %w", err)
	}
	defer root.Close()
	objs, err := c.listAll(ctx, bucket, prefix)
	if err != nil {
		return nil, fmt.Errorf("move: %w (nothing was moved)", err)
	}
	jobs, plans, todo := make([]moveJob, len(objs)), []planned{}, []int{}
	cl := newClaims()
	for i, a := range objs {
		var writes bool
		if jobs[i], writes = c.downJob(a, root, abs, prefix, o); !writes {
			continue
		}
		if err := cl.claim(abs, jobs[i].base.Dest, jobs[i].base.Source); err != nil {
			jobs[i].run = failed(jobs[i].base, err)
			continue
		}
		plans, todo = append(plans, planned{dir: abs, abs: jobs[i].base.Dest, object: jobs[i].base.Source}), append(todo, i)
	}
	for k, err := range cl.directories(plans) {
		if err != nil {
			jobs[todo[k]].run = failed(jobs[todo[k]].base, err)
		}
	}
	return c.moveAll(ctx, slices.Values(jobs), true)
}

// downJob is the move of the listed object a into the directory abs (open
// as root); writes says it writes a file, which it must claim first.
func (c *Client) downJob(a *storage.ObjectAttrs, root *os.Root, abs, prefix string, o MoveOptions) (job moveJob, writes bool) {
	src := URL{Bucket: a.Bucket, Object: a.Name}
	base := &Result{Source: src.String(), Dest: abs, Bucket: a.Bucket, Object: a.Name, Generation: a.Generation, Size: a.Size, Attempts: 1}
	rel, ok, err := naming.LocalPath(abs, prefix, a.Name)
	switch {
	case err != nil:
		return moveJob{base: base, run: failed(base, err)}, false
	case !ok:
		return moveJob{base: base, run: placeholder(base)}, false
	case isTempFileName(rel):
		base.Dest = filepath.Join(abs, rel)
		return moveJob{base: base, run: func(context.Context) *Result {
			base.Status, base.Note = StatusSkipped, reservedNote+" (kept)"
			return base
		}}, false
	}
	base.Dest = filepath.Join(abs, rel)
	t := target{root: root, name: rel, abs: base.Dest}
	return moveJob{base: base, run: func(ctx context.Context) *Result {
		return c.moveDown(ctx, src, t.abs, func(ctx context.Context) *Result {
			return c.downloadObject(ctx, base, a, t, o.downloadOptions())
		})
	}}, true
}

// failed is the job of a move refused before it started: its source stays.
func failed(r *Result, err error) func(context.Context) *Result {
	return func(context.Context) *Result { r.Status, r.Err = StatusFailed, err; return r }
}

// MoveDir moves every file under the local directory dir to objects named
// as [Client.UploadDir] names them, then removes the directories left
// empty. Symlinks and special files are not moved:
// they stay, reported as skipped (or failed), and so do the directories
// that hold them. It returns every file's Result in the walk's (lexical)
// order, each also given to Options.OnResult as it ends; the error is nil
// when every file was moved or skipped, else one matching ErrSomeFailed (a
// broken symlink, which cannot be moved, is a failure, as in UploadDir).
func (c *Client) MoveDir(ctx context.Context, dir string, dst URL, o MoveOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "MoveOptions"); err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	if err := validateBucket(dst.Bucket); err != nil {
		return nil, err
	}
	var walkErr error
	dsts := newDestinations()
	results, err := c.moveAll(ctx, func(yield func(moveJob) bool) {
		stop := errors.New("stopped")
		walkErr = walk.Each(dir, func(e walk.Entry) error {
			u := URL{Bucket: dst.Bucket, Object: naming.ObjectName(dst.Object, e.Rel)}
			base := &Result{Source: e.Path, Dest: u.String(), Bucket: u.Bucket, Object: u.Object, Attempts: 1}
			j := moveJob{base: base}
			switch {
			case e.Err != nil:
				j.run = failed(base, fmt.Errorf("move: %w", e.Err))
			case e.Skip != "":
				j.run = func(context.Context) *Result { base.Status, base.Note = StatusSkipped, e.Skip+" (kept)"; return base }
			default:
				j = c.itemJob(dsts, MoveItem{Src: LocalSide(e.Path), Dst: RemoteSide(u)}, o)
			}
			if !yield(j) {
				return stop
			}
			return nil
		})
		if errors.Is(walkErr, stop) {
			walkErr = nil
		}
	}, true)
	if _, rerr := walk.RemoveEmptyDirs(dir); walkErr == nil {
		walkErr = rerr
	}
	return results, errors.Join(walkErr, err)
}
