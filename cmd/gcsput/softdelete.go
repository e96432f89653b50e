package main

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/listing"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/softnote"
	"github.com/gcsput/gcsput/upload"
)

var restoreCommand = &command{
	name:    "restore",
	args:    "[flags] gs://BUCKET/OBJECT[#GENERATION]...",
	summary: "restore soft-deleted objects",
	help: `Restores soft-deleted objects as new live generations, as 'gcloud storage restore' does
(gs://b/o#GENERATION that generation, gs://b/o the one deleted last, -a every one).`,
	examples: `
  gcsput ls --soft-deleted gs://my-bucket/reports/
  gcsput restore gs://my-bucket/reports/q3.pdf
  gcsput restore gs://my-bucket/reports/q3.pdf#1718040001234567
  gcsput restore -a 'gs://my-bucket/reports/*.pdf'
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-restore for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var all, copyACL bool
		fs.Group("Restore")
		fs.Bool(&all, "all-versions", "a", "restore every soft-deleted generation, oldest first\n"+"restore every soft-deleted generation of each name, oldest first")
		fs.Bool(&copyACL, "preserve-acl", "p", "give the restored object its old ACL\n"+"give the restored object the soft-deleted one's ACL (default: the bucket's default object ACL)")
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var targets []versioned
			return a.withClient(ctx, &r, func() (err error) {
				if targets, err = versionedOperands(ops); err != nil {
					return err
				}
				for _, t := range targets {
					if t.Generation != 0 && (all || upload.HasWildcard(t.URL.Object)) {
						return usagef("%s#%d names one generation: without -a and without wildcards", t.URL, t.Generation)
					}
				}
				return nil
			}, func(c *upload.Client) error {
				todo, err := listing.Restorable(ctx, c, targets, all)
				if err != nil {
					return err
				}
				urls := make([]upload.URL, len(todo))
				for i, t := range todo {
					urls[i] = t.URL
				}
				i := 0 // eachObject calls in order, one at a time: todo[i] is u's
				return a.eachObject(urls, func(u upload.URL) error {
					t := todo[i]
					i++
					attrs, err := c.Restore(ctx, u, upload.RestoreOptions{Generation: t.Generation, CopySourceACL: copyACL})
					if err != nil {
						return objectError(u, err)
					}
					fmt.Fprintf(a.stdout, "restored %s#%d\n", escapeText(u.String()), attrs.Generation)
					return nil
				})
			})
		}
	},
}

// versioned is an operand that may name a generation (0: none).
type versioned = listing.Generation

// versionedOperands parses object operands that may end in #GENERATION, as
// gsutil and gcloud write them.
func versionedOperands(ops []string) ([]versioned, error) {
	if len(ops) == 0 {
		return nil, usagef("name at least one object, e.g. gs://my-bucket/report.pdf")
	}
	var out []versioned
	for _, op := range ops {
		if err := checkTypo(op); err != nil {
			return nil, err
		}
		if !naming.IsRemote(op) {
			return nil, usagef("%s is not a gs:// URL", op)
		}
		u, gen, err := upload.ParseVersionedURL(op)
		if err != nil {
			return nil, usagef("%v", err)
		}
		if u.Object == "" || strings.HasSuffix(u.Object, "/") {
			return nil, usagef("%s names a bucket or folder, not an object", op)
		}
		out = append(out, versioned{URL: u, Generation: gen})
	}
	return out, nil
}

// softNoter says, once per bucket, that the bucket keeps what a command
// deletes (internal/softnote).
type softNoter struct{ *softnote.Noter }

func newSoftNoter(say func(string), c *upload.Client) *softNoter {
	return &softNoter{softnote.New(say, c.SoftDeleteRetention)}
}

func (n *softNoter) deleted(ctx context.Context, bucket string) {
	if n != nil {
		n.Deleted(ctx, bucket)
	}
}

// generationOperands are object operands for stat and cat: each may name a
// generation (#GENERATION), given back by URL; wildcards name none.
func generationOperands(ops []string) ([]upload.URL, map[upload.URL]int64, error) {
	targets, err := versionedOperands(ops)
	if err != nil {
		return nil, nil, err
	}
	var urls []upload.URL
	gens := map[upload.URL]int64{}
	for _, t := range targets {
		if t.Generation != 0 {
			if upload.HasWildcard(t.URL.Object) {
				return nil, nil, usagef("%s#%d: a generation names one object, not a wildcard", t.URL, t.Generation)
			}
			if g, ok := gens[t.URL]; ok && g != t.Generation {
				return nil, nil, usagef("%s is named with two generations (%d, %d): give one per command", t.URL, g, t.Generation)
			}
			gens[t.URL] = t.Generation
		}
		urls = append(urls, t.URL)
	}
	return urls, gens, nil
}

// statGen is Stat of generation gen (0: the live one).
func statGen(ctx context.Context, c *upload.Client, u upload.URL, gen int64) (*storage.ObjectAttrs, error) {
	if gen != 0 {
		return c.StatGeneration(ctx, u, gen)
	}
	return c.Stat(ctx, u)
}
