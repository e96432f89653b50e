package upload

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/storage"
)

// pinnedGone explains a 404 (err) for generation gen of src, which a
// listing or a stat pinned before the transfer (op, "download" or "copy",
// into dst): the object was overwritten since (another generation is live)
// or deleted, said as a copy of one object says it. When the object's
// state cannot be read, err is returned as it is.
func (c *Client) pinnedGone(ctx context.Context, op string, src URL, gen int64, dst string, err error) error {
	now, serr := c.Stat(ctx, src)
	switch {
	case errors.Is(serr, storage.ErrObjectNotExist):
		return fmt.Errorf("%s: the source %s was deleted during the %s (it was generation %d): nothing was written to %s: %w", op, src, op, gen, dst, err)
	case serr == nil && now.Generation != gen:
		return fmt.Errorf("%s: the source %s changed during the %s (generation %d, now %d): nothing was written to %s; %s again to get the new generation: %w",
			op, src, op, gen, now.Generation, dst, op, err)
	}
	return err
}
