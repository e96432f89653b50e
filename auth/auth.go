package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
)

// OAuth scopes for Cloud Storage.
const (
	ScopeReadWrite = "https://www.googleapis.com/auth/devstorage.read_write"
	ScopeReadOnly  = "https://www.googleapis.com/auth/devstorage.read_only"
)

// DefaultEndpoint is where requests go when neither [Options.Endpoint] nor
// STORAGE_EMULATOR_HOST says otherwise.
const DefaultEndpoint = "https://storage.googleapis.com"

// EmulatorHostEnv is the environment variable Google's clients read to find a
// Cloud Storage emulator ("host:port" or a URL).
const EmulatorHostEnv = "STORAGE_EMULATOR_HOST"

// Options says where credentials and the endpoint come from. The zero value
// means: STORAGE_EMULATOR_HOST if set, else Application Default Credentials,
// read-write scope, Google's endpoint.
type Options struct {
	// HTTPClient, if set, is returned as the client unchanged: the caller has
	// already arranged authentication (or none) and owns its transport.
	// It takes precedence over every other credential option.
	HTTPClient *http.Client

	// TokenSource, if set, supplies the tokens. A token is fetched when the
	// previous one nears expiry or the server refused it (401); a source
	// that caches (oauth2.ReuseTokenSource) is asked past its cache then.
	TokenSource oauth2.TokenSource

	// CredentialsFile is the path of a key file: a service-account key or an
	// authorized-user file. Empty: not used. Its errors are returned, never
	// hidden by a fall back to other credentials.
	CredentialsFile string

	// CredentialsJSON is the content of a key file, as CredentialsFile.
	// CredentialsFile wins when both are set.
	CredentialsJSON []byte

	// NoAuth sends requests without credentials (public buckets, or an
	// emulator named by Endpoint). STORAGE_EMULATOR_HOST implies it unless
	// explicit credentials (the three fields above) are given.
	NoAuth bool

	// ReadOnly asks for the devstorage.read_only scope instead of read_write,
	// for callers that only download.
	ReadOnly bool

	// Endpoint is the base URL of the JSON API server, "scheme://host[:port]"
	// with no path (e.g. "http://127.0.0.1:4443"). Empty: the emulator from
	// STORAGE_EMULATOR_HOST if set, else DefaultEndpoint.
	Endpoint string

	// Parallelism is the number of transfers the caller runs at once; the
	// transport keeps at least that many idle connections per host.
	// 0 means DefaultParallelism. Ignored when HTTPClient is given.
	Parallelism int

	// Base is the transport beneath the authentication layer. Nil: a
	// [NewTransport] sized for Parallelism, speaking Protocol. Ignored when
	// HTTPClient is given.
	Base http.RoundTripper

	// Protocol is the HTTP version spoken to an https endpoint when Base is
	// nil; empty means DefaultProtocol (HTTP1). StreamsPerConn is HTTP2's
	// requests per connection before another is opened (0: one connection;
	// see [HTTP2]).
	Protocol       Protocol
	StreamsPerConn int

	// OnGCE reports whether the process runs on Google Cloud, i.e. whether
	// the metadata server is worth asking for a token. It is consulted only
	// when no other credentials were found. Nil: the metadata package's probe
	// (which honours GCE_METADATA_HOST). Tests set it so they never reach the
	// network.
	OnGCE func(ctx context.Context) bool
}

// Client is what [New] found: a ready HTTP client and where to send requests.
type Client struct {
	// HTTPClient adds credentials (if any) to every request. Share it: it
	// holds the connection pool.
	HTTPClient *http.Client

	// Endpoint is the base URL, "scheme://host[:port]" without a trailing
	// slash; the JSON API lives under Endpoint+"/storage/v1/" and uploads
	// under Endpoint+"/upload/storage/v1/".
	Endpoint string

	// Emulator is true when Endpoint came from STORAGE_EMULATOR_HOST.
	Emulator bool

	// TokenSource is the source of the tokens HTTPClient adds; nil when
	// requests are unauthenticated or the caller gave HTTPClient.
	TokenSource oauth2.TokenSource

	// Source says, for logs and errors, which credentials are in use, e.g.
	// "key file /etc/sa.json" or "none (STORAGE_EMULATOR_HOST)". It never
	// contains a secret.
	Source string

	// Warnings are things the caller should tell the user, e.g. that the
	// credentials given are not used because the endpoint is plain http.
	Warnings []string

	own interface{ CloseIdleConnections() } // the transport New made; nil: the caller's
}

// New finds credentials and the endpoint as described in the package doc.
// ctx bounds the lookup only (the metadata probe); tokens are later fetched
// without it, so cancelling ctx does not break the returned client.
func New(ctx context.Context, opts Options) (*Client, error) {
	ep, emulator, err := endpoint(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	c := &Client{Endpoint: ep, Emulator: emulator}
	if opts.HTTPClient != nil {
		c.HTTPClient, c.Source = opts.HTTPClient, "caller's HTTP client"
		return c, nil
	}
	base := opts.Base
	if base == nil {
		if base, err = ForProtocol(NewTransport(opts.Parallelism), opts.Protocol, opts.StreamsPerConn, 0); err != nil {
			return nil, err
		}
	}
	if opts.Base == nil {
		c.own, _ = base.(interface{ CloseIdleConnections() })
	}
	c.HTTPClient = &http.Client{Transport: base}
	if strings.HasPrefix(ep, "http://") {
		// A token sent over plain http can be read by anyone on the path.
		switch given := explicitCredentials(opts); {
		case given != "":
			c.Source = "none (plain-http endpoint)"
			c.Warnings = append(c.Warnings, fmt.Sprintf("the %s is not used: the endpoint %s is plain http, where a token could be read by anyone on the path; use an https endpoint to send credentials", given, ep))
		case opts.NoAuth:
			c.Source = "none (NoAuth)"
		case emulator:
			c.Source = "none (" + EmulatorHostEnv + ")"
		default:
			c.Source = "none (plain-http endpoint)"
		}
		return c, nil
	}
	ts, source, err := findTokenSource(ctx, opts, emulator)
	if err != nil {
		return nil, err
	}
	c.Source = source
	if ts != nil {
		tokens := newTokenCache(ts)
		c.TokenSource = tokens
		c.HTTPClient.Transport = httpsOnly{auth: &bearer{tokens: tokens, base: base, max: MaxRefreshes}, plain: base}
	}
	return c, nil
}

// CloseIdleConnections closes the idle keep-alive connections of the
// transport New made, so a Client that is done with holds no sockets (and
// no goroutines) until their idle timeout. A transport the caller gave
// (HTTPClient, Base) is the caller's and is left alone.
func (c *Client) CloseIdleConnections() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// explicitCredentials names the credentials the caller gave, or "".
func explicitCredentials(opts Options) string {
	switch {
	case opts.TokenSource != nil:
		return "caller's token source"
	case opts.CredentialsFile != "":
		return "credentials file " + opts.CredentialsFile
	case len(opts.CredentialsJSON) > 0:
		return "credentials JSON"
	}
	return ""
}

// httpsOnly adds credentials to https requests and to no other: whatever
// URL a request names (a session URI read from disk, a redirect), a token
// never travels in cleartext.
type httpsOnly struct{ auth, plain http.RoundTripper }

func (t httpsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme == "https" {
		return t.auth.RoundTrip(r)
	}
	return t.plain.RoundTrip(r)
}

// transientTokens reports a token endpoint's 429 or 5xx as a
// *googleapi.Error with that code, so retry's default classification
// retries it like any other server's: a refresh that meets a passing
// outage in the middle of a long upload must not end the upload. Other
// token errors (a revoked key: 400 invalid_grant) stay permanent.
type transientTokens struct{ ts oauth2.TokenSource }

func (t transientTokens) Token() (*oauth2.Token, error) {
	tok, err := t.ts.Token()
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil && (re.Response.StatusCode == 429 || re.Response.StatusCode >= 500) {
		return nil, &googleapi.Error{Code: re.Response.StatusCode, Message: "fetching an OAuth token: " + err.Error()}
	}
	return tok, err
}

// findTokenSource walks the credential chain. A nil source with a nil error
// means "no credentials, on purpose".
func findTokenSource(ctx context.Context, opts Options, emulator bool) (oauth2.TokenSource, string, error) {
	scope := ScopeReadWrite
	if opts.ReadOnly {
		scope = ScopeReadOnly
	}
	// Tokens are refreshed long after New returns: never tie them to ctx.
	tokCtx := context.WithoutCancel(ctx)
	switch {
	case opts.TokenSource != nil:
		return opts.TokenSource, "caller's token source", nil
	case opts.CredentialsFile != "":
		b, err := os.ReadFile(opts.CredentialsFile)
		if err != nil {
			return nil, "", badCredentials("auth: reading credentials file: %w", err)
		}
		ts, err := fromJSON(tokCtx, b, scope)
		if err != nil {
			return nil, "", badCredentials("auth: credentials file %s: %w", opts.CredentialsFile, err)
		}
		return ts, "key file " + opts.CredentialsFile, nil
	case len(opts.CredentialsJSON) > 0:
		ts, err := fromJSON(tokCtx, opts.CredentialsJSON, scope)
		if err != nil {
			return nil, "", badCredentials("auth: credentials JSON: %w", err)
		}
		return ts, "key JSON", nil
	case opts.NoAuth:
		return nil, "none (NoAuth)", nil
	case emulator:
		return nil, "none (" + EmulatorHostEnv + ")", nil
	}
	return applicationDefault(ctx, tokCtx, opts.OnGCE, scope)
}

// fromJSON builds a token source from a key file's content, after checking
// the fields its type needs, so a truncated or wrong file fails here rather
// than at the first request. The two usual types are built as
// google.CredentialsFromJSON builds them, but without its error-wrapping
// layer, which would hide the oauth2.ReuseTokenSource beneath from [fresh]:
// a token the server refused could then not be replaced before it expires.
func fromJSON(ctx context.Context, b []byte, scope string) (oauth2.TokenSource, error) {
	k, err := checkKey(b)
	if err != nil {
		return nil, err
	}
	switch k.Type {
	case "service_account":
		cfg, err := google.JWTConfigFromJSON(b, scope)
		if err != nil {
			return nil, err
		}
		return cfg.TokenSource(ctx), nil
	case "authorized_user":
		return k.userConfig(scope).TokenSource(ctx, &oauth2.Token{RefreshToken: k.RefreshToken}), nil
	}
	creds, err := google.CredentialsFromJSON(ctx, b, scope)
	if err != nil {
		return nil, err
	}
	return creds.TokenSource, nil
}

// userConfig is the OAuth client of an authorized-user file, as
// golang.org/x/oauth2/google makes it.
func (k keyFields) userConfig(scope string) *oauth2.Config {
	ep := oauth2.Endpoint{AuthURL: google.Endpoint.AuthURL, TokenURL: k.TokenURI, AuthStyle: oauth2.AuthStyleInParams}
	if ep.TokenURL == "" {
		ep.TokenURL = google.Endpoint.TokenURL
	}
	return &oauth2.Config{ClientID: k.ClientID, ClientSecret: k.ClientSecret, Scopes: []string{scope}, Endpoint: ep}
}

// keyFields are the parts of a key file checkKey looks at. The secrets are
// only tested for presence, never printed.
type keyFields struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	TokenURI     string `json:"token_uri"`
}

func checkKey(b []byte) (keyFields, error) {
	var k keyFields
	if err := json.Unmarshal(b, &k); err != nil {
		// json's errors give an offset, never the content.
		return k, fmt.Errorf("not a JSON key file: %w", err)
	}
	var missing []string
	need := func(name, v string) {
		if v == "" {
			missing = append(missing, name)
		}
	}
	switch k.Type {
	case "":
		return k, errors.New(`missing "type" (want "service_account" or "authorized_user")`)
	case "service_account":
		need("client_email", k.ClientEmail)
		need("private_key", k.PrivateKey)
	case "authorized_user":
		need("client_id", k.ClientID)
		need("refresh_token", k.RefreshToken)
	}
	if len(missing) > 0 {
		return k, fmt.Errorf("%s key lacks %s", k.Type, strings.Join(missing, ", "))
	}
	return k, nil
}
