package upload

import (
	"context"
	"net/http"

	"cloud.google.com/go/storage"
)

// moveCopy copies generation srcGen of src to dst on the server (a 404 if
// that generation is gone); noClobber adds ifGenerationMatch=0 and a dst
// that exists is "skipped: exists". The Result names dst and its new
// generation and CRC32C. For now one rewrite call through the storage
// client, retried whole; to become Client.Copy's resumable rewrite.
func (c *Client) moveCopy(ctx context.Context, src, dst URL, srcGen int64, noClobber bool) (*Result, error) {
	r := &Result{Source: src.String(), Dest: dst.String(), Bucket: dst.Bucket, Object: dst.Object, Attempts: 1}
	to := c.gcs.Bucket(dst.Bucket).Object(dst.Object)
	if noClobber {
		to = to.If(storage.Conditions{DoesNotExist: true})
	}
	from := c.gcs.Bucket(src.Bucket).Object(src.Object).Generation(srcGen)
	var a *storage.ObjectAttrs
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		a, err = to.CopierFrom(from).Run(ctx)
		return permanentIfMissing(err)
	})
	if noClobber && isStatus(err, http.StatusPreconditionFailed) {
		r.Status, r.Note = StatusSkipped, "exists"
		return r, nil
	}
	if err != nil {
		return r, err
	}
	r.Status, r.Generation, r.Size, r.CRC32C, r.Transferred = StatusMoved, a.Generation, a.Size, a.CRC32C, 0
	return r, nil
}
