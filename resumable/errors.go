package resumable

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/api/googleapi"
)

// Sentinels for errors.Is. Each error of this package also keeps its cause:
// errors.As(err, new(*googleapi.Error)) gives the server's status, reason
// and message.
var (
	// ErrSessionExpired: the server answered 404, 410 or 499 (cancelled)
	// for the session URI. The session is gone; start a new one and upload
	// from zero.
	ErrSessionExpired = errors.New("resumable: upload session expired or not found")

	// ErrChecksumMismatch: the server rejected the final chunk because the
	// object's CRC32C or MD5 differed from X-Goog-Hash, or the stored object's
	// checksum differs from the data sent (see [ChecksumError]).
	ErrChecksumMismatch = errors.New("resumable: checksum mismatch")

	// ErrPreconditionFailed: the server answered 412, e.g. IfGenerationMatch
	// was not met (with DoesNotExist: the object already exists).
	ErrPreconditionFailed = errors.New("resumable: precondition failed")

	// ErrUnauthorized: the server refused the request's credentials (401:
	// missing, expired or revoked). A chunk refused so is sent again after
	// a status query, MaxAuthRetries times; for other requests the
	// transport is the one to retry with a fresh token (package auth
	// does). The session, if any, is still open: resume it once the
	// credentials are fixed.
	ErrUnauthorized = errors.New("resumable: the server refused the credentials (401)")

	// ErrSourceChanged: the source's CheckSource (see [SourceChecker])
	// said, before the final request, that it no longer holds the bytes the
	// session started with. The object was not finalized; the session is
	// still open, and should be cancelled.
	ErrSourceChanged = errors.New("resumable: source changed while being uploaded")
)

// Error is returned by every operation of this package: the step that failed,
// the object, and the cause (a *googleapi.Error, a network error with the
// URL redacted, a *retry.Error when retries ran out, a *SourceError, …).
type Error struct {
	Op     string // "start", "chunk", "status", "cancel", "download", "verify"
	Object string // gs://bucket/object
	Offset int64  // bytes the server had (upload) or bytes written (download) when it failed
	// Sent is, for an upload, the bytes past Offset sent in a request cut
	// off before its answer (a deadline or cancel mid-chunk): the server
	// may have kept part of them, which a resume asks it. 0: none.
	Sent int64
	Err  error
}

func (e *Error) Error() string {
	if e.Sent > 0 {
		return fmt.Sprintf("resumable: %s %s at offset %d (the server's; %d more bytes were sent in a request cut off before its answer): %v",
			e.Op, e.Object, e.Offset, e.Sent, e.Err)
	}
	return fmt.Sprintf("resumable: %s %s at offset %d: %v", e.Op, e.Object, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ChecksumError reports data whose checksum differs from the server's.
type ChecksumError struct {
	Object string
	Local  Hashes // computed from the bytes sent or received
	Remote Hashes // from the server (object metadata or X-Goog-Hash); empty when the server rejected X-Goog-Hash
	Err    error  // the server's rejection, if it rejected the final chunk
}

func (e *ChecksumError) Error() string {
	msg := fmt.Sprintf("resumable: checksum mismatch for %s: local %s, server %s", e.Object, e.Local, e.Remote)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ChecksumError) Is(target error) bool { return target == ErrChecksumMismatch }

func (e *ChecksumError) Unwrap() error { return e.Err }

// statusError reads a non-2xx, non-308 response into a *googleapi.Error
// (googleapi parses GCS's JSON error body), scrubbed of secrets, and adds
// the sentinel for the statuses with a fixed meaning. sessionOp says the
// request was addressed to a session URI, where 404 and 410 mean the session
// is gone rather than a missing bucket.
func statusError(resp *http.Response, secret []string, sessionOp bool) error {
	body, _ := readSome(resp) // a cut body still leaves the status
	gerr, ok := googleapi.CheckResponseWithBody(resp, body).(*googleapi.Error)
	if !ok { // cannot happen for a non-2xx status; keep the code anyway
		gerr = &googleapi.Error{Code: resp.StatusCode}
	}
	gerr.Message = scrub(gerr.Message, secret)
	gerr.Body = scrub(gerr.Body, secret)
	for i := range gerr.Errors {
		gerr.Errors[i].Message = scrub(gerr.Errors[i].Message, secret)
	}
	switch {
	case sessionOp && (gerr.Code == http.StatusNotFound || gerr.Code == http.StatusGone || gerr.Code == 499):
		// 499 is what a cancelled session answers.
		return fmt.Errorf("%w: %w", ErrSessionExpired, gerr)
	case gerr.Code == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %w", ErrPreconditionFailed, gerr)
	case gerr.Code == http.StatusUnauthorized:
		return fmt.Errorf("%w: %w", ErrUnauthorized, gerr)
	}
	return gerr
}

// isHashRejection reports a 400 with which GCS refuses a final chunk whose
// X-Goog-Hash does not match the data ("Provided CRC32C … doesn't match
// calculated CRC32C …").
func isHashRejection(err error) bool {
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest {
		return false
	}
	msg := strings.ToLower(gerr.Message + " " + gerr.Body)
	return strings.Contains(msg, "crc32c") || strings.Contains(msg, "md5")
}

// redactErr hides secrets in a transport error: net/http's *url.Error
// prints the request URL, which for a session is its upload_id.
func redactErr(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return &url.Error{Op: uerr.Op, URL: redactURI(uerr.URL), Err: uerr.Err}
	}
	return err
}
