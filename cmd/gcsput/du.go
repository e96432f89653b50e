package main

import (
	"context"
	"fmt"

	"github.com/gcsput/gcsput/internal/listing"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/upload"
)

var duCommand = &command{
	name:    "du",
	args:    "[flags] gs://BUCKET[/PREFIX]...",
	summary: "show the bytes stored under a bucket or prefix",
	help: `Prints the size of every object under each bucket or prefix, a line each, as gsutil du does;
-s one total per operand, -h sizes as 1.5 KiB, 234 MiB.`,
	examples: `
  gcsput du gs://my-bucket/logs/
  gcsput du -sh gs://my-bucket/photos/ gs://my-bucket/videos/
  gcsput du -s 'gs://my-bucket/**.mp4'
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-du for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var summary, human bool
		fs.Group("Output")
		fs.Bool(&summary, "summarize", "s", "print only each operand's total\n"+"print only each operand's total (gsutil du -s, gcloud's --summarize)")
		fs.Bool(&human, "human-readable", "h", "print sizes as 1.5 MiB rather than bytes (also -H)\n"+"print sizes as 1.5 MiB rather than bytes, as gsutil du -h (also -H)")
		fs.Alias("H", "human-readable")
		fs.LongAlias("readable-sizes", "human-readable") // gcloud storage du's name
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var urls []upload.URL
			return a.withClient(ctx, &r, func() (err error) {
				urls, err = remoteOperands(ops)
				return err
			}, func(c *upload.Client) error {
				size := func(n int64) string {
					if human {
						return gsutilSize(n)
					}
					return fmt.Sprint(n)
				}
				for _, u := range urls {
					if err := a.du(ctx, c, u, summary, size); err != nil {
						return err
					}
				}
				return nil
			})
		}
	},
}

// remoteOperands parses the gs:// operands of a listing command (ls, du, rm -r).
func remoteOperands(ops []string) ([]upload.URL, error) {
	if len(ops) == 0 {
		return nil, usagef("name a bucket or folder, e.g. gs://my-bucket/photos/")
	}
	var urls []upload.URL
	for _, op := range ops {
		if err := checkTypo(op); err != nil {
			return nil, err
		}
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// du prints the sizes under one operand (or its total, with summary).
func (a *app) du(ctx context.Context, c *upload.Client, u upload.URL, summary bool, size func(int64) string) error {
	label := "gs://" + u.Bucket + "/" + naming.Folder(u.Object)
	if upload.HasWildcard(u.Object) {
		label = u.String()
	}
	var total int64
	for o, err := range listing.Usage(ctx, c, u) {
		if err != nil {
			return err
		}
		total += o.Size
		if !summary {
			fmt.Fprintf(a.stdout, "%-12s %s\n", size(o.Size), escapeText("gs://"+o.Bucket+"/"+o.Name))
		}
	}
	if summary {
		fmt.Fprintf(a.stdout, "%-12s %s\n", size(total), escapeText(label))
	}
	return nil
}
