// Package auth gives gcsput one authenticated *http.Client for Cloud Storage,
// and the endpoint to send it to.
//
// # Where credentials come from
//
// [New] takes the first of these that applies:
//
//  1. [Options.HTTPClient] or [Options.TokenSource], given by the caller: used as is.
//  2. [Options.CredentialsFile] or [Options.CredentialsJSON]: a service-account key or an
//     authorized-user file (what `gcloud auth application-default login` writes), read with
//     [google.CredentialsFromJSON].
//  3. STORAGE_EMULATOR_HOST set (or [Options.NoAuth]): no credentials at all. Requests go
//     to the emulator, as with Google's own clients: "host:port" means http://host:port.
//     This step comes before Application Default Credentials on purpose: a real token must
//     never be sent to an emulator, and an emulator user needs no credentials.
//  4. Application Default Credentials, in the order of [google.FindDefaultCredentials]:
//     the file named by GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file
//     ($HOME/.config/gcloud/application_default_credentials.json), then the metadata server
//     when running on Google Cloud ([Options.OnGCE] decides; tests replace it so they never
//     probe the network).
//
// An endpoint on plain http never gets credentials: a token sent in cleartext can be read
// by anyone on the path. Credentials given explicitly with such an endpoint are not used,
// and [Client.Warnings] says so. Whatever the endpoint, the client's transport adds a token
// only to https requests, so a session URI on another scheme never receives one.
//
// When none applies, [New] returns a [*NoCredentialsError] (matching [ErrNoCredentials])
// that lists what was tried and the three usual fixes. A key that was found but cannot be
// used (a file that cannot be read, not JSON, or lacking the fields its type needs) is an
// error matching [ErrBadCredentials] that names it. No error of this package contains a
// token, a key or a refresh token.
//
// # Scopes and refresh
//
// The scope is devstorage.read_write, or devstorage.read_only with [Options.ReadOnly].
// Tokens are refreshed by golang.org/x/oauth2 as they near expiry (10 s before), so a
// transfer that lasts longer than a token's lifetime keeps working; the package's tests
// prove it with a loopback token server that issues tokens living about a second.
// A token endpoint that answers 429 or 5xx during a refresh gives a *googleapi.Error
// with that code, which package retry retries like any server error; other token
// errors (a revoked key) are final.
//
// A token can also be refused before its expiry: revoked, rotated, or expired early by
// clock skew. When the server answers 401, the transport drops that token and sends the
// request again with a fresh one, at most [MaxRefreshes] times, as google-auth's
// AuthorizedSession does; the last 401 is then the answer. Only a request whose body can be
// sent again (none, or http.Request.GetBody) is repeated; for another, such as a resumable
// upload's chunk, the 401 is returned with the token already dropped, and package resumable
// asks the session's offset (with the fresh token) and sends from there. A fresh token is
// fetched past any cache of the source: the key files' sources are built so that this
// works; a caller's source that caches in a way the transport cannot see past is asked
// again as it is.
//
// # Connections
//
// The client's transport ([NewTransport]) keeps enough idle connections per host for
// [Options.Parallelism] concurrent transfers, so parallel uploads reuse keep-alive
// connections instead of opening (and TLS-handshaking) a new one per request.
package auth
