package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/upload"
)

var catCommand = &command{
	name:    "cat",
	args:    "[flags] gs://BUCKET/OBJECT...",
	summary: "write objects to standard output",
	help: `Writes each object's bytes to standard output, in order, resuming a broken response and
checking the CRC32C at the end: a mismatch can only be reported (exit 1), so use 'set -o pipefail'.`,
	examples: `
  gcsput cat gs://my-bucket/notes.txt
  gcsput cat gs://my-bucket/db.tgz | tar xz
  gcsput cat 'gs://my-bucket/logs/2024-06-*.log' | grep ERROR
  gcsput cat gs://my-bucket/notes.txt#1718040001234567    # a noncurrent generation
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-cat for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var rng string
		fs.Group("Transfer")
		fs.String(&rng, "range", "r", "START-END", "write only bytes START to END (as gsutil cat -r)\n"+"write only bytes START to END (inclusive; START- to the end, -N the last N), as gsutil cat -r; a range is not checked against the object's CRC32C")
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var urls []upload.URL
			var gens map[upload.URL]int64
			var off, n int64
			var ranged bool
			return a.withClient(ctx, &r, func() (err error) {
				if urls, gens, err = generationOperands(ops); err != nil {
					return err
				}
				if off, n, ranged, err = parseByteRange(rng); err != nil {
					return err
				}
				if ranged && len(gens) > 0 {
					return usagef("-r reads live objects: cat a generation (#GENERATION) whole")
				}
				return nil
			}, func(c *upload.Client) (err error) {
				if urls, err = expandObjects(ctx, c, urls); err != nil {
					return err
				}
				return a.eachObject(urls, func(u upload.URL) error {
					if gen := gens[u]; gen != 0 {
						_, err := c.DownloadWriter(ctx, u, a.stdout, upload.DownloadOptions{Decompress: true, Generation: gen})
						return objectError(u, err)
					}
					if ranged {
						off, n := off, n // each object's own: -r -N is the last N bytes of every one
						if off < 0 {     // the last -off bytes
							attrs, err := c.Stat(ctx, u)
							if err != nil {
								return objectError(u, err)
							}
							off, n = max(attrs.Size+off, 0), -1
						}
						_, err := c.ReadRange(ctx, u, off, n, a.stdout)
						return objectError(u, err)
					}
					_, err := c.DownloadWriter(ctx, u, a.stdout, upload.DownloadOptions{Decompress: true})
					if errors.Is(err, resumable.ErrChecksumMismatch) {
						return fmt.Errorf("%s: the bytes written do not match the object's CRC32C: %w", u, err)
					}
					return objectError(u, err)
				})
			})
		}
	},
}

// parseByteRange reads gsutil cat -r's START-END (inclusive), START- and -N.
// off < 0 means the last -off bytes; n < 0 means to the end.
func parseByteRange(s string) (off, n int64, ok bool, err error) {
	if s == "" {
		return 0, -1, false, nil
	}
	bad := usagef("-r %q: want START-END, START- or -N (bytes, END inclusive), e.g. -r 0-99", s)
	a, b, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false, bad
	}
	num := func(v string) (int64, bool) {
		x, err := strconv.ParseInt(v, 10, 64)
		return x, err == nil && x >= 0
	}
	switch {
	case a == "" && b != "":
		last, ok := num(b)
		if !ok || last == 0 {
			return 0, 0, false, bad
		}
		return -last, -1, true, nil
	case b == "":
		start, ok := num(a)
		if !ok {
			return 0, 0, false, bad
		}
		return start, -1, true, nil
	}
	start, ok1 := num(a)
	end, ok2 := num(b)
	if !ok1 || !ok2 || end < start {
		return 0, 0, false, bad
	}
	return start, end - start + 1, true, nil
}
