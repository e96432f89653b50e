package main

import (
	"context"
	"path"
	"strings"

	"github.com/gcsput/gcsput/upload"
)

// copyItem is one gs:// source copied on the server and where it goes: an object, or a
// prefix ("" or ending in "/") for a folder (-r).
type copyItem struct {
	src    remoteURL
	prefix bool // everything under src.object (a folder name ending in "/", or "" for the bucket)
	dst    remoteDst
}

// planCopy checks gs:// sources against a gs:// destination and names the targets, by the
// rules of naming.go: a folder copied into a container keeps its name, into a
// non-container takes the destination's. With -r, a name without a trailing slash is a
// folder when objects exist under "name/" (the probe), else the object itself.
func planCopy(ctx context.Context, srcs []string, dst remoteURL, recursive bool, probe prefixProbe) ([]copyItem, error) {
	container := isContainerSyntax(dst) || len(srcs) > 1
	items := make([]copyItem, 0, len(srcs))
	for _, op := range srcs {
		if !isRemote(op) {
			return nil, usagef("%s -> %s: cannot mix local and gs:// sources in one cp: run one cp for each kind", op, dst)
		}
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		src, folder, err := remoteSource(ctx, op, u, recursive, probe, "copy")
		if err != nil {
			return nil, err
		}
		it := copyItem{src: src, prefix: folder}
		it.dst = copyTarget(it.src, it.prefix, dst, container)
		items = append(items, it)
	}
	return items, nil
}

// copyTarget names the object (object) or prefix (folder) one gs:// source is copied to.
func copyTarget(src remoteURL, prefix bool, dst remoteURL, container bool) remoteDst {
	name := strings.TrimSuffix(src.object, "/")
	if !container {
		if prefix {
			return remoteDst{dst.bucket, folderPrefix(dst.object)}
		}
		return remoteDst{dst.bucket, dst.object}
	}
	p := folderPrefix(dst.object)
	switch {
	case prefix && name == "":
		return remoteDst{dst.bucket, p} // a whole bucket lands as its contents
	case prefix:
		return remoteDst{dst.bucket, p + path.Base(name) + "/"}
	}
	return remoteDst{dst.bucket, p + path.Base(name)}
}

// copyOptions are cp's flags as the library's copy options.
func (f *cpFlags) copyOptions() upload.CopyOptions {
	holds, _ := f.hold.holds() // checked in cpFlags.check
	return upload.CopyOptions{NoClobber: f.noClobber, StorageClass: f.storageClass, SkipUnchanged: f.skipUnchanged, IfGenerationMatch: f.ifGen, Holds: holds}
}

// copyFlagsCheck refuses the upload-only flags in a copy between gs:// locations.
func (f *cpFlags) copyFlagsCheck() error {
	switch {
	case len(f.headers) > 0 || len(f.metadata) > 0 || f.contentType != "":
		return usagef("-h, --metadata and --content-type apply to uploads; a copy keeps its source's metadata: change it after with 'gcsput meta set'")
	case f.gzipExts != "" || f.gzipAll:
		return usagef("-z and -Z apply to uploads: a copy between gs:// locations keeps the source's bytes")
	case f.preservePosix:
		return usagef("--preserve-posix applies to uploads and downloads: a copy keeps the source's metadata, POSIX attributes included")
	}
	return nil
}

// copy runs cp with gs:// sources and a gs:// destination: server-side copies (rewrite).
func (a *app) copy(ctx context.Context, f *cpFlags, srcs []string, dst string) error {
	if err := f.copyFlagsCheck(); err != nil {
		return err
	}
	u, err := parseRemote(dst)
	if err != nil {
		return err
	}
	if _, err := planCopy(ctx, srcs, u, f.recursive, nil); err != nil {
		return err
	}
	j, err := a.newJob(ctx, f.jobConfig())
	if err != nil {
		return err
	}
	defer j.close()
	plan, err := planCopy(ctx, srcs, u, f.recursive, j.probe)
	if err != nil {
		return err
	}
	opts := f.copyOptions()
	var items []upload.CopyItem
	for _, it := range plan {
		to := upload.URL{Bucket: it.dst.bucket, Object: it.dst.name}
		if f.allVersions {
			// Every generation, in order; each result went to j.add as it ended.
			if results, err := j.client.CopyVersions(ctx, it.src.lib(), to, opts); results == nil && err != nil {
				return err
			}
			continue
		}
		if it.prefix {
			results, err := j.client.CopyPrefix(ctx, it.src.lib(), to, opts)
			if results == nil && err != nil {
				return err
			}
			continue // each result went to j.add as it ended
		}
		items = append(items, upload.CopyItem{Src: it.src.lib(), Dst: to})
	}
	if len(items) > 0 {
		_, _ = j.client.CopyObjects(ctx, items, opts) // results: j.add, as they ended
	}
	return j.finish()
}
