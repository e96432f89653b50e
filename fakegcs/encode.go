package fakegcs

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"time"

	raw "google.golang.org/api/storage/v1"
)

const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeFormat) }

// etag is an opaque value that changes with generation and metageneration.
func etag(gen, meta int64) string {
	return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("%d/%d", gen, meta)))
}

// objectResource is the JSON API's Object resource as fakegcs sends it.
// It mirrors the fields of raw.Object that fakegcs fills, without that
// type's MarshalJSON (which goes through a map per object and cost fakegcs
// 40% of its time per small upload). Numbers GCS sends as strings are
// strings; size is always sent, as GCS does for empty objects.
type objectResource struct {
	Kind                    string                   `json:"kind"`
	Id                      string                   `json:"id"`
	SelfLink                string                   `json:"selfLink"`
	MediaLink               string                   `json:"mediaLink"`
	Name                    string                   `json:"name"`
	Bucket                  string                   `json:"bucket"`
	Generation              int64                    `json:"generation,string"`
	Metageneration          int64                    `json:"metageneration,string"`
	ContentType             string                   `json:"contentType,omitempty"`
	ContentEncoding         string                   `json:"contentEncoding,omitempty"`
	ContentDisposition      string                   `json:"contentDisposition,omitempty"`
	ContentLanguage         string                   `json:"contentLanguage,omitempty"`
	CacheControl            string                   `json:"cacheControl,omitempty"`
	StorageClass            string                   `json:"storageClass,omitempty"`
	Size                    uint64                   `json:"size,string"`
	Md5Hash                 string                   `json:"md5Hash,omitempty"`
	Crc32c                  string                   `json:"crc32c,omitempty"` // "" only for a CSEK object read without its key
	Etag                    string                   `json:"etag"`
	TimeCreated             string                   `json:"timeCreated"`
	Updated                 string                   `json:"updated"`
	TimeStorageClassUpdated string                   `json:"timeStorageClassUpdated"`
	Metadata                map[string]string        `json:"metadata,omitempty"`
	CustomTime              string                   `json:"customTime,omitempty"`
	ComponentCount          int64                    `json:"componentCount,omitempty"`
	CustomerEncryption      *customerEncryption      `json:"customerEncryption,omitempty"`
	KmsKeyName              string                   `json:"kmsKeyName,omitempty"`
	TemporaryHold           bool                     `json:"temporaryHold,omitempty"`
	EventBasedHold          bool                     `json:"eventBasedHold,omitempty"`
	Retention               *objectRetentionResource `json:"retention,omitempty"`
	TimeDeleted             string                   `json:"timeDeleted,omitempty"`
	SoftDeleteTime          string                   `json:"softDeleteTime,omitempty"`
	HardDeleteTime          string                   `json:"hardDeleteTime,omitempty"`
}

// objectList is the JSON API's Objects resource (a list page).
type objectList struct {
	Kind          string            `json:"kind"`
	NextPageToken string            `json:"nextPageToken,omitempty"`
	Prefixes      []string          `json:"prefixes,omitempty"`
	Items         []*objectResource `json:"items"`
}

// rewriteResponse is the JSON API's RewriteResponse: a resource when done,
// a token to continue with otherwise.
type rewriteResponse struct {
	Kind                string          `json:"kind"`
	Done                bool            `json:"done"`
	ObjectSize          int64           `json:"objectSize,string"`
	TotalBytesRewritten int64           `json:"totalBytesRewritten,string"`
	RewriteToken        string          `json:"rewriteToken,omitempty"`
	Resource            *objectResource `json:"resource,omitempty"`
}

// rawObject shapes attrs as the JSON API's Object resource; base is the
// scheme and host links point at.
func rawObject(a ObjectAttrs, base string) *objectResource {
	esc := url.PathEscape(a.Name)
	gen := strconv.FormatInt(a.Generation, 10)
	o := &objectResource{
		Kind:                    "storage#object",
		Id:                      a.Bucket + "/" + a.Name + "/" + gen,
		SelfLink:                base + "/storage/v1/b/" + url.PathEscape(a.Bucket) + "/o/" + esc,
		MediaLink:               base + "/download/storage/v1/b/" + url.PathEscape(a.Bucket) + "/o/" + esc + "?generation=" + gen + "&alt=media",
		Name:                    a.Name,
		Bucket:                  a.Bucket,
		Generation:              a.Generation,
		Metageneration:          a.Metageneration,
		ContentType:             a.ContentType,
		ContentEncoding:         a.ContentEncoding,
		ContentDisposition:      a.ContentDisposition,
		ContentLanguage:         a.ContentLanguage,
		CacheControl:            a.CacheControl,
		StorageClass:            a.StorageClass,
		Size:                    uint64(a.Size),
		Crc32c:                  encodeCRC(a.CRC32C),
		Etag:                    etag(a.Generation, a.Metageneration),
		TimeCreated:             formatTime(a.Created),
		Updated:                 formatTime(a.Updated),
		TimeStorageClassUpdated: formatTime(a.Created),
		Metadata:                a.Metadata,
		CustomTime:              formatCustomTime(a.CustomTime),
		ComponentCount:          a.ComponentCount,
	}
	if a.MD5 != nil {
		o.Md5Hash = base64.StdEncoding.EncodeToString(a.MD5)
	}
	if a.CustomerKeySHA256 != "" {
		o.CustomerEncryption = &customerEncryption{EncryptionAlgorithm: "AES256", KeySha256: a.CustomerKeySHA256}
	}
	o.KmsKeyName = a.KMSKeyName
	o.TemporaryHold, o.EventBasedHold, o.Retention = a.TemporaryHold, a.EventBasedHold, retentionResource(a.Retention)
	if !a.Deleted.IsZero() {
		o.TimeDeleted = formatTime(a.Deleted)
	}
	if !a.SoftDeleteTime.IsZero() {
		o.SoftDeleteTime, o.HardDeleteTime = formatTime(a.SoftDeleteTime), formatTime(a.HardDeleteTime)
	}
	return o
}

func rawBucket(b *bucket, base string) *raw.Bucket {
	return &raw.Bucket{
		Kind:                  "storage#bucket",
		Id:                    b.name,
		Name:                  b.name,
		SelfLink:              base + "/storage/v1/b/" + url.PathEscape(b.name),
		ProjectNumber:         1,
		Location:              "US",
		LocationType:          "multi-region",
		StorageClass:          b.class(),
		TimeCreated:           formatTime(b.created),
		Updated:               formatTime(b.updated),
		Metageneration:        b.metageneration,
		Etag:                  etag(1, b.metageneration),
		DefaultEventBasedHold: b.defaultHold,
		HierarchicalNamespace: func() *raw.BucketHierarchicalNamespace {
			if !b.hns {
				return nil
			}
			return &raw.BucketHierarchicalNamespace{Enabled: true}
		}(),
		IamConfiguration: func() *raw.BucketIamConfiguration {
			if !b.hns {
				return nil
			}
			return &raw.BucketIamConfiguration{UniformBucketLevelAccess: &raw.BucketIamConfigurationUniformBucketLevelAccess{Enabled: true}}
		}(),
		ObjectRetention: func() *raw.BucketObjectRetention {
			if !b.objectRetention {
				return nil
			}
			return &raw.BucketObjectRetention{Mode: "Enabled"}
		}(),
		Billing:    &raw.BucketBilling{RequesterPays: b.requesterPays},
		Versioning: &raw.BucketVersioning{Enabled: b.versioning, ForceSendFields: []string{"Enabled"}},
		SoftDeletePolicy: &raw.BucketSoftDeletePolicy{RetentionDurationSeconds: int64(b.softDelete / time.Second),
			EffectiveTime: formatTime(b.softDeleteSince), ForceSendFields: []string{"RetentionDurationSeconds"}},
		RetentionPolicy: func() *raw.BucketRetentionPolicy {
			if b.retention == nil {
				return nil
			}
			return &raw.BucketRetentionPolicy{RetentionPeriod: b.retention.period,
				EffectiveTime: formatTime(b.retention.effective), IsLocked: b.retention.locked}
		}(),
	}
}

// attrsFromRaw takes the writable metadata of an Object resource (an insert
// or compose destination).
func attrsFromRaw(o *raw.Object) ObjectAttrs {
	if o == nil {
		return ObjectAttrs{}
	}
	return ObjectAttrs{
		Name:               o.Name,
		Bucket:             o.Bucket,
		ContentType:        o.ContentType,
		ContentEncoding:    o.ContentEncoding,
		ContentDisposition: o.ContentDisposition,
		ContentLanguage:    o.ContentLanguage,
		CacheControl:       o.CacheControl,
		StorageClass:       o.StorageClass,
		Metadata:           o.Metadata,
		TemporaryHold:      o.TemporaryHold,
		EventBasedHold:     o.EventBasedHold,
		Retention:          retentionFromRaw(o.Retention),
		CustomTime:         parseCustomTime(o.CustomTime),
	}
}

// parseCustomTime reads an object resource's customTime (RFC 3339); a value
// that is not one is taken as unset (GCS refuses it with 400: not modelled).
func parseCustomTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// formatCustomTime writes customTime as GCS shows it; "" when unset.
func formatCustomTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return formatTime(t)
}

// declaredHashes are the crc32c and md5Hash a client put in the metadata
// of an insert, to be checked against the content.
func declaredHashes(o *raw.Object) (wantHashes, *apiError) {
	var w wantHashes
	if o == nil {
		return w, nil
	}
	if o.Crc32c != "" {
		if err := w.set("crc32c", o.Crc32c); err != nil {
			return w, err
		}
	}
	if o.Md5Hash != "" {
		if err := w.set("md5", o.Md5Hash); err != nil {
			return w, err
		}
	}
	return w, nil
}
