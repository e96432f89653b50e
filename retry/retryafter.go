package retry

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/api/googleapi"
)

// ParseRetryAfter reads an HTTP Retry-After value (RFC 9110 §10.2.3): either a whole number
// of seconds or an HTTP date, which is turned into the time left after now. A date in the past
// gives 0. ok is false for anything else (negative or fractional seconds, a malformed date).
// Very large second counts saturate instead of overflowing.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		const maxSecs = int64(forever / time.Second)
		var secs int64
		for _, c := range v {
			secs = secs*10 + int64(c-'0')
			if secs > maxSecs {
				return forever, true
			}
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// retryAfter returns the Retry-After of the *googleapi.Error in err's chain, if it has one.
func retryAfter(err error, now time.Time) (time.Duration, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Header == nil {
		return 0, false
	}
	return ParseRetryAfter(ge.Header.Get("Retry-After"), now)
}
