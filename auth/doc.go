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
// that lists what was tried and the three usual fixes. No error of this package contains a
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
// # Connections
//
// The client's transport ([NewTransport]) keeps enough idle connections per host for
// [Options.Parallelism] concurrent transfers, so parallel uploads reuse keep-alive
// connections instead of opening (and TLS-handshaking) a new one per request.
package auth
