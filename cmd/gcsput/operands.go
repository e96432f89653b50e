package main

import (
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

// parseRemote parses a gs:// operand with the upload package's parser, which validates
// the bucket and object names; a bad name is a usage error that says what is wrong.
func parseRemote(op string) (remoteURL, error) {
	u, err := upload.ParseURL(op)
	if err != nil {
		return remoteURL{}, usagef("%v", err)
	}
	return remoteURL{bucket: u.Bucket, object: u.Object}, nil
}

func (u remoteURL) lib() upload.URL { return upload.URL{Bucket: u.bucket, Object: u.object} }

// folderPrefix is name as a folder: "" (the bucket) or ending in "/".
func folderPrefix(name string) string {
	if name != "" && !strings.HasSuffix(name, "/") {
		return name + "/"
	}
	return name
}
