package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/internal/listing"
	"github.com/gcsput/gcsput/upload"
)

var statCommand = &command{
	name:    "stat",
	args:    "[flags] gs://BUCKET/OBJECT...",
	summary: "show an object's metadata",
	help: `Prints each object's metadata: size, headers, custom metadata, CRC32C and MD5, generation and
times. A missing object is reported on stderr (exit 1); gs://b/o#GENERATION shows that generation.`,
	examples: `
  gcsput stat gs://my-bucket/report.pdf
  gcsput stat --json gs://my-bucket/a.txt gs://my-bucket/b.txt | jq .crc32c
  gcsput stat 'gs://my-bucket/reports/2024-0?.pdf'
  gcsput stat gs://my-bucket/report.pdf#1718040001234567
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-stat for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var asJSON bool
		fs.Group("Output")
		fs.Bool(&asJSON, "json", "", "print one JSON object per object")
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var urls []upload.URL
			var gens map[upload.URL]int64
			return a.withClient(ctx, &r, func() (err error) {
				urls, gens, err = generationOperands(ops)
				return err
			}, func(c *upload.Client) (err error) {
				if urls, err = expandObjects(ctx, c, urls); err != nil {
					return err
				}
				return a.eachObject(urls, func(u upload.URL) error {
					attrs, err := statGen(ctx, c, u, gens[u])
					if err != nil {
						return objectError(u, err)
					}
					if asJSON {
						printJSON(a.stdout, objectOf(attrs))
					} else {
						printObject(a.stdout, objectOf(attrs))
					}
					return nil
				})
			})
		}
	},
}

var lsCommand = &command{
	name:    "ls",
	args:    "[flags] gs://BUCKET[/PREFIX]...",
	summary: "list objects",
	help: `Lists the objects under a bucket or folder, one URL per line, page by page as they arrive;
without -r, deeper folders are shown once, with a trailing slash, as gsutil ls does.`,
	examples: `
  gcsput ls gs://my-bucket/
  gcsput ls -l gs://my-bucket/photos/
  gcsput ls 'gs://my-bucket/docs/*.txt' 'gs://my-bucket/**.pdf'
  gcsput ls -lh gs://my-bucket/photos/                   # sizes as 1.5 MiB
  gcsput ls -r --json gs://my-bucket/logs/ | jq -r 'select(.size > 1000000) | .url'
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-ls for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var long, recursive, asJSON, human bool
		fs.Group("Output")
		fs.Bool(&long, "long", "l", "also print sizes and update times, and a total\n"+"also print each object's size and update time, and a total")
		fs.Bool(&human, "human-readable", "h", "with -l, print sizes as 1.5 MiB rather than bytes\n"+"with -l, print sizes as 1.5 MiB rather than bytes, as gsutil ls -lh (gcloud's --readable-sizes)")
		fs.LongAlias("readable-sizes", "human-readable")
		fs.Group("Listing")
		fs.Bool(&recursive, "recursive", "r", "list everything under the prefix, not just one level")
		fs.Alias("R", "recursive")
		fs.Group("Output")
		fs.Bool(&asJSON, "json", "", "print one JSON object per object or folder")
		var versions, soft bool
		fs.Group("Listing")
		fs.Bool(&versions, "all-versions", "a", "list every generation, as URL#GENERATION\n"+"list every generation, noncurrent ones too, as URL#GENERATION (gsutil and gcloud ls -a)")
		fs.Bool(&soft, "soft-deleted", "", "list only soft-deleted objects, as URL#GENERATION\n"+"list only soft-deleted objects, as URL#GENERATION (with -l, until when each can be restored: 'gcsput restore')")
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var urls []upload.URL
			return a.withClient(ctx, &r, func() (err error) {
				if urls, err = remoteOperands(ops); err != nil {
					return err
				}
				if versions && soft {
					return usagef("-a lists live and noncurrent generations, --soft-deleted the deleted ones: give one")
				}
				for _, u := range urls {
					if versions && upload.HasWildcard(u.Object) {
						return usagef("ls -a takes a bucket or prefix, not a wildcard (%s)", u)
					}
				}
				return nil
			}, func(c *upload.Client) error {
				l := lister{a: a, c: c, long: long, recursive: recursive, json: asJSON, human: human, versions: versions, soft: soft}
				for _, u := range urls {
					err := l.list(ctx, u)
					if errors.Is(err, syscall.EPIPE) {
						return nil // the reader is gone (| head): stop listing, quietly, as head's users expect
					}
					if err != nil {
						return err
					}
				}
				l.total()
				return nil
			})
		}
	},
}

// lister prints listings and keeps the -l totals.
type lister struct {
	a                     *app
	c                     *upload.Client
	long, recursive, json bool
	human                 bool // -h: sizes as gsutil ls -lh writes them
	versions, soft        bool // -a: every generation; --soft-deleted: the soft-deleted ones
	objects               int
	bytes                 int64
}

// list prints the listing of one operand as it arrives.
func (l *lister) list(ctx context.Context, u upload.URL) error {
	o := listing.Options{Recursive: l.recursive, Versions: l.versions, SoftDeleted: l.soft}
	for a, err := range listing.Objects(ctx, l.c, u, o) {
		if err != nil {
			return err
		}
		if err := l.print(a); err != nil {
			return err // the reader is gone: no more pages are asked
		}
	}
	return nil
}

// print writes one entry and counts it for -l's total; the error is the write's.
func (l *lister) print(a *storage.ObjectAttrs) error {
	o := objectOf(a)
	if (l.versions || l.soft) && a.Prefix == "" {
		o.URL = fmt.Sprintf("%s#%d", o.URL, a.Generation)
	}
	var err error
	switch {
	case l.json:
		enc := json.NewEncoder(l.a.stdout)
		enc.SetEscapeHTML(false)
		err = enc.Encode(o)
	case a.Prefix != "":
		if l.long {
			_, err = fmt.Fprintf(l.a.stdout, "%32s%s\n", "", escapeText(o.URL))
		} else {
			_, err = fmt.Fprintln(l.a.stdout, escapeText(o.URL))
		}
	case l.long:
		size := strconv.FormatInt(a.Size, 10)
		if l.human {
			size = gsutilSize(a.Size)
		}
		line := fmt.Sprintf("%10s  %s  %s", size, a.Updated.UTC().Format(time.RFC3339), escapeText(o.URL))
		switch {
		case l.soft:
			line += "  restorable until " + a.HardDeleteTime.UTC().Format(time.RFC3339)
		case l.versions:
			line += fmt.Sprintf("  metageneration=%d", a.Metageneration) // as gsutil ls -la
		}
		_, err = fmt.Fprintln(l.a.stdout, line)
	default:
		_, err = fmt.Fprintln(l.a.stdout, escapeText(o.URL))
	}
	if a.Prefix == "" {
		l.objects++
		l.bytes += a.Size
	}
	if err != nil {
		return &stdoutError{err}
	}
	return nil
}

// stdoutError is a failed write of a listing to stdout.
type stdoutError struct{ err error }

func (e *stdoutError) Error() string { return "writing the listing: " + e.err.Error() }
func (e *stdoutError) Unwrap() error { return e.err }

func (l *lister) total() {
	if l.long && !l.json {
		fmt.Fprintf(l.a.stdout, "TOTAL: %s, %d bytes (%s)\n", plural(l.objects, "object"), l.bytes, gsutilSize(l.bytes))
	}
}

var metaSetCommand = &command{
	name:    "meta set",
	args:    "[flags] gs://BUCKET/OBJECT...",
	summary: "change an object's content type, cache control, custom metadata, holds or retention",
	help: `Changes the metadata of existing objects without re-uploading them: content type and the
other standard headers, custom metadata (merged into the object's), holds and retention.`,
	examples: `
  gcsput meta set --content-type text/html gs://site/index.html
  gcsput meta set -h 'Cache-Control: public, max-age=3600' gs://site/app.js gs://site/app.css
  gcsput meta set --metadata owner=ops --metadata ticket=OPS-42 gs://my-bucket/report.pdf
  gcsput meta set --no-temporary-hold gs://my-bucket/evidence.tar
  gcsput meta set --retain-until 2031-01-01T00:00:00Z gs://my-bucket/ledger.csv
`,
	see: `docs/commands.md#gcsput-meta-set for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var headers, metadata []string
		var contentType string
		var asJSON bool
		var mh metaHoldFlags
		fs.Group("Metadata")
		fs.String(&contentType, "content-type", "", "TYPE", "set the content type")
		fs.List(&headers, "header", "h", "'NAME: VALUE'", "set a header, e.g. Cache-Control (repeatable)\n"+"set a header: Content-Type, Cache-Control, Content-Disposition, Content-Encoding, Content-Language, x-goog-meta-KEY (repeatable)")
		fs.List(&metadata, "metadata", "", "KEY=VALUE", "set a custom metadata key; KEY= deletes it (repeatable)\n"+"set a custom metadata key; KEY= (no value) deletes it (repeatable)")
		fs.Group("Output")
		fs.Bool(&asJSON, "json", "", "print each object's new metadata as JSON")
		mh.register(fs)
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var up storage.ObjectAttrsToUpdate
			var urls []upload.URL
			return a.withClient(ctx, &r, func() error {
				h, err := parseHeaders(headers, metadata, contentType)
				if err != nil {
					return err
				}
				var ok bool
				up, ok = attrsUpdate(h)
				if err := mh.bind(fs); err != nil {
					return err
				}
				held, err := mh.apply(&up)
				if err != nil {
					return err
				}
				if !ok && !held {
					return usagef("nothing to change: give --content-type, -h, --metadata, a hold or a retention")
				}
				urls, err = objectOperands(ops)
				return err
			}, func(c *upload.Client) error {
				return a.eachObject(urls, func(u upload.URL) error {
					attrs, err := c.Update(ctx, u, up, upload.UpdateOptions{OverrideUnlockedRetention: mh.override})
					if err != nil {
						return objectError(u, err)
					}
					if asJSON {
						printJSON(a.stdout, objectOf(attrs))
					} else {
						fmt.Fprintf(a.stdout, "updated %s (metageneration %d)\n", u, attrs.Metageneration)
					}
					return nil
				})
			})
		}
	},
}

// attrsUpdate turns the headers into a metadata patch; ok is false when nothing is set.
// Custom keys are merged into the object's (a patch), so keys not named stay.
func attrsUpdate(h objectHeaders) (storage.ObjectAttrsToUpdate, bool) {
	var up storage.ObjectAttrsToUpdate
	ok := false
	if h.ContentType != "" {
		up.ContentType, ok = h.ContentType, true
	}
	if h.CacheControl != "" {
		up.CacheControl, ok = h.CacheControl, true
	}
	if h.ContentDisposition != "" {
		up.ContentDisposition, ok = h.ContentDisposition, true
	}
	if h.ContentEncoding != "" {
		up.ContentEncoding, ok = h.ContentEncoding, true
	}
	if h.ContentLanguage != "" {
		up.ContentLanguage, ok = h.ContentLanguage, true
	}
	if len(h.Metadata) > 0 {
		up.Metadata, ok = map[string]string{}, true
		for k, v := range h.Metadata {
			up.Metadata[strings.TrimSpace(k)] = v
		}
	}
	return up, ok
}
