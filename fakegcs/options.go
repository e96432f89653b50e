package fakegcs

import "time"

// Options configures a Server. The zero value is a plain-HTTP in-memory
// server on a random loopback port.
type Options struct {
	// Addr is the TCP address to listen on. Empty means "127.0.0.1:0", a
	// random loopback port; the server never listens beyond loopback unless
	// told to.
	Addr string

	// Backend is where object bytes live: BackendMemory (the default when
	// empty), BackendDir or BackendDiscard.
	Backend string

	// Dir is the directory of BackendDir. Empty with BackendDir means a new
	// temporary directory, removed by Close.
	Dir string

	// TLS serves HTTPS with a self-signed certificate for 127.0.0.1, ::1 and
	// localhost, made at start (see [Server.CertPEM] and [Server.Client]).
	// Like storage.googleapis.com it offers "h2" and "http/1.1" by ALPN, so
	// a client that takes HTTP/2 (Go's http.Transport does) multiplexes its
	// requests as streams on one connection; see HTTP1Only. Without TLS the
	// server speaks HTTP/1.1 only, as GCS offers no cleartext HTTP/2.
	TLS bool

	// HTTP1Only, with TLS, offers only "http/1.1" by ALPN: every request
	// then has a connection of its own at a time, as on GCS when a client
	// refuses HTTP/2. False (the default) offers "h2" first, as GCS does.
	HTTP1Only bool

	// RTT, when positive, is a round-trip time added to every connection:
	// what the server writes reaches the client RTT later, in order. The
	// delay is a pipeline, not a pause per write: bytes written meanwhile
	// follow at the rate they were written, so throughput is not divided by
	// the RTT, but every exchange that waits for the server does pay it
	// once: a request's response, a TLS handshake, an HTTP/2 WINDOW_UPDATE
	// that lets a client send more. At most 8 MiB are in flight on a
	// connection (a TCP send window's worth); a writer waits beyond that.
	// It composes with CapRate: bytes leave at the capped rate, then travel
	// RTT. Zero means none. It applies to [Server.InMemoryClient]'s pipes too.
	RTT time.Duration

	// Buckets are created at start.
	Buckets []string

	// RequesterPays are buckets created at start with requester pays on:
	// every request to them must name the project to bill (userProject),
	// as on GCS; see [Server.SetRequesterPays] and [Stats].Billed.
	RequesterPays []string

	// Faults are injected at start, as if passed to [Server.Inject].
	Faults []Fault

	// Seed seeds the generator behind [Fault].Probability. Zero is a valid
	// seed: runs are reproducible unless the seed is varied.
	Seed uint64

	// DisableMD5 skips computing md5Hash, as GCS does for composite objects.
	// MD5 is the most expensive thing fakegcs does per byte; benchmarks
	// that only need CRC32C may turn it off. Declared MD5 hashes are then
	// not checked.
	DisableMD5 bool

	// DefaultSoftDelete is the soft delete retention of the buckets of
	// Buckets and of a bucket created by a buckets.insert that sets no
	// softDeletePolicy: 0 (the default) is off, otherwise 7 to 90 days.
	// GCS's own default is 7 days (7*24*time.Hour); fakegcs keeps it off
	// unless asked, so that a delete in a test frees the object as it
	// always did. Buckets made with [Server.CreateBucket] start without
	// soft delete; [Server.SetSoftDelete] sets it.
	DefaultSoftDelete time.Duration

	// IgnoreComposeDeleteSources makes compose ignore deleteSourceObjects
	// and leave the sources, as a server (an emulator) that predates the
	// field does: for tests of a client's fallback.
	IgnoreComposeDeleteSources bool

	// CapRate, when positive, holds every connection to this many bytes
	// per second in each direction: request bytes read and response bytes
	// written, headers included, as GCS's per-connection rate on a real
	// link is limited; N parallel connections get N times the rate. Zero
	// means no cap. It applies to TCP and TLS connections (on wire bytes,
	// below TLS) and to [Server.InMemoryClient]'s, and unlike a
	// KindThrottle fault it is no fault: it composes with the faults that
	// fire.
	CapRate int64

	// Limits are GCS's request-rate limits to enforce: a bucket's capacity
	// for writes and reads, its growth, one object name's write rate and a
	// total link rate (see [Limits]). The zero value enforces none.
	// [Server.SetLimits] changes them while the server runs.
	Limits Limits

	// Token, when set, is the bearer token every API request must carry
	// ("Authorization: Bearer TOKEN"); others get GCS's 401. Requests to an
	// open upload session are exempt, as on GCS, where the session URI is
	// the credential, unless they carry a bearer token: one that is not
	// TOKEN gets 401 there too, as GCS refuses a credential it cannot
	// validate. Empty means no credentials are needed, as for an emulator.
	// [Server.SetToken] changes it while the server runs (a revoked or
	// rotated token). The control API and the retry-test API never need it.
	Token string

	// Now is the clock for object timestamps and generation numbers, and
	// for the request-rate [Limits] (token buckets, growth, the per-object
	// interval); nil means time.Now. Stalls, throttling, CapRate and
	// Limits.LinkRate always use real time.
	Now func() time.Time

	// LaxNames accepts bucket and object names that GCS refuses (see
	// cloud.google.com/storage/docs/objects#naming): "..", names with
	// CR, LF or NUL, over 1,024 bytes, invalid UTF-8, bucket "b" or "A B".
	// By default such a request gets GCS's 400, so a client bug that would
	// send one fails here as it would on GCS. Tests set it to plant hostile
	// names for a downloader to meet.
	LaxNames bool

	// RewriteBytesPerCall, when positive, is the most bytes one
	// objects.rewrite call copies, as if every client sent
	// maxBytesRewrittenPerCall (the smaller of the two applies): a rewrite of
	// a larger object takes several calls, each answered with a
	// rewriteToken, as GCS's rewrites across locations, storage classes or
	// keys do. It must be a multiple of 1 MiB (GCS's rule for
	// maxBytesRewrittenPerCall). Zero means a rewrite takes one call unless
	// the client asks for less. copyTo always takes one call.
	RewriteBytesPerCall int64

	// Logf, when set, receives one line per injected fault that fired and
	// per request answered with a 5xx. Upload session IDs never appear in it.
	Logf func(format string, args ...any)
}
