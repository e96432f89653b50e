package upload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/naming"
)

// CopyObjects copies items on the server, Options.Parallelism at a time,
// with results in the same order (each also to Options.OnResult as it
// ends); see Copy for one copy, and Upload for the error and cancellation.
func (c *Client) CopyObjects(ctx context.Context, items []CopyItem, o CopyOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "CopyOptions"); err != nil {
		return nil, err
	}
	results := c.forEach(ctx, len(items), func(i int) *Result {
		return copyResult(items[i].Src, items[i].Dst)
	}, func(ctx context.Context, i int) *Result {
		r, _ := c.Copy(ctx, items[i].Src, items[i].Dst, o)
		return r
	})
	return results, batchError(ctx, results)
}

// CopyPrefix copies every object whose name starts with src.Object
// (treated as a folder: "photos" means "photos/"; "" is the whole bucket)
// to dst.Object (a folder too) + the rest of its name, on the server,
// Options.Parallelism at a time. Each object's generation is the one the
// listing saw, pinned for its copy. The listing is made whole before any
// copy starts: one that fails copies nothing. The object named exactly
// like the folder (a placeholder "photos/") is skipped. Results are in
// listing order; see CopyObjects.
func (c *Client) CopyPrefix(ctx context.Context, src, dst URL, o CopyOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx) // Close cancels and waits for it
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "CopyOptions"); err != nil {
		return nil, err
	}
	if err := validateBucket(src.Bucket); err != nil {
		return nil, err
	}
	if err := validateBucket(dst.Bucket); err != nil {
		return nil, err
	}
	from, to := naming.Folder(src.Object), naming.Folder(dst.Object)
	if src.Bucket == dst.Bucket && from != to && (strings.HasPrefix(to, from) || strings.HasPrefix(from, to)) {
		// A folder copied into itself would list its own copies on a rerun,
		// and copy them again, one level deeper each time.
		return nil, fmt.Errorf("copy: gs://%s/%s and gs://%s/%s overlap: copy a folder beside itself, not into itself", src.Bucket, from, dst.Bucket, to)
	}
	objs, err := c.listAll(ctx, src.Bucket, from)
	if err != nil {
		return nil, err
	}
	results := make([]*Result, len(objs))
	var todo []int
	for i, a := range objs {
		rel := strings.TrimPrefix(a.Name, from)
		r := copyResult(URL{Bucket: a.Bucket, Object: a.Name}, URL{Bucket: dst.Bucket, Object: to + rel})
		results[i] = r
		if rel == "" {
			r.Status, r.Note = StatusSkipped, "folder placeholder"
			c.tell(ctx, r)
			continue
		}
		todo = append(todo, i)
	}
	done := c.forEach(ctx, len(todo), func(j int) *Result { return results[todo[j]] }, func(ctx context.Context, j int) *Result {
		return c.copyListed(ctx, objs[todo[j]], results[todo[j]], o)
	})
	for j, r := range done {
		results[todo[j]] = r
	}
	return results, batchError(ctx, results)
}

// copyListed is Copy of an object a listing found.
func (c *Client) copyListed(ctx context.Context, a *storage.ObjectAttrs, base *Result, o CopyOptions) *Result {
	start := time.Now()
	r := copyResult(URL{Bucket: a.Bucket, Object: a.Name}, URL{Bucket: base.Bucket, Object: base.Object})
	src := URL{Bucket: a.Bucket, Object: a.Name}
	err := c.hold(ctx, func() error {
		return c.copyObject(ctx, r, src, a, URL{Bucket: base.Bucket, Object: base.Object}, o, copyHow{})
	})
	r.Elapsed = time.Since(start)
	c.finish(ctx, r, err)
	return r
}

func copyResult(src, dst URL) *Result {
	return &Result{Source: src.String(), Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Attempts: 1}
}
