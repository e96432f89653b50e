package eventlog

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"google.golang.org/api/googleapi"
)

// RetryLine is what -v prints before each retry:
// "photos/a.jpg: retry 3/12 in 4.2s: 503 Service Unavailable".
// max is the attempt budget (0 when the policy has its own stop rule).
func RetryLine(name string, attempt, max int, wait time.Duration, cause error) string {
	return PartRetryLine(name, 0, 0, attempt, max, wait, cause)
}

// PartName is a file's name with the part an event is about: "big.iso part 3/8" for
// the third component of a composite upload or slice of a sliced download.
func PartName(name string, part, parts int) string {
	if parts == 0 {
		return name
	}
	return fmt.Sprintf("%s part %d/%d", name, part, parts)
}

// PartRetryLine is RetryLine for part part of parts (0: the whole transfer).
func PartRetryLine(name string, part, parts, attempt, max int, wait time.Duration, cause error) string {
	name = PartName(name, part, parts)
	of := ""
	if max > 0 {
		of = fmt.Sprintf("/%d", max)
	}
	return fmt.Sprintf("%s: retry %d%s in %s: %s", name, attempt, of, roundWait(wait), CauseText(cause))
}

// roundWait shows waits the way people read them: 4.2s, 850ms, 1m4s.
func roundWait(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// CauseText is the short cause of a retry: "503 Service Unavailable" for an HTTP status,
// the innermost network error ("connection reset by peer") for transport failures.
func CauseText(err error) string {
	if err == nil {
		return "unknown cause"
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		s := fmt.Sprintf("%d %s", ge.Code, http.StatusText(ge.Code))
		if ge.Code == http.StatusTooManyRequests {
			if ra := ge.Header.Get("Retry-After"); ra != "" {
				s += " (Retry-After: " + ra + ")"
			}
		}
		return s
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		// "write: connection reset by peer", not the whole chain of wrapped network errors.
		return se.Syscall + ": " + se.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return Redact(err.Error())
}
