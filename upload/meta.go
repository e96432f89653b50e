package upload

import (
	"io/fs"
	"maps"
	"time"

	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/posix"
)

// Attrs is the object metadata an upload sets. The zero value uploads with a
// content type guessed from the name and no other metadata.
type Attrs struct {
	// ContentType is the MIME type. Empty: guessed from the object name's
	// extension (Go's mime table, extended by the system's), else
	// "application/octet-stream".
	ContentType string `json:"content_type,omitempty"`
	// CacheControl, ContentDisposition, ContentEncoding and ContentLanguage
	// are stored as given and served as the matching response headers.
	CacheControl       string `json:"cache_control,omitempty"`
	ContentDisposition string `json:"content_disposition,omitempty"`
	ContentEncoding    string `json:"content_encoding,omitempty"`
	ContentLanguage    string `json:"content_language,omitempty"`
	// Metadata is custom key/value metadata (x-goog-meta-*). A key whose
	// value is "" is left out, as Client.Update deletes such a key: "" means
	// "no such key" everywhere.
	Metadata map[string]string `json:"metadata,omitempty"`
	// StorageClass (e.g. "NEARLINE") and KMSKeyName override the bucket's
	// defaults when set.
	StorageClass string `json:"storage_class,omitempty"`
	KMSKeyName   string `json:"kms_key_name,omitempty"`
	// Holds are the holds and retention the object is written under
	// (none when zero).
	Holds
	// CustomTime is the object's customTime, a date of the user's that
	// lifecycle rules (daysSinceCustomTime) read; zero: not set.
	CustomTime time.Time `json:"custom_time,omitzero"`
}

// withDefaults returns a copy with the content type filled in for object and,
// when fi is not nil, the POSIX attributes added to Metadata.
func (a Attrs) withDefaults(object string, fi fs.FileInfo) Attrs {
	if a.ContentType == "" {
		a.ContentType = naming.ContentType(object)
	}
	if fi != nil {
		md := make(map[string]string, len(a.Metadata)+2)
		maps.Copy(md, a.Metadata)
		maps.Copy(md, posix.Metadata(fi))
		a.Metadata = md
	}
	return a
}

// nonEmpty is m without its empty values (nil when none is left): on a new
// object, "" means the key is absent, as it does in Update.
func nonEmpty(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if v == "" {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(m))
		}
		out[k] = v
	}
	return out
}
