package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"google.golang.org/api/googleapi"
)

// eventLog appends one JSON object per line to the --log file. Every line is passed through
// redact as it is written, so a session URI or token can never reach the file even if an
// event or an error message carried one by mistake.
type eventLog struct {
	mu  sync.Mutex
	w   io.Writer
	f   *os.File // nil when w is not a file we opened
	now func() time.Time
}

// openEventLog opens (appending, 0600: the log names files and buckets) the --log file;
// "" gives a nil log whose methods do nothing.
func openEventLog(name string) (*eventLog, error) {
	if name == "" {
		return nil, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, usagef("--log: %v", err)
	}
	return &eventLog{w: f, f: f, now: time.Now}, nil
}

// write logs one event: kind ("retry", "chunk", "result", ...) plus fields, with the time.
func (l *eventLog) write(kind string, fields any) {
	if l == nil {
		return
	}
	b, err := json.Marshal(fields)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"marshal_error": err.Error()})
	}
	head := fmt.Sprintf(`{"time":%q,"event":%q`, l.now().UTC().Format(time.RFC3339Nano), kind)
	line := head
	if body := strings.TrimSpace(string(b)); len(body) > 2 && body[0] == '{' {
		line += "," + body[1:]
	} else {
		line += "}"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, redact(line))
}

func (l *eventLog) close() error {
	if l == nil || l.f == nil {
		return nil
	}
	return l.f.Close()
}

// Secrets that must never be printed: the upload_id of a session URI (whoever holds it can
// write the object) and bearer tokens.
var (
	uploadIDPattern = regexp.MustCompile(`(upload_id=)[A-Za-z0-9_.~%-]+`)
	bearerPattern   = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+`)
)

// redact removes session IDs and tokens from s.
func redact(s string) string {
	s = uploadIDPattern.ReplaceAllString(s, "${1}REDACTED")
	return bearerPattern.ReplaceAllString(s, "${1}REDACTED")
}

// retryLine is what -v prints before each retry:
// "photos/a.jpg: retry 3/12 in 4.2s: 503 Service Unavailable".
// max is the attempt budget (0 when the policy has its own stop rule).
func retryLine(name string, attempt, max int, wait time.Duration, cause error) string {
	return partRetryLine(name, 0, 0, attempt, max, wait, cause)
}

// partName is a file's name with the part an event is about: "big.iso part 3/8" for
// the third component of a composite upload or slice of a sliced download.
func partName(name string, part, parts int) string {
	if parts == 0 {
		return name
	}
	return fmt.Sprintf("%s part %d/%d", name, part, parts)
}

// partRetryLine is retryLine for part part of parts (0: the whole transfer).
func partRetryLine(name string, part, parts, attempt, max int, wait time.Duration, cause error) string {
	name = partName(name, part, parts)
	of := ""
	if max > 0 {
		of = fmt.Sprintf("/%d", max)
	}
	return fmt.Sprintf("%s: retry %d%s in %s: %s", name, attempt, of, roundWait(wait), causeText(cause))
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

// causeText is the short cause of a retry: "503 Service Unavailable" for an HTTP status,
// the innermost network error ("connection reset by peer") for transport failures.
func causeText(err error) string {
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
	return redact(err.Error())
}
