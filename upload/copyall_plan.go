package upload

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/gcsput/gcsput/internal/naming"
)

// Destination naming of CopyAll and MoveAll. It follows gsutil and gcloud
// storage cp, with one difference: whether a destination is a container is
// decided by how it is written, never by what exists there. gsutil also
// looks for objects under "NAME/" (or an existing local directory), so an
// interrupted `cp -r dir gs://b/p` rerun finds p/ full and nests the tree as
// p/dir/...; and shards of one job starting at different times would
// disagree. Here a run, its rerun and every shard resolve the same names.
//
//   - A destination is a container when it is a bucket or ends with "/"
//     (locally: ends with a separator, or is "." or ".."); several sources
//     always need a container. A single object downloaded to an existing
//     local directory goes inside it (the result is a file, so a rerun
//     resolves it the same way).
//   - A single file (or stream) copied to a non-container gets exactly the
//     destination name.
//   - A file copied into a container keeps its base name: gs://b/dir/FILE.
//   - A directory (or prefix) copied recursively into a container keeps its
//     own name: photos to gs://b/ gives gs://b/photos/...; into a
//     non-container it takes the destination's name: photos to gs://b/pics
//     gives gs://b/pics/..., whatever is already under gs://b/pics/ (what
//     Linux cp -r does when pics does not exist yet).

// ErrBadOperand is matched (errors.Is) by the errors of [Client.CopyAll] and
// [Client.MoveAll] that say an operand cannot work as given (a missing file,
// a directory without Recursive, two sources landing on one name), found
// before anything was transferred. Their text names the operand and the fix.
var ErrBadOperand = errors.New("bad operand")

// ErrRefused is matched by the error of a batch of [Client.CopyAll] or
// [Client.MoveAll] that the server refused before its first transfer: a
// bucket that does not exist, credentials that may not write (or list)
// there. Nothing was transferred.
var ErrRefused = errors.New("refused before the first transfer")

// operandError is an ErrBadOperand or ErrRefused error: its text is the whole message.
type operandError struct {
	msg   string
	kind  error
	cause error // a parse error it stands for (ErrBadName), or nil
}

func (e *operandError) Error() string        { return e.msg }
func (e *operandError) Is(target error) bool { return target == e.kind }
func (e *operandError) Unwrap() error        { return e.cause }

func badOperand(format string, args ...any) error {
	return &operandError{msg: fmt.Sprintf(format, args...), kind: ErrBadOperand}
}

func refusedf(format string, args ...any) error {
	return &operandError{msg: fmt.Sprintf(format, args...), kind: ErrRefused}
}

// parseOperand parses a gs:// operand; a bad name is an ErrBadOperand (and
// ErrBadName) error that says what is wrong.
func parseOperand(op string) (URL, error) {
	u, err := ParseURL(op)
	if err != nil {
		return URL{}, &operandError{msg: err.Error(), kind: ErrBadOperand, cause: err}
	}
	return u, nil
}

// checkTypo catches operands meant as gs:// URLs that are not ("gs:/b/o",
// "gs:b", "GS://b", "gcs://b") before they are taken for local paths, where
// "gs:/b/o" would be reported as a missing file.
func checkTypo(op string) error {
	if naming.IsRemote(op) || !naming.IsURL(op) {
		return nil
	}
	if _, err := ParseURL(op); err != nil {
		return &operandError{msg: err.Error(), kind: ErrBadOperand, cause: err}
	}
	return nil
}

// localSource is a checked local source operand.
type localSource struct {
	path  string
	isDir bool
	stdin bool // "-"
}

// checkLocalSource stats a local source so a typo is an error naming the
// path, and a directory without Recursive says how to copy it.
func checkLocalSource(op string, recursive bool) (localSource, error) {
	if op == "-" {
		return localSource{path: "-", stdin: true}, nil
	}
	if err := checkTypo(op); err != nil {
		return localSource{}, err
	}
	fi, err := os.Stat(op)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return localSource{}, badOperand("%s: no such file or directory", op)
	case errors.Is(err, fs.ErrPermission):
		return localSource{}, badOperand("%s: permission denied", op)
	case err != nil:
		return localSource{}, badOperand("%s: %v", op, err)
	case fi.IsDir() && !recursive:
		return localSource{}, badOperand("%s is a directory: add -r to copy it and everything under it", op)
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return localSource{}, badOperand("%s is not a regular file (%s): pipe it to 'gcsput cp - gs://...' instead", op, fi.Mode().Type())
	}
	return localSource{path: op, isDir: fi.IsDir()}, nil
}

// isLocalDir reports whether a local destination is a directory: it exists
// as one, or its name ends with a separator (then it is created).
func isLocalDir(p string) bool {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(os.PathSeparator)) {
		return true
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// upItem is one local source and where it goes: an object for a file or a
// stream, a prefix ("" or ending in "/") for a directory.
type upItem struct {
	src localSource
	dst URL
}

// downItem is one remote source and where it goes: a local file (or "-")
// for an object, a local directory for a prefix.
type downItem struct {
	src    URL
	prefix bool   // everything under src.Object (a folder name ending in "/", or "" for the bucket)
	dst    string // local file, directory, or "-" for stdout
}

// copyItem is one gs:// source copied on the server and where it goes: an
// object, or a prefix ("" or ending in "/") for a folder.
type copyItem struct {
	src    URL
	prefix bool
	dst    URL
}

// prefixProbe says whether any object exists under gs://bucket/prefix
// (prefix ends in "/"): gsutil's test for "is this an existing folder".
type prefixProbe func(ctx context.Context, bucket, prefix string) (bool, error)

// probe asks whether any object exists under gs://bucket/prefix: one listing request.
func (c *Client) probe(ctx context.Context, bucket, prefix string) (bool, error) {
	for _, err := range c.List(ctx, bucket, prefix, "/") {
		if err != nil {
			return false, fmt.Errorf("gs://%s/%s: %w", bucket, prefix, err)
		}
		return true, nil
	}
	return false, nil
}

// planUpload checks the local sources and names their destinations. It
// makes no request: the names depend on the operands alone.
func planUpload(srcs []string, dst URL, recursive bool) ([]upItem, error) {
	items := make([]upItem, 0, len(srcs))
	for _, op := range srcs {
		if naming.IsRemote(op) {
			return nil, badOperand("%s -> %s: cannot mix local and gs:// sources in one cp: run one cp for each kind", op, dst)
		}
		src, err := checkLocalSource(op, recursive)
		if err != nil {
			return nil, err
		}
		if src.stdin && len(srcs) > 1 {
			return nil, badOperand("\"-\" (standard input) must be the only source")
		}
		items = append(items, upItem{src: src})
	}
	container := isContainerSyntax(dst) || len(srcs) > 1
	for i := range items {
		it := &items[i]
		if it.src.stdin {
			if container {
				return nil, badOperand("%s is a folder: name the object to write standard input to, e.g. %s", dst, dst.String()+"stdin.bin")
			}
			it.dst = dst
			continue
		}
		it.dst = uploadTarget(it.src.path, it.src.isDir, dst, container)
	}
	return items, nil
}

// planDownload checks remote sources against a local destination and names
// the targets. Recursive, a name without a trailing slash is a folder when
// objects exist under "name/" (the probe), else the object itself, as
// gsutil decides.
func planDownload(ctx context.Context, srcs []string, dst string, recursive bool, probe prefixProbe) ([]downItem, error) {
	if dst == "-" && (len(srcs) > 1 || recursive) {
		return nil, badOperand("standard output (\"-\") takes exactly one object, without -r")
	}
	// A folder's destination is a container by its form alone, so that a
	// rerun, which finds the directory the first run made, resolves the same
	// names; a single object goes inside an existing directory.
	dstIsDir := dst != "-" && (len(srcs) > 1 || isLocalContainerSyntax(dst))
	items := make([]downItem, 0, len(srcs))
	for _, op := range srcs {
		if !naming.IsRemote(op) {
			if len(srcs) == 1 {
				return nil, badOperand("neither %s nor %s is a gs:// URL: one side of cp must be GCS", op, dst)
			}
			return nil, badOperand("%s: with a local destination every source must be a gs:// URL", op)
		}
		u, err := parseOperand(op)
		if err != nil {
			return nil, err
		}
		src, folder, err := remoteSource(ctx, op, u, recursive, probe, "download")
		if err != nil {
			return nil, err
		}
		it := downItem{src: src, prefix: folder}
		inside := dstIsDir || !it.prefix && dst != "-" && isLocalDir(dst)
		if it.dst = downloadTarget(u, it.prefix, dst, inside); it.dst == "-" && it.prefix {
			return nil, badOperand("standard output (\"-\") takes exactly one object, not the folder %s", op)
		}
		items = append(items, it)
	}
	return items, nil
}

// planCopy checks gs:// sources against a gs:// destination and names the
// targets: a folder copied into a container keeps its name, into a
// non-container takes the destination's.
func planCopy(ctx context.Context, srcs []string, dst URL, recursive bool, probe prefixProbe) ([]copyItem, error) {
	container := isContainerSyntax(dst) || len(srcs) > 1
	items := make([]copyItem, 0, len(srcs))
	for _, op := range srcs {
		if !naming.IsRemote(op) {
			return nil, badOperand("%s -> %s: cannot mix local and gs:// sources in one cp: run one cp for each kind", op, dst)
		}
		u, err := parseOperand(op)
		if err != nil {
			return nil, err
		}
		src, folder, err := remoteSource(ctx, op, u, recursive, probe, "copy")
		if err != nil {
			return nil, err
		}
		items = append(items, copyItem{src: src, prefix: folder, dst: copyTarget(src, folder, dst, container)})
	}
	return items, nil
}

// remoteSource reads the gs:// source op (parsed as u) of a copy or a
// download: a bucket or folder ("name/") needs Recursive to verb everything
// under it; recursive, a name without a trailing slash is a folder when
// objects exist under "name/" (the probe), and comes back as that folder.
func remoteSource(ctx context.Context, op string, u URL, recursive bool, probe prefixProbe, verb string) (URL, bool, error) {
	folder := isContainerSyntax(u)
	if folder && !recursive {
		return u, false, badOperand("%s is a bucket or folder: add -r to %s everything under it", op, verb)
	}
	if recursive && !folder && probe != nil {
		has, err := probe(ctx, u.Bucket, u.Object+"/")
		if err != nil {
			return u, false, err
		}
		if has {
			u.Object, folder = u.Object+"/", true
		}
	}
	return u, folder, nil
}

// uploadTarget names the object (file) or prefix (dir) for one local source.
func uploadTarget(src string, srcIsDir bool, dst URL, dstIsContainer bool) URL {
	base := filepath.Base(filepath.Clean(src))
	if !dstIsContainer {
		if srcIsDir {
			return URL{dst.Bucket, dst.Object + "/"}
		}
		return dst
	}
	prefix := naming.Folder(dst.Object)
	if srcIsDir {
		if base == "." || base == "/" || base == ".." {
			// "cp -r . gs://b/x/" copies the contents: "." has no name to keep.
			return URL{dst.Bucket, prefix}
		}
		return URL{dst.Bucket, prefix + filepath.ToSlash(base) + "/"}
	}
	return URL{dst.Bucket, prefix + base}
}

// downloadTarget names the local file (object) or directory (prefix) for
// one remote source. dstIsDir is true when the local destination exists as
// a directory or ends with a path separator, or several sources are copied.
func downloadTarget(src URL, recursive bool, dst string, dstIsDir bool) string {
	name := strings.TrimSuffix(src.Object, "/")
	base := path.Base(name)
	if name == "" {
		base = src.Bucket
	}
	if !dstIsDir {
		return dst
	}
	if recursive && name == "" {
		return dst // a whole bucket lands as its contents, as gsutil does
	}
	return filepath.Join(dst, filepath.FromSlash(base))
}

// copyTarget names the object (object) or prefix (folder) one gs:// source is copied to.
func copyTarget(src URL, prefix bool, dst URL, container bool) URL {
	name := strings.TrimSuffix(src.Object, "/")
	if !container {
		if prefix {
			return URL{dst.Bucket, naming.Folder(dst.Object)}
		}
		return dst
	}
	p := naming.Folder(dst.Object)
	switch {
	case prefix && name == "":
		return URL{dst.Bucket, p} // a whole bucket lands as its contents
	case prefix:
		return URL{dst.Bucket, p + path.Base(name) + "/"}
	}
	return URL{dst.Bucket, p + path.Base(name)}
}

// isLocalContainerSyntax reports whether a local destination names a
// directory by its form alone: it ends with a separator, or is "." or "..".
func isLocalContainerSyntax(p string) bool {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator)) {
		return true
	}
	b := filepath.Base(p)
	return b == "." || b == ".."
}

// isContainerSyntax reports whether a remote destination names a container
// by its form alone: a bucket or a name ending in "/".
func isContainerSyntax(u URL) bool {
	return u.Object == "" || strings.HasSuffix(u.Object, "/")
}

// checkUploadCollisions refuses a plan in which two sources would land on
// one object or prefix: "**" flattens, and a.txt and sub/a.txt both become
// DST/a.txt. Nothing is sent.
func checkUploadCollisions(plan []upItem) error {
	seen := map[string]string{}
	for _, it := range plan {
		key := it.dst.Bucket + "/" + it.dst.Object
		if prev, ok := seen[key]; ok {
			return badOperand("%s and %s would both be copied to gs://%s: copy them in two commands, or name the folders (cp -r)",
				prev, it.src.path, key)
		}
		seen[key] = it.src.path
	}
	return nil
}

// checkDownloadCollisions refuses a download plan in which two wildcard
// matches would land on one local path, or one needs the other's path as a
// directory: "**" flattens, so docs/a.txt and docs/old/a.txt both become
// DST/a.txt, and recursive, a matched folder old/ and an object old both
// want DST/old. Left to the download, the first match would be written and
// only the second would fail.
func checkDownloadCollisions(plan []downItem) error {
	seen := make(map[string]downItem, len(plan))
	for _, it := range plan {
		key := filepath.Clean(it.dst)
		if prev, ok := seen[key]; ok {
			return downloadCollision(prev, it, key)
		}
		seen[key] = it
	}
	for key, it := range seen {
		for d := filepath.Dir(key); d != filepath.Dir(d); d = filepath.Dir(d) {
			if prev, ok := seen[d]; ok {
				return downloadCollision(prev, it, d)
			}
		}
	}
	return nil
}

func downloadCollision(a, b downItem, path string) error {
	return badOperand("%s and %s would both be downloaded to %s: copy them in two commands, or into separate directories",
		a.src, b.src, path)
}

// checkCopyCollisions refuses a copy plan in which two sources would land on
// one object or prefix ("**" flattens): the second would overwrite the first.
func checkCopyCollisions(plan []copyItem) error {
	seen := map[URL]URL{}
	for _, it := range plan {
		if prev, ok := seen[it.dst]; ok {
			return badOperand("%s and %s would both be copied to %s: copy them in two commands, or name the folders (cp -r)",
				prev, it.src, it.dst)
		}
		seen[it.dst] = it.src
	}
	return nil
}
