package fakegcs

import (
	"net/netip"
	"strings"
	"unicode/utf8"
)

// GCS's naming rules (cloud.google.com/storage/docs/buckets#naming and
// .../objects#naming), as GCS enforces them: a request that would create a
// bucket or an object with a name outside them gets 400 invalid. Unless
// Options.LaxNames is set, fakegcs refuses the same names, so a client that
// would send them to GCS fails here too.

// checkBucketName returns the reason name is not a valid bucket name, or
// "".
func checkBucketName(name string) string {
	if len(name) < 3 || len(name) > 222 {
		return "must be 3 to 63 characters (222 with dots)"
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return "may contain only lowercase letters, digits, '-', '_' and '.'"
		}
	}
	if !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return "must start and end with a letter or digit"
	}
	if !strings.Contains(name, ".") && len(name) > 63 {
		return "must be 3 to 63 characters (222 with dots)"
	}
	for _, part := range strings.Split(name, ".") {
		if part == "" || len(part) > 63 {
			return "each dot-separated part must be 1 to 63 characters"
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return "cannot be an IP address"
	}
	if strings.HasPrefix(name, "goog") || strings.Contains(name, "google") || strings.Contains(name, "g00gle") {
		return `cannot start with "goog" or contain "google"`
	}
	return ""
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// checkObjectName returns the reason name is not a valid object name, or
// "".
func checkObjectName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > 1024:
		return "is longer than 1024 bytes"
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case name == "." || name == "..":
		return `cannot be "." or ".."`
	case strings.ContainsAny(name, "\r\n\x00"):
		return "cannot contain carriage return, line feed or NUL"
	case strings.HasPrefix(name, ".well-known/acme-challenge/"):
		return `cannot start with ".well-known/acme-challenge/"`
	}
	return ""
}

// validBucket is nil, or GCS's 400 for a bucket name it would refuse.
func (s *Server) validBucket(name string) *apiError {
	if s.opts.LaxNames {
		return nil
	}
	if why := checkBucketName(name); why != "" {
		return errf(400, "invalid", "Invalid bucket name: %q: a bucket name %s.", name, why)
	}
	return nil
}

// validObject is nil, or GCS's 400 for an object name it would refuse.
func (s *Server) validObject(name string) *apiError {
	if s.opts.LaxNames {
		return nil
	}
	if why := checkObjectName(name); why != "" {
		return errf(400, "invalid", "The object name %q is not valid: it %s.", name, why)
	}
	return nil
}
