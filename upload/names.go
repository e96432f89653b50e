package upload

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"unicode/utf8"

	"github.com/gcsput/gcsput/internal/naming"
)

// ErrBadName is matched (errors.Is) by every bucket, object and gs:// URL
// error, so callers (the CLI's exit code 2) can tell bad input from failures.
var ErrBadName = errors.New("bad name")

// nameError says which name is bad and why; it matches ErrBadName.
type nameError struct {
	Kind   string // "bucket", "object" or "URL"
	Name   string
	Reason string
}

func (e *nameError) Error() string {
	return fmt.Sprintf("bad %s name %q: %s", e.Kind, e.Name, e.Reason)
}

// Is makes errors.Is(err, ErrBadName) true.
func (e *nameError) Is(target error) bool { return target == ErrBadName }

// validateBucket checks a bucket name against Cloud Storage's rules
// (https://cloud.google.com/storage/docs/buckets#naming): 3–63 characters, or
// up to 222 with dots and at most 63 between dots; lowercase letters, digits,
// '-', '_' and '.'; a letter or digit at each end; not an IP address; not
// starting with "goog" and not containing "google".
func validateBucket(name string) error {
	bad := func(reason string) error { return &nameError{Kind: "bucket", Name: name, Reason: reason} }
	if name == "" {
		return bad("empty")
	}
	if HasWildcard(name) {
		// gsutil and gcloud list the project's buckets for this; gcsput names one bucket.
		return bad("wildcards in bucket names are not supported: name the bucket (wildcards work in object names)")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return bad(fmt.Sprintf("%q not allowed: use lowercase letters, digits, '-', '_' and '.'", r))
		}
	}
	if len(name) < 3 {
		return bad("must have at least 3 characters")
	}
	if strings.Contains(name, ".") {
		if len(name) > 222 {
			return bad("longer than 222 characters")
		}
		for _, part := range strings.Split(name, ".") {
			if part == "" || len(part) > 63 {
				return bad("each dot-separated part must have 1 to 63 characters")
			}
		}
	} else if len(name) > 63 {
		return bad("longer than 63 characters (222 are allowed only with dots)")
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return bad("must start and end with a letter or digit")
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return bad("must not be an IP address")
	}
	if strings.HasPrefix(name, "goog") || strings.Contains(name, "google") {
		return bad(`must not start with "goog" or contain "google"`)
	}
	return nil
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// validateObject checks an object name against Cloud Storage's rules
// (https://cloud.google.com/storage/docs/objects#naming): 1–1024 bytes of
// valid UTF-8, no carriage return or line feed, not "." or "..", not under
// ".well-known/acme-challenge/".
func validateObject(name string) error {
	bad := func(reason string) error { return &nameError{Kind: "object", Name: name, Reason: reason} }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 1024:
		return bad(fmt.Sprintf("%d bytes long; the limit is 1024", len(name)))
	case !utf8.ValidString(name):
		return bad("not valid UTF-8")
	case strings.ContainsAny(name, "\r\n"):
		return bad("contains a carriage return or line feed")
	case name == "." || name == "..":
		return bad(`"." and ".." are not allowed`)
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return bad(`names under ".well-known/acme-challenge/" are reserved`)
	}
	return nil
}

// ErrUnsafePath is matched (errors.Is) by the error of a download whose
// object name would place the file outside the destination directory: an
// absolute name, one that climbs out with "..", or one whose path leads
// through a symlink out of the destination.
var ErrUnsafePath = naming.ErrUnsafePath

// URL is a parsed gs://bucket/object. Object may be empty (the bucket) or end
// in "/" (a prefix).
type URL struct {
	Bucket string
	Object string
}

// String returns the gs:// form.
func (u URL) String() string { return "gs://" + u.Bucket + "/" + u.Object }

// ParseURL parses "gs://bucket", "gs://bucket/" or "gs://bucket/object" and
// validates the bucket name (and the object name when it is not a prefix).
// Near misses of the scheme get an error that suggests the right spelling.
func ParseURL(s string) (URL, error) {
	rest, ok := strings.CutPrefix(s, "gs://")
	if !ok {
		return URL{}, &nameError{Kind: "URL", Name: s, Reason: urlHint(s)}
	}
	bucket, object, _ := strings.Cut(rest, "/")
	if err := validateBucket(bucket); err != nil {
		return URL{}, err
	}
	if object != "" && !strings.HasSuffix(object, "/") {
		if err := validateObject(object); err != nil {
			return URL{}, err
		}
	} else if object != "" && !utf8.ValidString(object) {
		return URL{}, &nameError{Kind: "object", Name: object, Reason: "not valid UTF-8"}
	}
	return URL{Bucket: bucket, Object: object}, nil
}

// urlHint explains a string that is not gs://..., guessing the typo.
func urlHint(s string) string {
	for _, typo := range []string{"gs:/", "gs:", "gcs://", "GS://", "Gs://", "gS://"} {
		if rest, ok := strings.CutPrefix(s, typo); ok {
			return "did you mean gs://" + strings.TrimLeft(rest, "/") + "?"
		}
	}
	return "want gs://bucket/object"
}
