package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/upload"
)

var rmCommand = &command{
	name:    "rm",
	args:    "[flags] gs://BUCKET/OBJECT...",
	summary: "delete objects",
	help: `Deletes objects; with -r, everything under each bucket or prefix. Each delete is conditional
on the generation just read, so a retry after a lost reply never deletes a newer object.`,
	examples: `
  gcsput rm gs://my-bucket/old.log
  gcsput rm -r --dry-run gs://my-bucket/tmp/
  gcsput rm --dry-run 'gs://my-bucket/logs/**.tmp'
  gcsput rm --if-generation-match 1718040001234567 gs://my-bucket/report.pdf
`,
	see: `docs/wildcards.md for wildcards; docs/commands.md#gcsput-rm for the rest; docs/flags.md for every flag in full.`,
	setup: func(a *app, fs *flagSet) func(context.Context, []string) error {
		var r remoteFlags
		var recursive, dryRun, all bool
		var ifGen *int64
		fs.Group("Deletion")
		fs.Bool(&recursive, "recursive", "r", "delete everything under each bucket or prefix")
		fs.Alias("R", "recursive")
		fs.Bool(&dryRun, "dry-run", "", "print what would be deleted; delete nothing")
		fs.Bool(&all, "all-versions", "a", "delete every generation, noncurrent ones too\n"+"delete every generation, noncurrent ones too (in a bucket with versioning)")
		fs.Group("Preconditions")
		fs.Generation(&ifGen, "if-generation-match", "", "GEN", "delete only if the live generation is GEN (one object)")
		r.register(fs)
		return func(ctx context.Context, ops []string) error {
			var urls []upload.URL
			return a.withClient(ctx, &r, func() (err error) {
				if ifGen != nil && *ifGen == 0 {
					return usagef("--if-generation-match 0 means only if absent, as in the JSON API: rm would delete nothing; give the live generation ('gcsput stat' shows it)")
				}
				if ifGen != nil && (recursive || all || len(ops) != 1 || upload.HasWildcard(ops[0])) {
					return usagef("--if-generation-match takes exactly one object, without -r or -a")
				}
				if !recursive {
					if err = folderOperand(ops); err == nil {
						urls, err = objectOperands(ops)
					}
					return err
				}
				rs, err := remoteOperands(ops)
				for _, u := range rs {
					urls = append(urls, u)
				}
				return err
			}, func(c *upload.Client) error {
				o := upload.RemoveOptions{Recursive: recursive, Wildcards: true, DryRun: dryRun, AllVersions: all, IfGenerationMatch: ifGen,
					Removed: a.printRemoval(ctx, c, dryRun), Warn: func(s string) { a.warn(redact(s)) }}
				var re *upload.RemoveError
				err := c.Remove(ctx, urls, o) // it expands the wildcards first
				if errors.As(err, &re) {
					noun := "objects"
					if re.Folders {
						noun = "folders"
					}
					return &failedError{failed: re.Failed, total: re.Total, noun: noun}
				}
				return err
			})
		}
	},
}

// printRemoval prints what rm removed, would remove, or could not, and notes
// once per bucket that it keeps what is deleted (soft delete).
func (a *app) printRemoval(ctx context.Context, c *upload.Client, dryRun bool) func(upload.Removal) {
	soft := newSoftNoter(a.say, c)
	return func(r upload.Removal) {
		name := r.URL.String()
		if r.Generation != 0 {
			name = fmt.Sprintf("%s#%d", name, r.Generation)
		}
		switch {
		case r.Err != nil && errors.Is(r.Err, upload.ErrFolderName):
			u := r.URL
			fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(fmt.Sprintf("%s: no such object, but objects exist under %s/: use -r to remove everything under it ('gcsput rm -r %s/')", u, u, u)))
		case r.Err != nil:
			fmt.Fprintf(a.stderr, "gcsput: %s\n", escapeText(redact(r.Err.Error())))
		case dryRun:
			fmt.Fprintf(a.stdout, "would remove %s\n", escapeText(name))
		default:
			fmt.Fprintf(a.stdout, "removed %s\n", escapeText(name))
			if !r.Folder {
				soft.deleted(ctx, r.URL.Bucket)
			}
		}
	}
}

// folderOperand refuses, without -r, an operand that names a bucket or a folder
// (gs://b, gs://b/dir/), with the flag that removes what is under it.
func folderOperand(ops []string) error {
	for _, op := range ops {
		if u, err := parseRemote(op); err == nil && naming.IsRemote(op) && (u.Object == "" || strings.HasSuffix(u.Object, "/")) {
			return usagef("%s names a bucket or folder, not an object: use -r to remove everything under it ('gcsput rm -r %s')", op, op)
		}
	}
	return nil
}
