package main

import (
	"context"
	"strings"
)

// uploadItem is one local source and where it goes: an object for a file or a stream, a
// prefix ("" or ending in "/") for a directory.
type uploadItem struct {
	src localSource
	dst remoteDst
}

// downloadItem is one remote source and where it goes: a local file (or "-") for an
// object, a local directory for a prefix (-r).
type downloadItem struct {
	src    remoteURL
	prefix bool   // everything under src.object (a folder name ending in "/", or "" for the bucket)
	dst    string // local file, directory, or "-" for stdout
}

// prefixProbe says whether any object exists under gs://bucket/prefix (prefix ends in
// "/"): gsutil's test for "is this destination an existing folder".
type prefixProbe func(ctx context.Context, bucket, prefix string) (bool, error)

// planUpload checks the local sources and names their destinations. It makes no request:
// the names depend on the command line alone (see naming.go).
func planUpload(srcs []string, dst remoteURL, recursive bool) ([]uploadItem, error) {
	items := make([]uploadItem, 0, len(srcs))
	for _, op := range srcs {
		if isRemote(op) {
			return nil, usagef("%s -> %s: cannot mix local and gs:// sources in one cp: run one cp for each kind", op, dst)
		}
		src, err := checkLocalSource(op, recursive)
		if err != nil {
			return nil, err
		}
		if src.stdin && len(srcs) > 1 {
			return nil, usagef("\"-\" (standard input) must be the only source")
		}
		items = append(items, uploadItem{src: src})
	}
	container := isContainerSyntax(dst) || len(srcs) > 1
	for i := range items {
		it := &items[i]
		if it.src.stdin {
			if container {
				return nil, usagef("%s is a folder: name the object to write standard input to, e.g. %s", dst, dst.String()+"stdin.bin")
			}
			it.dst = remoteDst{dst.bucket, dst.object}
			continue
		}
		it.dst = uploadTarget(it.src.path, it.src.isDir, dst, container)
	}
	return items, nil
}

// planDownload checks remote sources against a local destination and names the targets.
// With -r, a name without a trailing slash is a folder when objects exist under "name/"
// (the probe), else the object itself, as gsutil decides.
func planDownload(ctx context.Context, srcs []string, dst string, recursive bool, parse func(string) (remoteURL, error), probe prefixProbe) ([]downloadItem, error) {
	if dst == "-" && (len(srcs) > 1 || recursive) {
		return nil, usagef("standard output (\"-\") takes exactly one object, without -r")
	}
	// A folder's destination is a container by its form alone, so that a rerun, which finds
	// the directory the first run made, resolves the same names; a single object goes
	// inside an existing directory.
	dstIsDir := dst != "-" && (len(srcs) > 1 || isLocalContainerSyntax(dst))
	items := make([]downloadItem, 0, len(srcs))
	for _, op := range srcs {
		if !isRemote(op) {
			if len(srcs) == 1 {
				return nil, usagef("neither %s nor %s is a gs:// URL: one side of cp must be GCS", op, dst)
			}
			return nil, usagef("%s: with a local destination every source must be a gs:// URL", op)
		}
		u, err := parse(op)
		if err != nil {
			return nil, err
		}
		src, folder, err := remoteSource(ctx, op, u, recursive, probe, "download")
		if err != nil {
			return nil, err
		}
		it := downloadItem{src: src, prefix: folder}
		inside := dstIsDir || !it.prefix && dst != "-" && isLocalDir(dst)
		if it.dst = downloadTarget(u, it.prefix, dst, inside); it.dst == "-" && it.prefix {
			return nil, usagef("standard output (\"-\") takes exactly one object, not the folder %s", op)
		}
		items = append(items, it)
	}
	return items, nil
}

// remoteSource reads the gs:// source op (parsed as u) of a copy or a
// download: a bucket or folder ("name/") needs -r to verb everything under
// it; with -r a name without a trailing slash is a folder when objects exist
// under "name/" (the probe), and comes back as that folder.
func remoteSource(ctx context.Context, op string, u remoteURL, recursive bool, probe prefixProbe, verb string) (remoteURL, bool, error) {
	folder := u.object == "" || strings.HasSuffix(u.object, "/")
	if folder && !recursive {
		return u, false, usagef("%s is a bucket or folder: add -r to %s everything under it", op, verb)
	}
	if recursive && !folder && probe != nil {
		has, err := probe(ctx, u.bucket, u.object+"/")
		if err != nil {
			return u, false, err
		}
		if has {
			u.object, folder = u.object+"/", true
		}
	}
	return u, folder, nil
}
