package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"cloud.google.com/go/compute/metadata"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// ADCEnv names the key file of Application Default Credentials.
const ADCEnv = "GOOGLE_APPLICATION_CREDENTIALS"

// ErrNoCredentials is matched (errors.Is) by the error [New] returns when no
// credentials were found anywhere.
var ErrNoCredentials = errors.New("no Google Cloud credentials found")

// ErrBadCredentials is matched (errors.Is) by the error [New] returns when a key
// it was given cannot be used: Options.CredentialsFile or the file named by
// $GOOGLE_APPLICATION_CREDENTIALS unreadable, or a key (that file, the gcloud
// ADC file or Options.CredentialsJSON) not JSON or lacking the fields its type
// needs. Like [ErrNoCredentials] it is a setup error, found before any request.
var ErrBadCredentials = errors.New("unusable credentials")

// badCredentials formats an error that matches ErrBadCredentials (and what it wraps)
// without changing its text.
func badCredentials(format string, args ...any) error {
	return &badCredentialsError{fmt.Errorf(format, args...)}
}

type badCredentialsError struct{ err error }

func (e *badCredentialsError) Error() string        { return e.err.Error() }
func (e *badCredentialsError) Unwrap() error        { return e.err }
func (e *badCredentialsError) Is(target error) bool { return target == ErrBadCredentials }

// ErrBadEndpoint is matched (errors.Is) by the error [New] returns when
// Options.Endpoint, or STORAGE_EMULATOR_HOST, is not a URL it can use.
var ErrBadEndpoint = errors.New("bad endpoint")

// NoCredentialsError lists the places [New] looked, in order, each with why it
// did not apply. Its message ends with the usual fixes.
type NoCredentialsError struct {
	Tried []string
}

func (e *NoCredentialsError) Error() string {
	return fmt.Sprintf("auth: %v; tried: %s. Fix: run `gcloud auth application-default login`, "+
		"or set %s to a service-account key file, or pass --credentials FILE "+
		"(for an emulator, set %s=host:port)",
		ErrNoCredentials, strings.Join(e.Tried, "; "), ADCEnv, EmulatorHostEnv)
}

// Is makes errors.Is(err, ErrNoCredentials) true.
func (e *NoCredentialsError) Is(target error) bool { return target == ErrNoCredentials }

// applicationDefault is step 4 of the chain. It checks the two ADC files
// itself, so the error can say what it found, and leaves the reading to
// google.FindDefaultCredentials so the precedence is exactly Google's.
func applicationDefault(ctx, tokCtx context.Context, onGCE func(context.Context) bool, scope string) (oauth2.TokenSource, string, error) {
	tried := []string{
		"explicit token source or key file (none given)",
		EmulatorHostEnv + " (not set)",
	}
	source := ""
	if f := os.Getenv(ADCEnv); f != "" {
		// Google's lookup stops at this variable, even if the file is bad.
		source = ADCEnv + " file " + f
	} else {
		tried = append(tried, ADCEnv+" (not set)")
		wk := wellKnownFile()
		if _, err := os.Stat(wk); err == nil {
			source = "gcloud ADC file " + wk
		} else {
			tried = append(tried, "gcloud ADC file "+wk+" (not found)")
		}
	}
	if source == "" {
		if onGCE == nil {
			onGCE = probeMetadata
		}
		if !onGCE(ctx) {
			tried = append(tried, "metadata server (not running on Google Cloud)")
			return nil, "", &NoCredentialsError{Tried: tried}
		}
		source = "metadata server"
	}
	creds, err := google.FindDefaultCredentials(tokCtx, scope)
	if err != nil {
		if source == "metadata server" { // not a key: the server did not answer as it should
			return nil, "", fmt.Errorf("auth: application default credentials (%s): %w", source, err)
		}
		return nil, "", badCredentials("auth: application default credentials (%s): %w", source, err)
	}
	if creds.JSON != nil {
		// A key file: built as fromJSON does, so a refused token can be replaced.
		ts, err := fromJSON(tokCtx, creds.JSON, scope)
		if err != nil {
			return nil, "", badCredentials("auth: application default credentials (%s): %w", source, err)
		}
		return ts, source, nil
	}
	return creds.TokenSource, source, nil
}

// MetadataHostEnv overrides the metadata server's address ("host:port").
const MetadataHostEnv = "GCE_METADATA_HOST"

// probeMetadata is the default [Options.OnGCE]. The metadata package trusts
// GCE_METADATA_HOST blindly ("set means on GCE"); here a server named by it
// must answer like one, so GCE_METADATA_HOST=127.0.0.1:1 is a quick,
// deterministic "not on Google Cloud" for scripts and tests that must never
// probe the network.
func probeMetadata(ctx context.Context) bool {
	host := os.Getenv(MetadataHostEnv)
	if host == "" {
		return metadata.OnGCEWithContext(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/computeMetadata/v1/", nil)
	if err != nil {
		return false
	}
	req.Header.Set("Metadata-Flavor", "Google")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.Header.Get("Metadata-Flavor") == "Google"
}

// wellKnownFile is where `gcloud auth application-default login` writes, the
// same path the oauth2 library reads.
func wellKnownFile() string {
	const f = "application_default_credentials.json"
	if runtime.GOOS == "windows" {
		return filepath.Join(os.Getenv("APPDATA"), "gcloud", f)
	}
	home := os.Getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "gcloud", f)
}

// badEndpoint is an error with text msg that matches ErrBadEndpoint.
type badEndpoint string

func (e badEndpoint) Error() string { return string(e) }

// Is makes errors.Is(err, ErrBadEndpoint) true.
func (e badEndpoint) Is(target error) bool { return target == ErrBadEndpoint }

// endpoint picks the base URL: explicit, else STORAGE_EMULATOR_HOST, else
// Google's. The emulator variable takes "host:port" (meaning http) or a URL,
// as Google's clients do.
func endpoint(explicit string) (ep string, emulator bool, err error) {
	raw := explicit
	if raw == "" {
		raw = os.Getenv(EmulatorHostEnv)
		if raw == "" {
			return DefaultEndpoint, false, nil
		}
		emulator = true
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
	}
	what := "endpoint"
	if emulator {
		what = EmulatorHostEnv
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", false, badEndpoint(fmt.Sprintf("auth: bad %s %q: want http(s)://host[:port] or host:port", what, redactURL(raw)))
	}
	// Userinfo in the URL becomes Basic credentials on every request: over plain http
	// they would travel in clear, as the rule that keeps tokens off http forbids.
	if u.User != nil && u.Scheme == "http" {
		return "", false, badEndpoint(fmt.Sprintf("auth: %s %q holds credentials (user:password@), which would travel in clear over http: drop them from the URL (an emulator needs none), or use https", what, u.Redacted()))
	}
	return strings.TrimRight(u.String(), "/"), emulator, nil
}

// redactURL is raw with any password replaced by "xxxxx", for messages, even when raw
// does not parse as a URL.
func redactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	}
	at := strings.LastIndex(raw, "@")
	if at < start {
		return raw
	}
	if user, _, ok := strings.Cut(raw[start:at], ":"); ok {
		return raw[:start] + user + ":xxxxx" + raw[at:]
	}
	return raw
}
