package main

import (
	"path"
	"path/filepath"
	"strings"
)

// Destination naming, as gsutil and gcloud storage cp do it:
//
//   - A destination is a container when it is a bucket, ends with "/", or already holds
//     objects under "NAME/" (for local paths: is an existing directory); several sources
//     always need a container.
//   - A single file (or stream) copied to a non-container gets exactly the destination name.
//   - A file copied into a container keeps its base name: gs://b/dir/FILE.
//   - A directory (or prefix) copied recursively into a container keeps its own name:
//     cp -r photos gs://b/ gives gs://b/photos/...; into a non-container it takes the
//     destination's name: cp -r photos gs://b/pics gives gs://b/pics/... (what Linux cp -r
//     does when pics does not exist yet).

// remoteDst is where a local source goes: an object, or a prefix ending in "/" (or "" for
// the bucket root) when the source is a directory.
type remoteDst struct {
	bucket, name string
}

// uploadTarget names the object (file) or prefix (dir) for one local source.
// dstIsContainer is the caller's verdict on the destination (bucket, trailing slash,
// existing prefix, several sources).
func uploadTarget(src string, srcIsDir bool, dst remoteURL, dstIsContainer bool) remoteDst {
	base := filepath.Base(filepath.Clean(src))
	if !dstIsContainer {
		if srcIsDir {
			return remoteDst{dst.bucket, dst.object + "/"}
		}
		return remoteDst{dst.bucket, dst.object}
	}
	prefix := dst.object
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if srcIsDir {
		if base == "." || base == "/" || base == ".." {
			// "cp -r . gs://b/x/" copies the contents: "." has no name to keep.
			return remoteDst{dst.bucket, prefix}
		}
		return remoteDst{dst.bucket, prefix + filepath.ToSlash(base) + "/"}
	}
	return remoteDst{dst.bucket, prefix + base}
}

// downloadTarget names the local file (object) or directory (prefix) for one remote source.
// dstIsDir is true when the local destination exists as a directory or ends with a path
// separator, or several sources are copied.
func downloadTarget(src remoteURL, recursive bool, dst string, dstIsDir bool) string {
	name := strings.TrimSuffix(src.object, "/")
	base := path.Base(name)
	if name == "" {
		base = src.bucket
	}
	if !dstIsDir {
		return dst
	}
	if recursive && name == "" {
		// A whole bucket lands as its contents, as gsutil does.
		return dst
	}
	return filepath.Join(dst, filepath.FromSlash(base))
}

// isContainerSyntax reports whether a remote destination names a container by its form
// alone: a bucket or a name ending in "/".
func isContainerSyntax(u remoteURL) bool {
	return u.object == "" || strings.HasSuffix(u.object, "/")
}
