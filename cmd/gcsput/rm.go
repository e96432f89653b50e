package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/storage"

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
			if err := r.check(); err != nil {
				return err
			}
			if ifGen != nil && *ifGen == 0 {
				return usagef("--if-generation-match 0 means only if absent, as in the JSON API: rm would delete nothing; give the live generation ('gcsput stat' shows it)")
			}
			if ifGen != nil && (recursive || all || len(ops) != 1 || upload.HasWildcard(ops[0])) {
				return usagef("--if-generation-match takes exactly one object, without -r or -a")
			}
			var urls []upload.URL
			var err error
			if recursive {
				var rs []remoteURL
				if rs, err = remoteOperands(ops); err == nil {
					for _, u := range rs {
						urls = append(urls, u.lib())
					}
				}
			} else if err = folderOperand(ops); err == nil {
				urls, err = objectOperands(ops)
			}
			if err != nil {
				return err
			}
			c, done, err := a.metaClient(ctx, &r, "")
			if err != nil {
				return err
			}
			defer done()
			rm := remover{a: a, c: c, dryRun: dryRun, all: all, soft: newSoftNoter(a.say, c)}
			if ifGen != nil {
				rm.ifGen = *ifGen
			}
			if recursive {
				prefixes, matched, err := expandRecursive(ctx, c, urls)
				if err != nil {
					return err
				}
				return rm.prefixes(ctx, prefixes, matched)
			}
			if urls, err = expandObjects(ctx, c, urls); err != nil {
				return err
			}
			return a.eachObject(urls, func(u upload.URL) error { return rm.one(ctx, u) })
		}
	},
}

// remover deletes objects, or says what it would delete.
type remover struct {
	a      *app
	c      *upload.Client
	dryRun bool
	ifGen  int64
	all    bool // every generation
	soft   *softNoter
}

func (rm *remover) one(ctx context.Context, u upload.URL) error {
	if rm.all {
		return rm.versions(ctx, u)
	}
	var err error
	switch {
	case rm.dryRun:
		if _, err = rm.c.Stat(ctx, u); err == nil {
			fmt.Fprintf(rm.a.stdout, "would remove %s\n", escapeText(u.String()))
		}
	case rm.ifGen != 0:
		err = rm.c.DeleteGeneration(ctx, u, rm.ifGen)
	default:
		err = rm.c.Delete(ctx, u)
	}
	if errors.Is(err, storage.ErrObjectNotExist) && rm.holdsObjects(ctx, u) {
		return fmt.Errorf("%s: no such object, but objects exist under %s/: use -r to remove everything under it ('gcsput rm -r %s/')", u, u, u)
	}
	if err != nil {
		return objectError(u, err)
	}
	if !rm.dryRun {
		fmt.Fprintf(rm.a.stdout, "removed %s\n", escapeText(u.String()))
		rm.soft.deleted(ctx, u.Bucket)
	}
	return nil
}

// holdsObjects reports whether any object is named under u as a folder (u/...): a rm
// without -r of such a name meant the folder. One listing request; a listing that fails
// says no, and the plain "no such object" stands.
func (rm *remover) holdsObjects(ctx context.Context, u upload.URL) bool {
	for _, err := range rm.c.List(ctx, u.Bucket, u.Object+"/", "/") {
		return err == nil
	}
	return false
}

// folderOperand refuses, without -r, an operand that names a bucket or a folder
// (gs://b, gs://b/dir/), with the flag that removes what is under it.
func folderOperand(ops []string) error {
	for _, op := range ops {
		if u, err := parseRemote(op); err == nil && isRemote(op) && (u.object == "" || strings.HasSuffix(u.object, "/")) {
			return usagef("%s names a bucket or folder, not an object: use -r to remove everything under it ('gcsput rm -r %s')", op, op)
		}
	}
	return nil
}

// versions deletes every generation of the object u names; the listing is
// read first, and each generation is deleted by number (idempotent).
func (rm *remover) versions(ctx context.Context, u upload.URL) error {
	var gens []int64
	for o, err := range rm.c.Versions(ctx, u.Bucket, u.Object) {
		if err != nil {
			return fmt.Errorf("%s: listing its generations (none was deleted): %w", u, err)
		}
		if o.Name == u.Object {
			gens = append(gens, o.Generation)
		}
	}
	if len(gens) == 0 {
		return fmt.Errorf("%s: no such object", u)
	}
	for _, g := range gens {
		name := fmt.Sprintf("%s#%d", u, g)
		if rm.dryRun {
			fmt.Fprintf(rm.a.stdout, "would remove %s\n", escapeText(name))
			continue
		}
		if err := rm.c.DeleteVersion(ctx, u, g); err != nil {
			return objectError(u, err)
		}
		fmt.Fprintf(rm.a.stdout, "removed %s\n", escapeText(name))
		rm.soft.deleted(ctx, u.Bucket)
	}
	return nil
}

// prefixes deletes everything under each prefix, and the objects a wildcard
// matched: the whole listing is read first, so a listing that fails deletes
// nothing under that prefix. Each object is deleted under the generation
// listed, which the listing already gave: no second read per object.
func (rm *remover) prefixes(ctx context.Context, urls []upload.URL, matched []*storage.ObjectAttrs) error {
	var all, folders []upload.URL
	listed := map[upload.URL]int64{} // the generation each object was listed with
	for _, o := range matched {
		ou := upload.URL{Bucket: o.Bucket, Object: o.Name}
		all = append(all, ou)
		listed[ou] = o.Generation
	}
	for _, u := range urls {
		prefix := folderPrefix(u.Object)
		var under []upload.URL
		for o, err := range rm.c.List(ctx, u.Bucket, prefix, "") {
			if err != nil {
				return fmt.Errorf("listing gs://%s/%s (nothing under it was deleted): %w", u.Bucket, prefix, err)
			}
			ou := upload.URL{Bucket: o.Bucket, Object: o.Name}
			under = append(under, ou)
			listed[ou] = o.Generation
		}
		fs, err := rm.a.hnsFolders(ctx, rm.c, u.Bucket, prefix)
		if err != nil {
			return fmt.Errorf("listing the folders of gs://%s/%s (nothing under it was deleted): %w", u.Bucket, prefix, err)
		}
		if len(under) == 0 && len(fs) == 0 {
			return fmt.Errorf("gs://%s/%s: no objects to remove", u.Bucket, prefix)
		}
		all = append(all, under...)
		folders = append(folders, fs...)
	}
	// The folders of a hierarchical-namespace bucket go after the objects
	// (a folder is deleted only when empty), and only if every object went.
	if err := rm.objects(ctx, all, listed); err != nil || len(folders) == 0 {
		return err
	}
	return rm.removeFolders(ctx, folders)
}

// objects deletes the objects listed (under the generation listed).
func (rm *remover) objects(ctx context.Context, all []upload.URL, listed map[upload.URL]int64) error {
	return rm.a.eachObject(all, func(u upload.URL) error {
		switch {
		case rm.all:
			return rm.versions(ctx, u)
		case rm.dryRun:
			fmt.Fprintf(rm.a.stdout, "would remove %s\n", escapeText(u.String()))
			return nil
		}
		if err := rm.c.DeleteGeneration(ctx, u, listed[u]); err != nil {
			return objectError(u, err)
		}
		fmt.Fprintf(rm.a.stdout, "removed %s\n", escapeText(u.String()))
		rm.soft.deleted(ctx, u.Bucket)
		return nil
	})
}
