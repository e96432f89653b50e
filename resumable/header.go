package resumable

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// This file holds the parsers of the three headers the protocol reads. Each is
// strict: a header we cannot understand is an error, never a guess, because a
// wrong offset silently corrupts an object.

// errHeader is wrapped by every header parse error.
var errHeader = errors.New("malformed header")

// parseRange parses the Range header of a 308 "resume incomplete" response,
// "bytes=0-N", and returns the persisted offset N+1. GCS omits the header
// when nothing is persisted yet, so "" means 0. The range always starts at 0:
// GCS keeps one contiguous prefix per session.
func parseRange(h string) (int64, error) {
	if h == "" {
		return 0, nil
	}
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok {
		return 0, fmt.Errorf("%w: Range %q: want bytes=0-N", errHeader, h)
	}
	first, last, ok := strings.Cut(spec, "-")
	if !ok || first != "0" {
		return 0, fmt.Errorf("%w: Range %q: want bytes=0-N", errHeader, h)
	}
	n, err := parseOffset(last)
	if err != nil || n == maxOffset {
		return 0, fmt.Errorf("%w: Range %q: bad last byte", errHeader, h)
	}
	return n + 1, nil
}

// maxOffset bounds every offset we parse, so N+1 and b-a+1 cannot overflow.
const maxOffset = 1<<62 - 1

// parseOffset parses a non-negative decimal offset without sign or spaces.
func parseOffset(s string) (int64, error) {
	if s == "" || s[0] < '0' || s[0] > '9' || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%w: bad number %q", errHeader, s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxOffset {
		return 0, fmt.Errorf("%w: bad number %q", errHeader, s)
	}
	return n, nil
}

// contentRange is a Content-Range value: "bytes First-Last/Total".
// First and Last are -1 for "bytes */Total" (no bytes: a status query, or a
// final request with an empty body); Total is -1 for "*" (size not yet known).
type contentRange struct {
	First, Last, Total int64
}

// String formats the value as the header expects it.
func (c contentRange) String() string {
	total := "*"
	if c.Total >= 0 {
		total = strconv.FormatInt(c.Total, 10)
	}
	if c.First < 0 {
		return "bytes */" + total
	}
	return fmt.Sprintf("bytes %d-%d/%s", c.First, c.Last, total)
}

// Len is the number of bytes the range covers.
func (c contentRange) Len() int64 {
	if c.First < 0 {
		return 0
	}
	return c.Last - c.First + 1
}

// parseContentRange parses the forms GCS uses: "bytes a-b/total",
// "bytes a-b/*", "bytes */total" and "bytes */*". It checks a <= b and, when
// the total is known, b < total.
func parseContentRange(h string) (contentRange, error) {
	bad := func(why string) (contentRange, error) {
		return contentRange{}, fmt.Errorf("%w: Content-Range %q: %s", errHeader, h, why)
	}
	spec, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return bad("want unit bytes")
	}
	rng, total, ok := strings.Cut(spec, "/")
	if !ok {
		return bad("missing /total")
	}
	c := contentRange{First: -1, Last: -1, Total: -1}
	if total != "*" {
		n, err := parseOffset(total)
		if err != nil {
			return bad("bad total")
		}
		c.Total = n
	}
	if rng == "*" {
		return c, nil
	}
	first, last, ok := strings.Cut(rng, "-")
	if !ok {
		return bad("want a-b")
	}
	var err1, err2 error
	c.First, err1 = parseOffset(first)
	c.Last, err2 = parseOffset(last)
	switch {
	case err1 != nil || err2 != nil:
		return bad("bad number")
	case c.Last < c.First:
		return bad("last before first")
	case c.Total >= 0 && c.Last >= c.Total:
		return bad("range past total")
	}
	return c, nil
}

// Hashes are the checksums carried by an X-Goog-Hash header or an object's
// metadata.
type Hashes struct {
	CRC32C    uint32 // Castagnoli CRC-32 of the object; valid when HasCRC32C
	HasCRC32C bool
	MD5       []byte // 16 bytes, or nil when absent (composite objects have none)
}

// String formats the hashes as an X-Goog-Hash value: "crc32c=…,md5=…".
func (h Hashes) String() string {
	var parts []string
	if h.HasCRC32C {
		parts = append(parts, "crc32c="+EncodeCRC32C(h.CRC32C))
	}
	if h.MD5 != nil {
		parts = append(parts, "md5="+base64.StdEncoding.EncodeToString(h.MD5))
	}
	return strings.Join(parts, ",")
}

// EncodeCRC32C gives GCS's encoding of a CRC32C: base64 of the big-endian
// four bytes, as in object metadata and X-Goog-Hash.
func EncodeCRC32C(c uint32) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c))
}

// DecodeCRC32C is the inverse of EncodeCRC32C.
func DecodeCRC32C(s string) (uint32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, fmt.Errorf("%w: crc32c %q: want base64 of 4 bytes", errHeader, s)
	}
	return binary.BigEndian.Uint32(b), nil
}

// parseGoogHash parses the values of every X-Goog-Hash header of a response.
// GCS sends either one header per hash or one comma-separated header; both
// are accepted. Unknown hash names are ignored (forward compatibility); a
// hash given twice with different values is an error.
func parseGoogHash(values []string) (Hashes, error) {
	var h Hashes
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if err := h.add(item); err != nil {
				return Hashes{}, err
			}
		}
	}
	return h, nil
}

// add merges one "name=base64" item into h.
func (h *Hashes) add(item string) error {
	name, val, ok := strings.Cut(item, "=")
	if !ok {
		return fmt.Errorf("%w: x-goog-hash item %q: want name=value", errHeader, item)
	}
	switch strings.ToLower(name) {
	case "crc32c":
		c, err := DecodeCRC32C(val)
		if err != nil {
			return err
		}
		if h.HasCRC32C && h.CRC32C != c {
			return fmt.Errorf("%w: x-goog-hash: two different crc32c values", errHeader)
		}
		h.CRC32C, h.HasCRC32C = c, true
	case "md5":
		m, err := base64.StdEncoding.DecodeString(val)
		if err != nil || len(m) != 16 {
			return fmt.Errorf("%w: md5 %q: want base64 of 16 bytes", errHeader, val)
		}
		if h.MD5 != nil && string(h.MD5) != string(m) {
			return fmt.Errorf("%w: x-goog-hash: two different md5 values", errHeader)
		}
		h.MD5 = m
	}
	return nil
}
