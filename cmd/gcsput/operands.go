package main

import (
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/upload"
)

// remoteURL is a parsed gs://bucket/object operand; object may be "" (the bucket) or end
// in "/" (a folder).
type remoteURL struct {
	bucket, object string
}

func (u remoteURL) String() string { return "gs://" + u.bucket + "/" + u.object }

// isRemote reports whether an operand names GCS. Anything else is a local path or "-".
func isRemote(op string) bool { return strings.HasPrefix(op, "gs://") }

// checkTypo catches operands meant as gs:// URLs that are not ("gs:/b/o", "gs:b",
// "GS://b", "gcs://b") before they are taken for local paths, where "gs:/b/o" would be
// reported as a missing file. The upload package's parser knows the near misses and
// suggests the right spelling.
func checkTypo(op string) error {
	if isRemote(op) || !naming.IsURL(op) {
		return nil
	}
	_, err := upload.ParseURL(op)
	if err == nil {
		return nil
	}
	return usagef("%v", err)
}

// localSource is a checked local source operand.
type localSource struct {
	path  string
	isDir bool
	stdin bool // "-"
}

// checkLocalSource stats a local source so a typo is a usage error naming the path, and a
// directory without -r says how to copy it.
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
		return localSource{}, usagef("%s: no such file or directory", op)
	case errors.Is(err, fs.ErrPermission):
		return localSource{}, usagef("%s: permission denied", op)
	case err != nil:
		return localSource{}, usagef("%s: %v", op, err)
	case fi.IsDir() && !recursive:
		return localSource{}, usagef("%s is a directory: add -r to copy it and everything under it", op)
	case !fi.IsDir() && !fi.Mode().IsRegular():
		return localSource{}, usagef("%s is not a regular file (%s): pipe it to 'gcsput cp - gs://...' instead", op, fi.Mode().Type())
	}
	return localSource{path: op, isDir: fi.IsDir()}, nil
}

// isLocalDir reports whether a local destination is a directory: it exists as one, or its
// name ends with a separator (then it is created).
func isLocalDir(p string) bool {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(os.PathSeparator)) {
		return true
	}
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
