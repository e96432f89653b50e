package resumable

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Session is a resumable upload session: everything a later process needs to
// continue the upload. It is a plain value that marshals to JSON
// ([Session.Marshal], [ParseSession]).
//
// The URI is a bearer capability: whoever holds it can write the object
// until the session expires (GCS keeps sessions for one week). Store saved
// sessions like credentials (mode 0600). [Session.String] and every event
// and error of this package redact its upload_id.
//
// [Uploader.Upload] updates Persisted and the hash state after every chunk the
// server acknowledges, before it reports the chunk to Options.OnEvent, so an
// event callback may save the session at that point.
type Session struct {
	// URI is the session URI from the initiation's Location header.
	URI string `json:"uri"`

	// Bucket and Object name the destination.
	Bucket string `json:"bucket"`
	Object string `json:"object"`

	// Size is the object's length in bytes, or -1 when unknown at the start
	// (a stream); the total is then sent with the last chunk.
	Size int64 `json:"size"`

	// ChunkSize is the number of bytes per request, a multiple of 256 KiB.
	ChunkSize int `json:"chunk_size"`

	// Created is when the session was started; GCS expires a session a week
	// after its initiation.
	Created time.Time `json:"created"`

	// Persisted is the number of bytes the server last reported as
	// persisted; a resumed upload checks it with a status query first.
	Persisted int64 `json:"persisted"`

	// HashOffset is how many leading bytes CRC32CState and MD5State cover,
	// at most Persisted. When the states are missing, the bytes before
	// Persisted are re-read from the source to rebuild them.
	HashOffset int64 `json:"hash_offset,omitempty"`

	// CRC32CState and MD5State are the marshalled states
	// (encoding.BinaryMarshaler) of hash/crc32 (Castagnoli) and crypto/md5.
	CRC32CState []byte `json:"crc32c_state,omitempty"`
	MD5State    []byte `json:"md5_state,omitempty"`

	// KeySHA256 is the SHA256 (base64) of the customer-supplied
	// encryption key the upload was started with, "" for none. The key
	// itself is never saved: a resumed upload is given it again in Key.
	KeySHA256 string `json:"key_sha256,omitempty"`

	// Key is the customer-supplied encryption key, sent with every request
	// of the upload; [Client.Start] sets it from ObjectSpec.Key. It is not
	// marshalled: a session read back with [ParseSession] must be given it
	// again before it is resumed, and one whose SHA256 is not KeySHA256 is
	// refused (ErrEncryptionKey).
	Key EncryptionKey `json:"-"`

	// fresh marks a session just returned by Start: nothing can be
	// persisted yet, so the first chunk needs no status query.
	fresh bool
}

// Marshal encodes the session as JSON, including its secret URI.
func (s *Session) Marshal() ([]byte, error) {
	return json.Marshal(s)
}

// ParseSession decodes and checks a session saved by [Session.Marshal].
func ParseSession(b []byte) (*Session, error) {
	var s Session
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("resumable: saved session: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check reports a session that cannot be resumed.
func (s *Session) check() error {
	var why string
	switch u, err := url.Parse(s.URI); {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		why = "URI is not an http(s) URL"
	case s.Bucket == "" || s.Object == "":
		why = "bucket or object missing"
	case s.Size < -1:
		why = "negative size"
	case checkChunkSize(s.ChunkSize) != nil:
		why = checkChunkSize(s.ChunkSize).Error()
	case s.Persisted < 0 || (s.Size >= 0 && s.Persisted > s.Size):
		why = "persisted offset out of range"
	case s.HashOffset < 0 || s.HashOffset > s.Persisted:
		why = "hash offset out of range"
	default:
		return nil
	}
	return fmt.Errorf("resumable: saved session for %s: %s", s.name(), why)
}

// name is gs://bucket/object, for messages.
func (s *Session) name() string {
	return "gs://" + s.Bucket + "/" + s.Object
}

// String describes the session with its upload_id redacted.
func (s *Session) String() string {
	size := "unknown size"
	if s.Size >= 0 {
		size = fmt.Sprintf("%d bytes", s.Size)
	}
	return fmt.Sprintf("session %s for %s (%s, %d persisted)", redactURI(s.URI), s.name(), size, s.Persisted)
}

// GoString keeps %#v from printing the URI.
func (s *Session) GoString() string { return s.String() }

// Redaction. The upload_id query parameter of a session URI authorises
// writes to the session, a rewriteToken continues a copy into an object, and signed URLs carry signatures: neither may reach
// an event, a log or an error string.

// secretParams are the query parameters whose values are redacted.
var secretParams = []string{"upload_id", "rewriteToken", "x-goog-signature", "signature", "access_token", "key"}

// redactURI returns u with the values of secret parameters replaced.
func redactURI(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	q := p.Query()
	changed := false
	for k := range q {
		for _, s := range secretParams {
			if strings.EqualFold(k, s) {
				q[k] = []string{"REDACTED"}
				changed = true
			}
		}
	}
	if changed {
		p.RawQuery = q.Encode()
	}
	p.User = nil
	return p.String()
}

// secrets returns the secret values in u, to scrub from server messages.
func secrets(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	var out []string
	for k, vs := range p.Query() {
		for _, s := range secretParams {
			if strings.EqualFold(k, s) {
				for _, v := range vs {
					if v != "" {
						out = append(out, v, url.QueryEscape(v))
					}
				}
			}
		}
	}
	return out
}

// scrub replaces every secret in s. An empty secret is no secret: replacing
// "" would put REDACTED between every character of s (a first rewrite call
// has no token yet), so it is skipped here, where no caller can forget it.
func scrub(s string, secret []string) string {
	for _, v := range secret {
		if v == "" {
			continue
		}
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

// chunkQuantum is the granularity GCS requires of non-final chunks.
const chunkQuantum = 256 << 10

// errChunkSize is wrapped by chunk-size validation errors.
var errChunkSize = errors.New("chunk size must be a positive multiple of 256 KiB")

func checkChunkSize(n int) error {
	if n <= 0 || n%chunkQuantum != 0 {
		return fmt.Errorf("resumable: %w, got %d", errChunkSize, n)
	}
	return nil
}
