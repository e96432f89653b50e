package fakegcs

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// apiError is an error the server answers with, in GCS's JSON shape:
// {"error":{"code":..,"message":..,"errors":[{"domain":"global","reason":..,"message":..}]}}.
type apiError struct {
	code   int
	reason string
	msg    string
	domain string // "" means "global"
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.code, e.reason, e.msg) }

func errf(code int, reason, format string, args ...any) *apiError {
	return &apiError{code: code, reason: reason, msg: fmt.Sprintf(format, args...)}
}

// reasonFor is the GCS error reason a bare status code is reported with.
func reasonFor(code int) string {
	switch code {
	case 400:
		return "invalid"
	case 401:
		return "required"
	case 403:
		return "forbidden"
	case 404:
		return "notFound"
	case 408:
		return "requestTimeout"
	case 409:
		return "conflict"
	case 410:
		return "gone"
	case 412:
		return "conditionNotMet"
	case 416:
		return "requestedRangeNotSatisfiable"
	case 429:
		return "rateLimitExceeded"
	case 499:
		return "clientClosedRequest"
	case 500:
		return "internalError"
	case 502:
		return "badGateway"
	case 503:
		return "backendError"
	case 504:
		return "gatewayTimeout"
	}
	return "unknown"
}

// statusError is the error for a scripted status fault.
func statusError(code int) *apiError {
	msg := http.StatusText(code)
	if code == 499 {
		msg = "Client Closed Request"
	}
	if msg == "" {
		msg = "status " + strconv.Itoa(code)
	}
	return &apiError{code: code, reason: reasonFor(code), msg: msg + " (injected by fakegcs)"}
}

var (
	errNotImplemented  = errf(http.StatusNotImplemented, "notImplemented", "fakegcs does not implement this request")
	errUnauthenticated = errf(http.StatusUnauthorized, "required", "Anonymous caller does not have storage access. Request is missing a valid bearer token (fakegcs was started with a token).")
	errPrecondition    = errf(http.StatusPreconditionFailed, "conditionNotMet", "At least one of the pre-conditions you specified did not hold.")
	errNoBucket        = errf(http.StatusNotFound, "notFound", "The specified bucket does not exist.")
)

type jsonErrorItem struct {
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

type jsonError struct {
	Error struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Errors  []jsonErrorItem `json:"errors"`
	} `json:"error"`
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	if e.code == http.StatusNotModified {
		w.WriteHeader(e.code) // a 304 has no body
		return
	}
	var body jsonError
	body.Error.Code = e.code
	body.Error.Message = e.msg
	domain := e.domain
	if domain == "" {
		domain = "global"
	}
	body.Error.Errors = []jsonErrorItem{{Domain: domain, Reason: e.reason, Message: e.msg}}
	writeJSON(w, e.code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		b = []byte(`{"error":{"code":500,"message":"fakegcs: cannot encode response"}}`)
	}
	writeJSONBytes(w, code, b)
}

// writeJSONBytes answers with b, already encoded JSON.
func writeJSONBytes(w http.ResponseWriter, code int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=UTF-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// readJSON decodes the request body into v, or answers GCS's 400
// parseError and returns false.
func (x *exchange) readJSON(v any) bool {
	if apiErr := decodeJSON(x.r.Body, v); apiErr != nil {
		x.fail(apiErr)
		return false
	}
	return true
}

// decodeJSON decodes at most 1 MiB of body into v; a body that is not JSON
// of v's shape is GCS's 400 parseError.
func decodeJSON(body io.Reader, v any) *apiError {
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(v); err != nil {
		return errf(400, "parseError", "Parse Error: %v", err)
	}
	return nil
}
