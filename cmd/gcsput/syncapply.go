package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gcsput/gcsput/upload"
)

// What a sync does once it is planned: the copies, the deletes, or with
// --dry-run the plan printed.

// copy runs the planned copies through the job (progress, records,
// sessions). It returns true when every copy succeeded.
func (s *syncer) copy(ctx context.Context, p *syncPlan) bool {
	items := make([]upload.Item, 0, len(p.copy))
	for _, c := range p.copy {
		u, local := upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + c.rel}, s.localPath(c.rel)
		switch {
		case s.up:
			s.j.expect(u.String(), local, c.e.size)
		case !inside(s.local, local):
			s.j.add(&upload.Result{Source: s.url(c.rel), Dest: local, Status: upload.StatusFailed,
				Err: fmt.Errorf("refusing to download %s: a symlink on its path leads out of %s", c.e.name, s.local)})
			continue
		default:
			u.Object = c.e.name // the name as listed; rel is its cleaned local form
		}
		items = append(items, upload.Item{Local: local, Remote: u})
	}
	if len(items) == 0 {
		return true
	}
	var err error
	if s.up {
		_, err = s.j.client.Upload(ctx, items, upload.UploadOptions{PreservePOSIX: true})
	} else {
		_, err = s.j.client.DownloadObjects(ctx, items, upload.DownloadOptions{PreservePOSIX: true, Decompress: true})
	}
	return err == nil
}

// inside reports whether path stays under root once the links on its way
// that exist are followed: a symlink in the local tree must not carry a
// download elsewhere. A root that does not exist yet holds no links.
func inside(root, path string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if d, err := filepath.EvalSymlinks(dir); err == nil {
			rel, err := filepath.Rel(r, d)
			return err == nil && filepath.IsLocal(rel) || rel == "."
		}
		if dir == root || dir == filepath.Dir(dir) {
			return true
		}
	}
}

// remove deletes what the source lacks: the entries of the side held in
// memory that the streamed side did not have.
func (s *syncer) remove(ctx context.Context, p *syncPlan) {
	for _, d := range p.del {
		rec := fileRecord{Type: "file", Op: "delete", Status: "deleted", Bytes: d.e.size}
		var err error
		if s.up {
			rec.Destination = s.url(d.rel)
			err = s.j.client.DeleteGeneration(ctx, upload.URL{Bucket: s.remote.bucket, Object: s.prefix() + d.rel}, d.e.gen)
		} else {
			rec.Destination = s.localPath(d.rel)
			err = os.Remove(rec.Destination)
		}
		if err != nil {
			rec.Status, rec.Error = "failed", err.Error()
		}
		s.j.record(rec)
	}
}

// printPlan prints what a sync would do, changing nothing, and what the
// delete guard would say: the error of a sync it would refuse.
func (s *syncer) printPlan(p *syncPlan, guard deletePlan) error {
	for _, c := range p.copy {
		s.planLine("copy", c.rel, c.e.size)
	}
	for _, d := range p.del {
		s.planLine("delete", d.rel, d.e.size)
	}
	refused, withheld := guard.refusal(), guard.withheld(true)
	if s.f.transfer.json {
		sum := map[string]any{"type": "summary", "dry_run": true, "copy": len(p.copy), "bytes": p.bytes, "skip": p.skip, "delete": len(p.del)}
		if refused != nil {
			sum["refused"] = refused.Error()
		}
		if withheld != "" {
			sum["deletes_withheld"], sum["withheld_because"] = len(p.del), withheld
		}
		printJSON(s.a.stdout, sum)
		return refused
	}
	line := fmt.Sprintf("dry run: %d to copy (%s), %d unchanged, %d to delete", len(p.copy), formatSize(p.bytes), p.skip, len(p.del))
	switch {
	case refused != nil:
		line += "; the delete guard would refuse this sync (below)"
	case withheld != "":
		line += fmt.Sprintf("; the %s would be withheld (%s)", plural(len(p.del), "delete"), withheld)
	}
	fmt.Fprintln(s.a.stderr, line+"; nothing was changed")
	return refused
}

// planLine prints one action of a dry run.
func (s *syncer) planLine(action, rel string, size int64) {
	src, dst := s.localPath(rel), s.url(rel)
	if !s.up {
		src, dst = dst, src
	}
	if action == "delete" {
		src = ""
	}
	switch {
	case s.f.transfer.json:
		printJSON(s.a.stdout, map[string]any{"type": "plan", "action": action, "source": src, "destination": dst, "bytes": size})
	case action == "delete":
		fmt.Fprintf(s.a.stdout, "would delete %10s  %s\n", formatSize(size), escapeText(dst))
	default:
		fmt.Fprintf(s.a.stdout, "would %-6s %10s  %s -> %s\n", action, formatSize(size), escapeText(src), escapeText(dst))
	}
}
