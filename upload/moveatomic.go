package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/state"
	"github.com/gcsput/gcsput/retry"
)

// errNoAtomicMove is moveAtomic's answer when the server does not serve
// objects.move (501) or refuses this one as a bad request (400), as a
// server that serves it on hierarchical-namespace buckets only may (GCS's
// IAM reference describes storage.objects.move as "Move an object within a
// bucket with hierarchical namespace enabled"; its JSON API reference, only
// "in the same bucket"): the caller copies and deletes instead. A 400
// changed nothing, and the copy checks its own operands.
var errNoAtomicMove = errors.New("objects.move is not served")

// atomicMoveFits reports whether the move of the object src (attrs) to dst
// can be one objects.move call, which GCS serves inside one bucket and which
// renames the object as it is: the same bucket, no copy of this move saved
// to continue, and a destination the client would encrypt as the source is
// (a move keeps the source's key; a client with another key, or a KMS key
// the source is not under, asks for a copy that re-encrypts it).
func (c *Client) atomicMoveFits(ctx context.Context, src, dst URL, attrs *storage.ObjectAttrs, restore bool) bool {
	if src.Bucket != dst.Bucket || restore {
		return false
	}
	if c.savedRewrite(state.Key(state.KindRewrite, src.String(), dst.String(), c.opts.Shard)) != nil {
		return false
	}
	want := c.copyDestOf(ctx, CopyOptions{})
	if want.KeySHA256 != attrs.CustomerKeySHA256 {
		return false
	}
	// GCS names the key version the object is under: KEY/cryptoKeyVersions/N.
	return want.KMSKeyName == "" || attrs.KMSKeyName == want.KMSKeyName || strings.HasPrefix(attrs.KMSKeyName, want.KMSKeyName+"/")
}

// moveAtomic moves generation attrs.Generation of src to dst with one
// objects.move call: the source must still be that generation
// (ifSourceGenerationMatch), and with noClobber the destination must not
// exist (ifGenerationMatch=0; a destination that exists is "skipped:
// exists"). Both conditions make a retry safe: a call whose answer was lost
// is retried and refused (the source is gone), and the destination read back
// says whether it moved. There is never a moment with neither, so no record
// is saved. It returns errNoAtomicMove when the server does not serve it
// (501) or refuses it (400).
func (c *Client) moveAtomic(ctx context.Context, src, dst URL, attrs *storage.ObjectAttrs, noClobber bool) (*Result, error) {
	r := copyResult(src, dst)
	r.Size, r.CRC32C = attrs.Size, attrs.CRC32C
	h := c.object(src).If(storage.Conditions{GenerationMatch: attrs.Generation})
	if k := c.keyFor(ctx, attrs.CustomerKeySHA256); k != nil {
		h = h.Key(k)
	}
	d := storage.MoveObjectDestination{Object: dst.Object}
	if noClobber {
		d.Conditions = &storage.Conditions{DoesNotExist: true}
	}
	var got *storage.ObjectAttrs
	err := c.hold(ctx, func() error {
		return c.runner.Do(ctx, func(ctx context.Context) error {
			var err error
			got, err = h.Move(ctx, d)
			if isStatus(err, http.StatusNotImplemented) || isStatus(err, http.StatusBadRequest) {
				return retry.Permanent(errNoAtomicMove)
			}
			return permanentIfMissing(err)
		})
	})
	switch {
	case err == nil:
		r.Generation, r.Status, r.Note = got.Generation, StatusMoved, "moved in one call (objects.move)"
		c.finish(ctx, r, nil)
		return r, nil
	case errors.Is(err, errNoAtomicMove):
		return nil, err
	case noClobber && isStatus(err, http.StatusPreconditionFailed) && c.destExists(ctx, dst):
		r.Status, r.Note = StatusSkipped, "exists; source kept"
		c.finish(ctx, r, nil)
		return r, nil
	case errors.Is(err, storage.ErrObjectNotExist) && ctx.Err() == nil:
		if c.movedBefore(ctx, src, dst, attrs, r) {
			c.finish(ctx, r, nil)
			return r, nil
		}
	}
	c.finish(ctx, r, fmt.Errorf("move: %s to %s (objects.move; not moved, the source is untouched): %w", src, dst, err))
	return r, r.Err
}

// destExists reports whether the object u exists now.
func (c *Client) destExists(ctx context.Context, u URL) bool {
	_, err := c.Stat(ctx, u)
	return err == nil
}

// movedBefore tells a move whose call met a missing source whether an
// earlier attempt of it, whose answer was lost, did the move: the source is
// gone and the destination holds its bytes (its CRC32C and size) under a
// generation newer than the source's.
func (c *Client) movedBefore(ctx context.Context, src, dst URL, attrs *storage.ObjectAttrs, r *Result) bool {
	if _, err := c.Stat(ctx, src); !errors.Is(err, storage.ErrObjectNotExist) {
		return false
	}
	a, err := c.Stat(ctx, dst)
	if err != nil || a.CRC32C != attrs.CRC32C || a.Size != attrs.Size || a.Generation <= attrs.Generation {
		return false
	}
	r.Generation, r.Status = a.Generation, StatusMoved
	r.Note = "moved in one call (objects.move) whose answer was lost: the source is gone, the destination holds it"
	return true
}
