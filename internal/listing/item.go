package listing

import (
	"encoding/base64"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/resumable"
)

// Item is an object's metadata as 'gcsput stat --json' and 'gcsput ls --json'
// print it, one JSON object each. The field names are a promise to scripts:
// add fields, never rename them.
type Item struct {
	URL                string            `json:"url"`
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name,omitempty"`
	Prefix             string            `json:"prefix,omitempty"` // ls: a folder
	Size               int64             `json:"size"`
	ContentType        string            `json:"content_type,omitempty"`
	CacheControl       string            `json:"cache_control,omitempty"`
	ContentDisposition string            `json:"content_disposition,omitempty"`
	ContentEncoding    string            `json:"content_encoding,omitempty"`
	ContentLanguage    string            `json:"content_language,omitempty"`
	StorageClass       string            `json:"storage_class,omitempty"`
	CRC32C             string            `json:"crc32c,omitempty"`
	MD5                string            `json:"md5,omitempty"`
	Generation         int64             `json:"generation,omitempty"`
	Metageneration     int64             `json:"metageneration,omitempty"`
	Created            *time.Time        `json:"created,omitempty"`
	Updated            *time.Time        `json:"updated,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	// EncryptionKeySHA256 is the SHA256 of the customer-supplied key the object was
	// written with (its hashes are shown only when that key is given); KMSKeyName its
	// Cloud KMS key.
	EncryptionKeySHA256 string `json:"encryption_key_sha256,omitempty"`
	KMSKeyName          string `json:"kms_key_name,omitempty"`
	// TemporaryHold, EventBasedHold and the retention (mode, until) keep the object from
	// deletion and overwrite.
	TemporaryHold  bool       `json:"temporary_hold,omitempty"`
	EventBasedHold bool       `json:"event_based_hold,omitempty"`
	RetentionMode  string     `json:"retention_mode,omitempty"`
	RetainUntil    *time.Time `json:"retain_until,omitempty"`
	// Noncurrent and soft-deleted generations (ls -a, ls --soft-deleted).
	Deleted        *time.Time `json:"time_deleted,omitempty"`
	SoftDeleteTime *time.Time `json:"soft_delete_time,omitempty"`
	HardDeleteTime *time.Time `json:"hard_delete_time,omitempty"`
}

// ItemOf is the Item of an object, or of a folder (Prefix set).
func ItemOf(a *storage.ObjectAttrs) Item {
	if a.Prefix != "" {
		return Item{URL: "gs://" + a.Bucket + "/" + a.Prefix, Bucket: a.Bucket, Prefix: a.Prefix}
	}
	o := Item{
		URL: "gs://" + a.Bucket + "/" + a.Name, Bucket: a.Bucket, Name: a.Name, Size: a.Size,
		ContentType: a.ContentType, CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, StorageClass: a.StorageClass,
		CRC32C: resumable.EncodeCRC32C(a.CRC32C), Generation: a.Generation, Metageneration: a.Metageneration,
		Metadata: a.Metadata,
	}
	if len(a.MD5) > 0 {
		o.MD5 = base64.StdEncoding.EncodeToString(a.MD5)
	}
	o.EncryptionKeySHA256, o.KMSKeyName = a.CustomerKeySHA256, a.KMSKeyName
	if a.CustomerKeySHA256 != "" && a.CRC32C == 0 && len(a.MD5) == 0 {
		o.CRC32C = "" // GCS shows a CSEK object's hashes only to a request with its key
	}
	if !a.Deleted.IsZero() {
		o.Deleted = &a.Deleted
	}
	if !a.SoftDeleteTime.IsZero() {
		o.SoftDeleteTime, o.HardDeleteTime = &a.SoftDeleteTime, &a.HardDeleteTime
	}
	if !a.Created.IsZero() {
		o.Created = &a.Created
	}
	if !a.Updated.IsZero() {
		o.Updated = &a.Updated
	}
	o.TemporaryHold, o.EventBasedHold = a.TemporaryHold, a.EventBasedHold
	if r := a.Retention; r != nil && !r.RetainUntil.IsZero() {
		o.RetentionMode, o.RetainUntil = r.Mode, &r.RetainUntil
	}
	return o
}
