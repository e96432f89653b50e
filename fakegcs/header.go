package fakegcs

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// contentRange is a parsed upload Content-Range: "bytes a-b/total",
// "bytes a-b/*", "bytes */total" or "bytes */*". total is -1 for "*".
type contentRange struct {
	query      bool // "bytes */...": a status query, no bytes
	start, end int64
	total      int64
}

var errBadContentRange = errors.New("malformed Content-Range")

// parseContentRange parses an upload Content-Range. An absent header means
// the whole upload in one request: "bytes 0-(n-1)/n" for a body of n bytes
// (a status query "bytes */0" when n is 0), as GCS treats it.
func parseContentRange(h string, contentLength int64) (contentRange, error) {
	if h == "" {
		if contentLength <= 0 {
			return contentRange{query: true, total: max(contentLength, 0)}, nil
		}
		return contentRange{start: 0, end: contentLength - 1, total: contentLength}, nil
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(h), "bytes ")
	if !ok {
		return contentRange{}, errBadContentRange
	}
	rng, tot, ok := strings.Cut(strings.TrimSpace(rest), "/")
	if !ok {
		return contentRange{}, errBadContentRange
	}
	cr := contentRange{total: -1}
	if tot != "*" {
		n, err := strconv.ParseInt(tot, 10, 64)
		if err != nil || n < 0 {
			return contentRange{}, errBadContentRange
		}
		cr.total = n
	}
	if rng == "*" {
		cr.query = true
		return cr, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return contentRange{}, errBadContentRange
	}
	var err1, err2 error
	cr.start, err1 = strconv.ParseInt(a, 10, 64)
	cr.end, err2 = strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || cr.start < 0 || cr.end < cr.start {
		return contentRange{}, errBadContentRange
	}
	if cr.total >= 0 && cr.end >= cr.total {
		return contentRange{}, errBadContentRange
	}
	return cr, nil
}

// byteRange is a parsed download Range: a single "bytes=a-b", "bytes=a-" or
// "bytes=-n".
type byteRange struct {
	start, end int64 // end -1: to the end
	suffix     int64 // >0: the last suffix bytes
}

// parseRange parses a download Range header. ok is false for an absent or
// unusable header (several ranges, other units), which, like GCS, serves the
// whole object.
func parseRange(h string) (br byteRange, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return byteRange{}, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return byteRange{}, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return byteRange{}, false
		}
		return byteRange{suffix: n, end: -1}, true
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return byteRange{}, false
	}
	br = byteRange{start: start, end: -1}
	if b != "" {
		end, err := strconv.ParseInt(b, 10, 64)
		if err != nil || end < start {
			return byteRange{}, false
		}
		br.end = end
	}
	return br, true
}

// resolve applies the range to an object of size n: the offset and length to
// serve, or ok false when the range cannot be satisfied (416).
func (br byteRange) resolve(n int64) (off, length int64, ok bool) {
	if br.suffix > 0 {
		if n == 0 {
			return 0, 0, false
		}
		l := min(br.suffix, n)
		return n - l, l, true
	}
	if br.start >= n {
		return 0, 0, false
	}
	end := n - 1
	if br.end >= 0 && br.end < end {
		end = br.end
	}
	return br.start, end - br.start + 1, true
}

// rangeStart is the offset a download starts at, for fault matching.
func rangeStart(r *http.Request) (int64, bool) {
	br, ok := parseRange(r.Header.Get("Range"))
	if !ok || br.suffix > 0 {
		return 0, true
	}
	return br.start, true
}
