// Package gzmeta reads and writes the custom metadata with which gcsput
// describes the content of an object stored gzip-encoded (gsutil's and
// gcsput's -z, -Z): its size and CRC32C once decompressed, which the
// object's own size and CRC32C (those of the compressed bytes) do not give.
package gzmeta

import (
	"strconv"
	"strings"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/resumable"
)

// The custom metadata keys under which an object stored gzip-encoded keeps
// the size and CRC32C of its content once decompressed: the bytes of the
// file it was made from. gcsput's -z and -Z write them; sync and
// SkipUnchanged compare a local file with them, since the object's own size
// and CRC32C describe the compressed bytes.
const (
	// DecodedSizeKey holds the decompressed size in bytes, in decimal.
	DecodedSizeKey = "gcsput-decoded-size"
	// DecodedCRC32CKey holds the decompressed bytes' CRC32C, base64 as GCS
	// shows a crc32c.
	DecodedCRC32CKey = "gcsput-decoded-crc32c"
)

// IsGzip reports a stored Content-Encoding that a download with
// upload.DownloadOptions.Decompress undoes.
func IsGzip(encoding string) bool { return strings.EqualFold(strings.TrimSpace(encoding), "gzip") }

// DecodedMetadata returns the metadata that describes content (its size
// and CRC32C) as the decompressed content of an object stored gzip-encoded.
func DecodedMetadata(size int64, crc uint32) map[string]string {
	return map[string]string{DecodedSizeKey: strconv.FormatInt(size, 10), DecodedCRC32CKey: resumable.EncodeCRC32C(crc)}
}

// Decoded returns the size and CRC32C of an object's content as a download
// with upload.DownloadOptions.Decompress writes it: the stored ones for an object that is not
// gzip-encoded, those of DecodedMetadata for one that is; ok is false for a
// gzip-encoded object without them (uploaded by another tool), whose
// content is known only by downloading it.
func Decoded(attrs *storage.ObjectAttrs) (size int64, crc uint32, ok bool) {
	if !IsGzip(attrs.ContentEncoding) {
		return attrs.Size, attrs.CRC32C, true
	}
	size, err := strconv.ParseInt(attrs.Metadata[DecodedSizeKey], 10, 64)
	if err != nil || size < 0 {
		return 0, 0, false
	}
	crc, err = resumable.DecodeCRC32C(attrs.Metadata[DecodedCRC32CKey])
	if err != nil {
		return 0, 0, false
	}
	return size, crc, true
}
