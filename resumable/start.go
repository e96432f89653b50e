package resumable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gcsput/gcsput/retry"

	storage "google.golang.org/api/storage/v1"
)

// ObjectSpec describes the object an upload creates: its name, the metadata
// sent in the initiation body, and the preconditions.
type ObjectSpec struct {
	Bucket string // required
	Name   string // required: the object name

	// Size is the object's length in bytes, or -1 when unknown (a stream:
	// the total is sent with the last chunk). 0 is an empty object. When
	// known it is sent as X-Upload-Content-Length and the server refuses
	// any other length.
	Size int64

	// Metadata stored with the object. Empty fields are not sent;
	// ContentType "" lets GCS default to application/octet-stream.
	ContentType        string
	CacheControl       string
	ContentDisposition string
	ContentEncoding    string // e.g. "gzip" for data that is gzip-compressed
	ContentLanguage    string
	Metadata           map[string]string // custom metadata (x-goog-meta-*)
	// CustomTime is the object's customTime (a user-chosen date that
	// lifecycle rules such as daysSinceCustomTime read); zero: not set.
	CustomTime time.Time

	// StorageClass overrides the bucket's default ("STANDARD", "NEARLINE",
	// "COLDLINE", "ARCHIVE"); empty uses the bucket's.
	StorageClass string

	// KMSKeyName encrypts the object with this Cloud KMS key
	// (projects/…/cryptoKeys/…); empty uses the bucket's default.
	KMSKeyName string

	// Key, if set, encrypts the object with this customer-supplied key
	// (32 bytes), sent with every request of the upload (and of a
	// compose, whose sources must have been written with it). It cannot
	// be given with KMSKeyName.
	Key EncryptionKey

	// Preconditions, checked by the server when the object is finalised
	// (failure: ErrPreconditionFailed). DoesNotExist sends
	// ifGenerationMatch=0: never overwrite. GenerationMatch, when non-zero,
	// replaces only that generation. MetagenerationMatch, when non-zero,
	// requires the live object's metageneration.
	DoesNotExist        bool
	GenerationMatch     int64
	MetagenerationMatch int64

	// TemporaryHold and EventBasedHold create the object under that hold:
	// GCS then refuses to delete or replace it until the hold is released.
	// RetainUntil, when not zero, gives it a retention configuration of
	// RetentionMode ("Unlocked" or "Locked"; the bucket must have object
	// retention enabled): GCS refuses to delete or replace it until then.
	TemporaryHold, EventBasedHold bool
	RetentionMode                 string
	RetainUntil                   time.Time
}

// holds sets the holds and retention of spec on o.
func (spec ObjectSpec) holds(o *storage.Object) {
	o.TemporaryHold, o.EventBasedHold = spec.TemporaryHold, spec.EventBasedHold
	if !spec.RetainUntil.IsZero() {
		o.Retention = &storage.ObjectRetention{Mode: spec.RetentionMode, RetainUntilTime: spec.RetainUntil.UTC().Format(time.RFC3339)}
	}
}

// setsHolds reports whether spec asks for a hold or a retention.
func (spec ObjectSpec) setsHolds() bool {
	return spec.TemporaryHold || spec.EventBasedHold || !spec.RetainUntil.IsZero()
}

// Start creates a resumable upload session for spec (the initiation POST)
// and returns it, ready for [Client.Upload] or [Client.UploadStream].
//
// The initiation is retried like every request. It is not idempotent: if a
// response is lost, the retry creates a second session and the first is
// simply never used (GCS expires it; no object is created from it).
func (c *Client) Start(ctx context.Context, spec ObjectSpec) (*Session, error) {
	if spec.Bucket == "" || spec.Name == "" {
		return nil, errors.New("resumable: start: bucket and object name are required")
	}
	if spec.Size < -1 {
		return nil, errors.New("resumable: start: size must be -1 (unknown) or at least 0")
	}
	if err := spec.checkKeys(); err != nil {
		return nil, fmt.Errorf("resumable: start: %w", err)
	}
	emit := c.emitter(spec.Bucket, spec.Name)
	body, err := json.Marshal(spec.object())
	if err != nil {
		return nil, err
	}
	var loc string
	err = c.runner(emit).Do(ctx, func(ctx context.Context) error {
		loc, err = c.initiate(ctx, spec, body)
		return err
	})
	if err != nil {
		return nil, &Error{Op: "start", Object: "gs://" + spec.Bucket + "/" + spec.Name, Err: err}
	}
	s := &Session{URI: loc, Bucket: spec.Bucket, Object: spec.Name, Size: spec.Size,
		ChunkSize: c.chunkSize, Created: c.clock.Now().UTC(), fresh: true, Key: spec.Key, KeySHA256: spec.Key.SHA256()}
	emit(Event{Kind: EventStarted, Size: spec.Size})
	return s, nil
}

// checkKeys refuses a key that is not AES-256, and two keys at once.
func (spec ObjectSpec) checkKeys() error {
	if err := spec.Key.check(); err != nil {
		return err
	}
	if len(spec.Key) > 0 && spec.KMSKeyName != "" {
		return errors.New("an object is encrypted with a customer-supplied key or a Cloud KMS key, not both")
	}
	return nil
}

// object is the initiation body.
func (spec ObjectSpec) object() *storage.Object {
	o := &storage.Object{
		Name: spec.Name, ContentType: spec.ContentType, CacheControl: spec.CacheControl,
		ContentDisposition: spec.ContentDisposition, ContentEncoding: spec.ContentEncoding,
		ContentLanguage: spec.ContentLanguage, Metadata: spec.Metadata, StorageClass: spec.StorageClass,
		CustomTime: spec.customTime(),
	}
	spec.holds(o)
	return o
}

// customTime is CustomTime as the JSON API writes it (RFC 3339, UTC); "" when unset.
func (spec ObjectSpec) customTime() string {
	if spec.CustomTime.IsZero() {
		return ""
	}
	return spec.CustomTime.UTC().Format(time.RFC3339Nano)
}

// setPreconditions sets the object's preconditions (DoesNotExist,
// GenerationMatch, MetagenerationMatch) in q, as an upload's and a rewrite's
// destination send them.
func (spec ObjectSpec) setPreconditions(q url.Values) {
	switch {
	case spec.DoesNotExist:
		q.Set("ifGenerationMatch", "0")
	case spec.GenerationMatch != 0:
		q.Set("ifGenerationMatch", strconv.FormatInt(spec.GenerationMatch, 10))
	}
	if spec.MetagenerationMatch != 0 {
		q.Set("ifMetagenerationMatch", strconv.FormatInt(spec.MetagenerationMatch, 10))
	}
}

// query holds the parameters of an upload's first request: the
// preconditions and the KMS key.
func (spec ObjectSpec) query() url.Values {
	if !spec.DoesNotExist && spec.GenerationMatch == 0 && spec.MetagenerationMatch == 0 && spec.KMSKeyName == "" {
		return nil // most uploads: no map to make
	}
	q := url.Values{}
	spec.setPreconditions(q)
	if spec.KMSKeyName != "" {
		// A query parameter: the body's kmsKeyName field is refused by GCS.
		q.Set("kmsKeyName", spec.KMSKeyName)
	}
	return q
}

// initiate sends one initiation request and returns the session URI.
func (c *Client) initiate(ctx context.Context, spec ObjectSpec, meta []byte) (string, error) {
	q := spec.query()
	if q == nil {
		q = url.Values{}
	}
	q.Set("uploadType", "resumable")
	q.Set("name", spec.Name)
	u := c.endpoint + "/upload/storage/v1/b/" + url.PathEscape(spec.Bucket) + "/o?" + q.Encode()
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(meta))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	spec.Key.set(req.Header)
	if spec.ContentType != "" {
		req.Header.Set("X-Upload-Content-Type", spec.ContentType)
	}
	if spec.Size >= 0 {
		req.Header.Set("X-Upload-Content-Length", strconv.FormatInt(spec.Size, 10))
	}
	var loc string
	err = c.send(ctx, "start", req, nil, func(resp *http.Response, _ *watchdog) error {
		if resp.StatusCode/100 != 2 {
			return statusError(resp, nil, false)
		}
		loc = resp.Header.Get("Location")
		if _, err := url.Parse(loc); err != nil || loc == "" {
			return errors.New("resumable: initiation response has no valid Location header")
		}
		if err := CheckOrigin(loc, c.endpoint); err != nil {
			// Not retried: the same server would hand out the same kind of URI.
			return retry.Permanent(fmt.Errorf("resumable: refusing the session URI the server handed out: %w", err))
		}
		return nil
	})
	return loc, err
}
