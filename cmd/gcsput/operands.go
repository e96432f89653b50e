package main

import (
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/upload"
)

// checkTypo catches operands meant as gs:// URLs that are not ("gs:/b/o", "gs:b",
// "GS://b", "gcs://b") before they are taken for local paths, where "gs:/b/o" would be
// reported as a missing file. The upload package's parser knows the near misses and
// suggests the right spelling.
func checkTypo(op string) error {
	if naming.IsRemote(op) || !naming.IsURL(op) {
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
func parseRemote(op string) (upload.URL, error) {
	u, err := upload.ParseURL(op)
	if err != nil {
		return upload.URL{}, usagef("%v", err)
	}
	return u, nil
}
