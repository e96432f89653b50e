package upload

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/naming"
)

// SoftDeleted is List of the soft-deleted generations of the objects under
// prefix (objects.list with softDeleted=true; the official client's
// Query.SoftDeleted), in name and then generation order, each with its
// SoftDeleteTime and HardDeleteTime. delimiter is as List has it. A bucket
// without soft delete yields none.
func (c *Client) SoftDeleted(ctx context.Context, bucket, prefix, delimiter string) iter.Seq2[*storage.ObjectAttrs, error] {
	return c.list(ctx, &storage.Query{Prefix: prefix, Delimiter: delimiter, SoftDeleted: true}, bucket)
}

// SoftDeleteRetention returns how long bucket keeps a deleted object
// restorable (its softDeletePolicy's retention): 0 when soft delete is
// off. GCS turns it on, for 7 days, on every new bucket by default.
func (c *Client) SoftDeleteRetention(ctx context.Context, bucket string) (time.Duration, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer leave()
	var attrs *storage.BucketAttrs
	err = c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.bucket(bucket).Attrs(ctx)
		return permanentIfMissing(err)
	})
	if err != nil {
		return 0, err
	}
	return softDeleteOf(attrs), nil
}

func softDeleteOf(attrs *storage.BucketAttrs) time.Duration {
	if attrs.SoftDeletePolicy == nil {
		return 0
	}
	return attrs.SoftDeletePolicy.RetentionDuration
}

// StatGeneration returns the metadata of generation gen of the object,
// live or noncurrent (the official client's obj.Generation(gen).Attrs);
// storage.ErrObjectNotExist when there is no such generation.
func (c *Client) StatGeneration(ctx context.Context, u URL, gen int64) (*storage.ObjectAttrs, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	return c.statGeneration(ctx, u, gen)
}

// RestoreOptions are the options of [Client.Restore].
type RestoreOptions struct {
	// Generation is the soft-deleted generation to restore (the official
	// client's obj.Generation(g).Restore); 0 (the default) restores the
	// generation deleted last.
	Generation int64

	// CopySourceACL gives the restored object the soft-deleted object's
	// ACL; false (the default) gives it the bucket's default object ACL,
	// as GCS does.
	CopySourceACL bool
}

// ErrNotSoftDeleted is returned by Restore for an object with no
// soft-deleted generation to restore (none, or past its hardDeleteTime).
var ErrNotSoftDeleted = errors.New("no soft-deleted generation")

// Restore makes a soft-deleted generation of u, o.Generation or the one
// deleted last, live again (objects.restore): GCS copies it to a new
// generation, metageneration 1, with its metadata. A live
// object of the name is replaced: it becomes noncurrent in a bucket with
// versioning, soft-deleted otherwise.
//
// A restore is not idempotent (each one makes a generation), so it is made
// under a precondition on the live generation read first (or its absence),
// and a retry that meets 412 checks whether its lost attempt restored it:
// a newer live generation with the soft-deleted one's size and CRC32C.
func (c *Client) Restore(ctx context.Context, u URL, o RestoreOptions) (*storage.ObjectAttrs, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	src, err := c.softDeletedGen(ctx, u, o.Generation)
	if err != nil {
		return nil, err
	}
	cond, err := c.liveCond(ctx, u)
	if err != nil {
		return nil, err
	}
	attrs, err := c.conditional(ctx, u, func(ctx context.Context) (*storage.ObjectAttrs, error) {
		return c.object(u).Generation(src.Generation).If(cond).Restore(ctx, &storage.RestoreOptions{CopySourceACL: o.CopySourceACL})
	}, func(now *storage.ObjectAttrs) bool {
		return now.Size == src.Size && now.CRC32C == src.CRC32C && (cond.DoesNotExist || now.Generation > cond.GenerationMatch)
	})
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, fmt.Errorf("restore %s#%d: %w (it may be past its hard delete time): %w", u, src.Generation, ErrNotSoftDeleted, err)
	}
	return attrs, err
}

// softDeletedGen finds the soft-deleted generation gen of u, or with gen 0
// the one deleted last.
func (c *Client) softDeletedGen(ctx context.Context, u URL, gen int64) (*storage.ObjectAttrs, error) {
	var last *storage.ObjectAttrs
	for a, err := range c.SoftDeleted(ctx, u.Bucket, u.Object, "") {
		if err != nil {
			return nil, err
		}
		if a.Name != u.Object || (gen != 0 && a.Generation != gen) {
			continue
		}
		if last == nil || a.SoftDeleteTime.After(last.SoftDeleteTime) ||
			(a.SoftDeleteTime.Equal(last.SoftDeleteTime) && a.Generation > last.Generation) {
			last = a
		}
	}
	if last == nil {
		if gen != 0 {
			return nil, fmt.Errorf("restore %s#%d: %w", u, gen, ErrNotSoftDeleted)
		}
		return nil, fmt.Errorf("restore %s: %w", u, ErrNotSoftDeleted)
	}
	return last, nil
}

// ParseVersionedURL parses a gs:// URL that may name a generation, as
// gsutil and gcloud write it: "gs://bucket/object#1718040001234567". A
// "#" followed by anything but digits is part of the object name; gen is 0
// when none is named.
func ParseVersionedURL(s string) (u URL, gen int64, err error) {
	if i := strings.LastIndexByte(s, '#'); i > 0 && i < len(s)-1 {
		if g, perr := strconv.ParseInt(s[i+1:], 10, 64); perr == nil && g > 0 && !strings.ContainsAny(s[i+1:], "+-") {
			u, err = ParseURL(s[:i])
			return u, g, err
		}
	}
	u, err = ParseURL(s)
	return u, 0, err
}

// CopyVersions copies what Versions lists for src: every generation,
// noncurrent ones first and the live one last, in generation order, to dst
// (its name says "versions" as the official client's Query.Versions does;
// a single generation is CopyOptions.SourceGeneration): in a destination bucket
// with versioning the copies keep the history (gsutil and gcloud cp -A).
// src names an object, or a folder (ending in "/", or the bucket) whose
// objects go under dst as CopyPrefix places them. The generations of one
// name are copied one after another (each is pinned with
// SourceGeneration); names run in parallel. Each copy's Result names its
// source generation (gs://b/o#GENERATION) and goes to Options.OnResult.
// NoClobber and IfGenerationMatch would stop every copy after the first and
// are refused.
func (c *Client) CopyVersions(ctx context.Context, src, dst URL, o CopyOptions) ([]*Result, error) {
	ctx, leave, err := c.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	if ctx, err = c.withKeys(ctx, o.Encryption, "CopyOptions"); err != nil {
		return nil, err
	}
	if o.NoClobber || o.IfGenerationMatch != nil || o.SourceGeneration != 0 {
		return nil, fmt.Errorf("copy: %s: copying every generation takes no NoClobber, IfGenerationMatch or SourceGeneration", src)
	}
	folder := src.Object == "" || strings.HasSuffix(src.Object, "/")
	var names []string
	gens := map[string][]int64{}
	for a, err := range c.Versions(ctx, src.Bucket, src.Object, "") {
		if err != nil {
			return nil, err
		}
		if (!folder && a.Name != src.Object) || (folder && a.Name == src.Object) {
			continue // another name with the object's as prefix; a folder's placeholder
		}
		if len(gens[a.Name]) == 0 {
			names = append(names, a.Name)
		}
		gens[a.Name] = append(gens[a.Name], a.Generation)
	}
	if len(names) == 0 {
		return nil, objectNotFound("copy: %s: no such object", src)
	}
	target := func(name string) URL {
		if !folder {
			return dst
		}
		return URL{Bucket: dst.Bucket, Object: naming.Folder(dst.Object) + strings.TrimPrefix(name, src.Object)}
	}
	var all []*Result
	var mu sync.Mutex
	results := c.forEach(ctx, len(names), func(i int) *Result {
		return copyResult(URL{Bucket: src.Bucket, Object: names[i]}, target(names[i]))
	}, func(ctx context.Context, i int) *Result {
		var r *Result
		for k, g := range gens[names[i]] {
			if k > 0 {
				c.tell(ctx, r) // the last one is forEach's to tell
			}
			oo := o
			oo.SourceGeneration = g
			r, _ = c.Copy(ctx, URL{Bucket: src.Bucket, Object: names[i]}, target(names[i]), oo)
			r.Source = fmt.Sprintf("gs://%s/%s#%d", src.Bucket, names[i], g)
			mu.Lock()
			all = append(all, r)
			mu.Unlock()
			if !r.OK() {
				break // a later generation must not land without the earlier ones
			}
		}
		return r
	})
	for _, r := range results { // those never started
		if r.Status == StatusInterrupted && !slices.Contains(all, r) {
			all = append(all, r)
		}
	}
	return all, batchError(ctx, all)
}
