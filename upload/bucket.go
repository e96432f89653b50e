package upload

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
)

// TestPermissions returns those of perms that the credentials hold on bucket: the JSON
// API's buckets.testIamPermissions, one GET that needs no permission itself, so a caller
// can learn before its first transfer that a batch cannot succeed. A bucket that does
// not exist is an error matching storage.ErrBucketNotExist; any other failure (a 403 for
// reasons other than the permissions asked about, a server that has no such method) is
// returned as it came, and means only that the answer is not known.
func (c *Client) TestPermissions(ctx context.Context, bucket string, perms ...string) ([]string, error) {
	var granted []string
	err := c.runner.Do(ctx, func(ctx context.Context) error {
		var err error
		granted, err = c.bucket(bucket).IAM().TestPermissions(ctx, perms)
		var ge *googleapi.Error
		if errors.As(err, &ge) && ge.Code == http.StatusNotFound {
			err = fmt.Errorf("%w: %w", storage.ErrBucketNotExist, err)
		}
		return permanentIfMissing(err)
	})
	return granted, err
}

// bucketExists asks once, before a batch into bucket, whether it exists, so
// that a typo is one error instead of one 404 per file. The error matches
// storage.ErrBucketNotExist; any other answer (a 403, a server without
// testIamPermissions) lets the batch go ahead, and its files say what they meet.
func (c *Client) bucketExists(ctx context.Context, bucket string) error {
	_, err := c.TestPermissions(ctx, bucket, "storage.objects.create")
	if errors.Is(err, storage.ErrBucketNotExist) {
		return fmt.Errorf("upload: gs://%s: %w; nothing was uploaded (check the bucket's name)", bucket, storage.ErrBucketNotExist)
	}
	return ctx.Err()
}
