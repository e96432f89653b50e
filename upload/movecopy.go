package upload

import (
	"context"

	"cloud.google.com/go/storage"
)

// moveCopy copies generation srcGen of src (as attrs shows it) to dst on
// the server, as Copy does: the source read with its key, the destination
// written as the client and o ask (its key, or KMS key), in rewrite calls
// whose token is saved after each, so a move cut short continues from the
// last call when run again, or by Client.Resume (restore: the saved
// destination, whole), holds are the destination's. noClobber adds ifGenerationMatch=0 and a dst
// that exists is "skipped: exists". The Result names dst and its new
// generation and CRC32C; the caller ends it (Client.finish) once, with
// the move's error.
func (c *Client) moveCopy(ctx context.Context, src, dst URL, attrs *storage.ObjectAttrs, noClobber, restore bool, holds Holds) (*Result, error) {
	r := copyResult(src, dst)
	o := CopyOptions{SourceGeneration: attrs.Generation, NoClobber: noClobber, Holds: holds}
	return r, c.hold(ctx, func() error {
		return c.copyObject(ctx, r, src, attrs, dst, o, copyHow{restore: restore, move: true})
	})
}
