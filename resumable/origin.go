package resumable

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gcsput/gcsput/retry"
)

// A session URI is a bearer capability: whoever holds it can write the
// object, and every chunk sent to it carries the object's bytes. GCS hands
// out session URIs on the API host it was asked, over the same scheme, so a
// session URI, a redirect or a saved session on another origin is refused
// before a byte goes there: an https endpoint that answered with an http
// Location would otherwise have the object sent in cleartext.

// ErrForeignOrigin is the cause of an error about a session URI or a
// redirect whose scheme, host or port is not the endpoint's.
var ErrForeignOrigin = errors.New("not on the endpoint's scheme, host and port")

// CheckOrigin reports whether uri has the scheme, host and port of
// endpoint (a port left out is the scheme's default). Its error names both
// origins, never the URI, whose upload_id is a secret, and wraps
// [ErrForeignOrigin].
func CheckOrigin(uri, endpoint string) error {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return errors.New("the session URI does not parse as an http(s) URL")
	}
	e, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if !sameOrigin(u, e) {
		return fmt.Errorf("%s://%s is %w (%s://%s)", u.Scheme, u.Host, ErrForeignOrigin, e.Scheme, e.Host)
	}
	return nil
}

func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "http") {
		return "80"
	}
	return "443"
}

// OriginRedirects returns a copy of hc that refuses, without retry, to
// follow a redirect off endpoint's origin, and otherwise follows them as hc
// does. nil hc means http.DefaultClient.
func OriginRedirects(hc *http.Client, endpoint string) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	e, err := url.Parse(endpoint)
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err != nil || !sameOrigin(req.URL, e) {
			return retry.Permanent(fmt.Errorf("refusing a redirect to %s://%s: it is %w (%s)", req.URL.Scheme, req.URL.Host, ErrForeignOrigin, endpoint))
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
