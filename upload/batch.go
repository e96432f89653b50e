package upload

import (
	"context"
	"fmt"
	"io"
	"iter"
	"sync"
	"time"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/walk"
	"github.com/gcsput/gcsput/resumable"
)

// UploadReader uploads a stream of unknown length (stdin, a pipe) to dst
// through a resumable session, holding one chunk in memory: the bytes the
// server has not acknowledged yet. A stream cannot be read twice, so its
// session is not saved for another process, and an upload whose session
// the server loses (404/410) fails rather than starting over. Result.Source
// is "-". SkipUnchanged does not apply to streams.
func (c *Client) UploadReader(ctx context.Context, rd io.Reader, dst URL, o UploadOptions) (*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return failedResult("-", dst.String(), err), err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "UploadOptions"); err != nil {
		return failedResult("-", dst.String(), err), err
	}
	start := time.Now()
	r := &Result{Source: "-", Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Size: -1, Attempts: 1}
	err = c.hold(ctx, func() error { return c.uploadStream(ctx, r, rd, dst, o) })
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r, r.Err
}

func (c *Client) uploadStream(ctx context.Context, r *Result, rd io.Reader, dst URL, o UploadOptions) error {
	if err := checkDest(dst); err != nil {
		return err
	}
	if c.opts.ChunkSize > resumable.MaxStreamChunkSize {
		return fmt.Errorf("upload: %w: chunk size %d is too large for a stream, whose chunk is held in memory: the limit is %d (1 GiB)",
			ErrBadOption, c.opts.ChunkSize, resumable.MaxStreamChunkSize)
	}
	if o.NoClobber {
		if skip, err := c.precheck(ctx, r, nil, -1, dst, UploadOptions{NoClobber: true}); skip || err != nil {
			return err
		}
	}
	t := c.newTracker(r, dst)
	rc, err := c.resumable(t.onEvent)
	if err != nil {
		return err
	}
	s, err := rc.Start(ctx, c.spec(ctx, dst, -1, o.Attrs.withDefaults(dst.Object, nil), o))
	if err != nil {
		return c.uploadError(ctx, r, dst, err, o)
	}
	obj, err := rc.UploadStream(ctx, s, rd)
	if err != nil {
		return c.uploadError(ctx, r, dst, fmt.Errorf("upload: stream to %s (a stream cannot be re-read; send it again): %w", dst, err), o)
	}
	done(r, obj, StatusUploaded)
	return nil
}

// Upload uploads items, Options.Parallelism at a time, and returns their
// results in the same order. The error is nil when every item succeeded or
// was skipped, else an error matching ErrSomeFailed. When ctx ends,
// no new item starts: items in flight save their sessions and end
// "interrupted", and so do the items never started; the error then also
// matches ctx.Err() (context.Canceled or context.DeadlineExceeded), so
//
//	errors.Is(err, context.Canceled)
//
// tells an interrupted batch, to run again later, from one that failed.
func (c *Client) Upload(ctx context.Context, items []Item, o UploadOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "UploadOptions"); err != nil {
		return nil, err
	}
	saved := c.savedKeys()
	results := c.forEach(ctx, len(items), func(i int) *Result {
		return &Result{Source: items[i].Local, Dest: items[i].Remote.String(), Bucket: items[i].Remote.Bucket, Object: items[i].Remote.Object}
	}, func(ctx context.Context, i int) *Result {
		return c.uploadFile(ctx, items[i].Local, items[i].Remote, items[i].uploadOptions(o), saved)
	})
	return results, batchError(ctx, results)
}

// UploadDir uploads every file under dir to objects named dst.Object + "/" +
// the file's path below dir (with "/" separators), following the rule for
// symlinks and special files in the package doc (they appear as skipped or
// failed results). A missing or unreadable directory, or a bad bucket name, is
// an error before any request. A bucket that does not exist is found by one
// request before the first upload: the error matches
// storage.ErrBucketNotExist, with no results. Results are in lexical order; see
// Upload for the error and for cancellation.
//
// The names are dst.Object + "/" + the path below dir, always: dir's own
// name is not kept. That is what `gcsput cp -r DIR gs://B/PREFIX` does
// without a trailing slash; `cp -r DIR gs://B/PREFIX/` (or to a bucket)
// keeps DIR's name, as gsutil does, which UploadDir(ctx, DIR, URL{B,
// "PREFIX/" + filepath.Base(DIR)}, o) reproduces.
func (c *Client) UploadDir(ctx context.Context, dir string, dst URL, o UploadOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "UploadOptions"); err != nil {
		return nil, err
	}
	if err := validateBucket(dst.Bucket); err != nil {
		return nil, err
	}
	ents, err := walk.List(dir)
	if err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	if err := c.bucketExists(ctx, dst.Bucket); err != nil {
		return nil, err
	}
	results := make([]*Result, len(ents))
	var items []Item
	var at []int // index in results of each item
	for i, e := range ents {
		u := URL{Bucket: dst.Bucket, Object: naming.ObjectName(dst.Object, e.Rel)}
		r := &Result{Source: e.Path, Dest: u.String(), Bucket: u.Bucket, Object: u.Object}
		results[i] = r
		switch {
		case e.Err != nil:
			r.Status, r.Err = StatusFailed, fmt.Errorf("upload: %w", e.Err)
			c.tell(ctx, r)
		case e.Skip != "":
			r.Status, r.Note = StatusSkipped, e.Skip
			c.tell(ctx, r)
		default:
			items, at = append(items, Item{Local: e.Path, Remote: u}), append(at, i)
		}
	}
	var bytes int64
	for _, i := range at {
		bytes += ents[i].Info.Size()
	}
	c.meter.announce(len(items), bytes)
	done, _ := c.Upload(context.WithValue(ctx, countedKey{}, true), items, o)
	for j, r := range done {
		results[at[j]] = r
	}
	return results, batchError(ctx, results)
}

// forEach runs do for 0..n-1 on at most Options.Parallelism goroutines and
// returns the results by index. Once ctx ends no new index starts; those
// get base(i) marked interrupted.
func (c *Client) forEach(ctx context.Context, n int, base func(i int) *Result, do func(ctx context.Context, i int) *Result) []*Result {
	if ctx.Value(countedKey{}) == nil {
		c.meter.announce(n, 0)
	}
	results := make([]*Result, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(c.opts.Parallelism, n) {
		wg.Go(func() {
			for i := range next {
				results[i] = do(ctx, i)
				c.tell(ctx, results[i])
			}
		})
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	for i, r := range results {
		if r == nil {
			r = base(i)
			r.Status, r.Note, r.Err = StatusInterrupted, "not started", ctx.Err()
			results[i] = r
			c.tell(ctx, r)
		}
	}
	return results
}

// told gives r to Options.OnResult.
func (c *Client) told(r *Result) {
	c.addToManifest(r)
	if c.opts.OnResult != nil {
		c.opts.OnResult(r)
	}
}

// UploadSeq is Upload for a stream of items, such as a walk of millions of
// files: at most Parallelism are in flight, the next is taken only when a
// worker is free, and no result is kept: each goes to Options.OnResult as it
// ends. Memory does not grow with the number of items. The error is nil when
// every item succeeded or was skipped, else one matching ErrSomeFailed that
// counts them. When ctx ends, no new item starts and items is no longer
// pulled: the item in hand is reported interrupted, the ones items would
// still yield are not reported at all (an unbounded walk stops at once),
// and the error also matches ctx.Err(), as Upload's does.
func (c *Client) UploadSeq(ctx context.Context, items iter.Seq[Item], o UploadOptions) error {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "UploadOptions"); err != nil {
		return err
	}
	saved := c.savedKeys()
	pulled := func(yield func(Item) bool) {
		for it := range items {
			c.meter.pulled()
			if !yield(it) {
				return
			}
		}
	}
	return runSeq(ctx, c, pulled, func(ctx context.Context, it Item) *Result {
		return c.uploadFile(ctx, it.Local, it.Remote, it.uploadOptions(o), saved)
	}, func(it Item) *Result {
		return &Result{Source: it.Local, Dest: it.Remote.String(), Bucket: it.Remote.Bucket, Object: it.Remote.Object,
			Status: StatusInterrupted, Note: "not started", Err: ctx.Err()}
	})
}

// runSeq runs run on each item of items on at most Parallelism workers,
// taking the next only when a worker is free, gives each result to
// OnResult, and returns the batch's error (nil, or one matching
// ErrSomeFailed and, when ctx ended, ctx.Err()). Once ctx ends no item
// starts and items is pulled no further (an unbounded walk stops at once):
// the item in hand is reported as notStarted makes it.
func runSeq[T any](ctx context.Context, c *Client, items iter.Seq[T], run func(context.Context, T) *Result, notStarted func(T) *Result) error {
	var mu sync.Mutex
	e := &batchFailures{}
	note := func(r *Result) {
		c.tell(ctx, r)
		mu.Lock()
		e.count(r)
		mu.Unlock()
	}
	next := make(chan T)
	var wg sync.WaitGroup
	for range c.opts.Parallelism {
		wg.Go(func() {
			for it := range next {
				note(run(ctx, it))
			}
		})
	}
	for it := range items {
		if ctx.Err() != nil {
			note(notStarted(it))
			break
		}
		select {
		case next <- it:
			continue
		case <-ctx.Done():
			note(notStarted(it))
		}
		break
	}
	close(next)
	wg.Wait()
	return e.orNil(ctx)
}
