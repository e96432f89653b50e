package main

import (
	"path"
	"path/filepath"
	"strings"
)

// Destination naming. It follows gsutil and gcloud storage cp, with one difference: whether
// a destination is a container is decided by how it is written, never by what exists there.
// gsutil also looks for objects under "NAME/" (or an existing local directory), so an
// interrupted `cp -r dir gs://b/p` rerun finds p/ full and nests the tree as p/dir/...; and
// shards of one job starting at different times would disagree. Here a run, its rerun and
// every shard resolve the same names.
//
//   - A destination is a container when it is a bucket or ends with "/" (locally: ends with
//     a separator, or is "." or ".."); several sources always need a container. A single
//     object downloaded to an existing local directory goes inside it (the result is a file,
//     so a rerun resolves it the same way).
//   - A single file (or stream) copied to a non-container gets exactly the destination name.
//   - A file copied into a container keeps its base name: gs://b/dir/FILE.
//   - A directory (or prefix) copied recursively into a container keeps its own name:
//     cp -r photos gs://b/ gives gs://b/photos/...; into a non-container it takes the
//     destination's name: cp -r photos gs://b/pics gives gs://b/pics/..., whatever is
//     already under gs://b/pics/ (what Linux cp -r does when pics does not exist yet).

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
	prefix := folderPrefix(dst.object)
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

// folderPrefix is name as a folder: "" (the bucket) or ending in "/".
func folderPrefix(name string) string {
	if name != "" && !strings.HasSuffix(name, "/") {
		return name + "/"
	}
	return name
}

// isLocalContainerSyntax reports whether a local destination names a directory by its
// form alone: it ends with a separator, or is "." or "..".
func isLocalContainerSyntax(p string) bool {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)) {
		return true
	}
	b := filepath.Base(p)
	return b == "." || b == ".."
}

// isContainerSyntax reports whether a remote destination names a container by its form
// alone: a bucket or a name ending in "/".
func isContainerSyntax(u remoteURL) bool {
	return u.object == "" || strings.HasSuffix(u.object, "/")
}
