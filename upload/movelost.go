package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/state"
)

// deleteCopied deletes the object src if it is still generation gen, the
// one copied to r.Dest. A delete that fails may still have been done by
// the server (its answer lost, every retry's too), so the source is read
// back before saying what happened: gone, the move is done; still
// generation gen, it was kept; another generation, it changed. When even
// that read fails (or the move was interrupted), the move is saved (a
// "move" record), so that a rerun that finds the source gone knows that
// the destination holds it, and reports the move done.
func (c *Client) deleteCopied(ctx context.Context, r *Result, src URL, gen int64) error {
	err := c.Delete(ctx, src, DeleteOptions{IfGenerationMatch: &gen})
	switch {
	case err == nil:
		c.forgetMove(src, r.Dest)
		return nil
	case isStatus(err, http.StatusPreconditionFailed):
		c.forgetMove(src, r.Dest)
		return fmt.Errorf("%s changed since it was copied (it is no longer generation %d, which %s holds): %w: %w", src, gen, r.Dest, err, ErrSourceKept)
	}
	if ctx.Err() == nil {
		now, serr := c.Stat(ctx, src)
		switch {
		case errors.Is(serr, storage.ErrObjectNotExist):
			c.forgetMove(src, r.Dest)
			r.Note = "the delete's answer was lost; the source is gone"
			return nil
		case serr == nil && now.Generation == gen:
			c.forgetMove(src, r.Dest)
			return fmt.Errorf("deleting %s (%s holds its generation %d): %w: %w", src, r.Dest, gen, err, ErrSourceKept)
		case serr == nil:
			c.forgetMove(src, r.Dest)
			return fmt.Errorf("%s changed since it was copied (it is generation %d now, not %d, which %s holds): %w: %w",
				src, now.Generation, gen, r.Dest, err, ErrSourceKept)
		}
		err = fmt.Errorf("%w; reading it back: %w", err, serr)
	}
	then := "run the same move again to finish it"
	if serr := c.saveMove(r, src, gen); serr != nil {
		then = fmt.Sprintf("the move could not be saved (%v): if %s is gone, the move is done", serr, src)
	}
	return fmt.Errorf("deleting %s (%s holds its generation %d): %w; whether it was deleted is unknown: %s", src, r.Dest, gen, err, then)
}

// moveKey is the record key of the move src -> dst.
func (c *Client) moveKey(src URL, dst string) string {
	return state.Key(state.KindMove, src.String(), moveDest(dst), c.opts.Shard)
}

// moveDest is dst as a move record names it: a gs:// URL, or an absolute
// path (a rerun may be made from another directory).
func moveDest(dst string) string {
	if naming.IsRemote(dst) {
		return dst
	}
	if abs, err := filepath.Abs(dst); err == nil {
		return abs
	}
	return dst
}

// saveMove saves the move of generation gen of src to r.Dest (verified)
// as one whose delete is unconfirmed.
func (c *Client) saveMove(r *Result, src URL, gen int64) error {
	if c.store == nil {
		return ErrNoState
	}
	m := &state.Move{SourceGeneration: gen, CRC32C: r.CRC32C}
	size := r.Size
	if naming.IsRemote(r.Dest) {
		m.DestGeneration = r.Generation
	} else if fi, err := os.Stat(r.Dest); err == nil {
		size = fi.Size() // what the verified file holds (decompressed, maybe)
	}
	return c.store.Save(&state.Record{Kind: state.KindMove, Source: src.String(), Dest: moveDest(r.Dest), Shard: c.opts.Shard, Size: size, Move: m})
}

// forgetMove removes the saved move src -> dst, if any.
func (c *Client) forgetMove(src URL, dst string) {
	if c.store != nil {
		_ = c.store.Remove(c.moveKey(src, dst))
	}
}

// finishSaved finishes the saved move src -> dst, if there is one whose
// destination still holds what was moved: src gone, the move is done (an
// earlier run deleted it and lost the answer); src still the generation
// moved, it is deleted now; src another generation, it is kept. ok is
// false when there is no such move: the caller moves as usual.
func (c *Client) finishSaved(ctx context.Context, src URL, dst string) (r *Result, ok bool) {
	if c.store == nil {
		return nil, false
	}
	rec, err := c.store.Load(c.moveKey(src, dst))
	if err != nil || rec.Kind != state.KindMove || rec.Move == nil {
		return nil, false
	}
	r = &Result{Source: src.String(), Dest: dst, Size: rec.Size, CRC32C: rec.Move.CRC32C, Generation: rec.Move.DestGeneration, Attempts: 1}
	if u, err := ParseURL(dst); err == nil && naming.IsRemote(dst) {
		r.Bucket, r.Object = u.Bucket, u.Object
	}
	if !c.holdsMoved(ctx, rec) {
		c.forgetMove(src, dst) // the destination changed since: the move starts again
		return nil, false
	}
	now, err := c.Stat(ctx, src)
	switch {
	case errors.Is(err, storage.ErrObjectNotExist):
		c.forgetMove(src, dst)
		r.Status, r.Note = StatusMoved, "moved by an earlier run, whose delete's answer was lost: the source is gone"
		return r, true
	case err != nil:
		c.finish(ctx, r, fmt.Errorf("move: reading %s back: %w; run the same move again to finish it", src, err))
		return r, true
	case now.Generation != rec.Move.SourceGeneration:
		c.forgetMove(src, dst)
		c.finish(ctx, r, fmt.Errorf("move: %s changed since it was copied (it is generation %d now, not %d, which %s holds): %w",
			src, now.Generation, rec.Move.SourceGeneration, dst, ErrSourceKept))
		return r, true
	}
	return c.removeAfter(ctx, r, nil, func() error { return c.deleteCopied(ctx, r, src, now.Generation) }), true
}

// holdsMoved reports whether the destination of the saved move rec still
// holds what was moved: the object's generation and CRC32C, or the local
// file's size.
func (c *Client) holdsMoved(ctx context.Context, rec *state.Record) bool {
	if !naming.IsRemote(rec.Dest) {
		fi, err := os.Stat(rec.Dest)
		return err == nil && fi.Mode().IsRegular() && fi.Size() == rec.Size
	}
	u, err := ParseURL(rec.Dest)
	if err != nil {
		return false
	}
	a, err := c.Stat(ctx, u)
	return err == nil && a.Generation == rec.Move.DestGeneration && a.CRC32C == rec.Move.CRC32C
}
