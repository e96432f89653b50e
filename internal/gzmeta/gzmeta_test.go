package gzmeta

import (
	"testing"

	"cloud.google.com/go/storage"
)

// Decoded gives the stored size and CRC32C of an object that is not
// gzip-encoded, those of its metadata for one that is, and ok false for a
// gzip object another tool wrote (or whose metadata is damaged).
func TestDecoded(t *testing.T) {
	meta := DecodedMetadata(11, 0x01020304)
	if meta[DecodedSizeKey] != "11" || meta[DecodedCRC32CKey] != "AQIDBA==" {
		t.Fatalf("DecodedMetadata: %v", meta)
	}
	for _, tc := range []struct {
		name  string
		attrs storage.ObjectAttrs
		size  int64
		crc   uint32
		ok    bool
	}{
		{"plain", storage.ObjectAttrs{Size: 5, CRC32C: 7}, 5, 7, true},
		{"gzip with metadata", storage.ObjectAttrs{ContentEncoding: " GZIP ", Size: 5, CRC32C: 7, Metadata: meta}, 11, 0x01020304, true},
		{"gzip without", storage.ObjectAttrs{ContentEncoding: "gzip", Size: 5, CRC32C: 7}, 0, 0, false},
		{"negative size", storage.ObjectAttrs{ContentEncoding: "gzip", Metadata: map[string]string{DecodedSizeKey: "-1", DecodedCRC32CKey: "AQIDBA=="}}, 0, 0, false},
		{"bad crc", storage.ObjectAttrs{ContentEncoding: "gzip", Metadata: map[string]string{DecodedSizeKey: "3", DecodedCRC32CKey: "x"}}, 0, 0, false},
	} {
		size, crc, ok := Decoded(&tc.attrs)
		if size != tc.size || crc != tc.crc || ok != tc.ok {
			t.Errorf("%s: Decoded = %d, %#x, %v; want %d, %#x, %v", tc.name, size, crc, ok, tc.size, tc.crc, tc.ok)
		}
	}
	if IsGzip("br") || !IsGzip("Gzip") {
		t.Error("IsGzip")
	}
}
