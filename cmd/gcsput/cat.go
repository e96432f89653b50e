package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/api/googleapi"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

var catCommand = &command{
	name:    "cat",
	args:    "[flags] gs://BUCKET/OBJECT...",
	summary: "write objects to standard output",
	help: `
Writes each object's bytes to standard output, in order, as 'gcsput cp gs://b/o -' does: a
broken response is resumed with a Range request from the bytes already written, and the
CRC32C of all the bytes is checked at the end. The bytes are out by then, so a mismatch can
only be reported (exit 1): in a pipeline, check it ('set -o pipefail').

Examples:
  gcsput cat gs://my-bucket/notes.txt
  gcsput cat gs://my-bucket/db.tgz | tar xz
`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			if err := r.check(); err != nil {
				return err
			}
			urls, err := objectOperands(ops)
			if err != nil {
				return err
			}
			c, done, err := a.metaClient(ctx, &r, "")
			if err != nil {
				return err
			}
			defer done()
			return a.eachObject(urls, func(u upload.URL) error {
				_, err := c.DownloadWriter(ctx, u, a.stdout)
				var ge *googleapi.Error
				switch {
				case err == nil:
					return nil
				case errors.Is(err, resumable.ErrChecksumMismatch):
					return fmt.Errorf("%s: the bytes written do not match the object's CRC32C: %w", u, err)
				case errors.As(err, &ge) && ge.Code == 404:
					return fmt.Errorf("%s: no such object", u)
				}
				return objectError(u, err)
			})
		}
	},
}
