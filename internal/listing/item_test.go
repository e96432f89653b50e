package listing

import (
	"testing"

	"cloud.google.com/go/storage"
)

// ItemOf writes a folder as its prefix, and hides the hashes GCS withholds
// from a request without a CSEK object's key (zero, not "AAAAAA==").
func TestItemOf(t *testing.T) {
	if it := ItemOf(&storage.ObjectAttrs{Bucket: "b", Prefix: "d/"}); it.URL != "gs://b/d/" || it.Prefix != "d/" || it.Name != "" {
		t.Errorf("folder: %+v", it)
	}
	it := ItemOf(&storage.ObjectAttrs{Bucket: "b", Name: "o", Size: 3, CRC32C: 1, MD5: []byte{1, 2}, Generation: 7})
	if it.URL != "gs://b/o" || it.CRC32C != "AAAAAQ==" || it.MD5 != "AQI=" || it.Generation != 7 || it.Created != nil {
		t.Errorf("object: %+v", it)
	}
	if it := ItemOf(&storage.ObjectAttrs{Bucket: "b", Name: "o", CustomerKeySHA256: "k"}); it.CRC32C != "" || it.EncryptionKeySHA256 != "k" {
		t.Errorf("CSEK object read without its key: %+v", it)
	}
}
