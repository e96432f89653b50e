// Package fakegcs is a fake Google Cloud Storage server that fails on
// command. It speaks the JSON API (and path-style XML reads) faithfully
// enough that Google's own clients work against it unchanged, and it injects
// the failures gcsput must survive: error statuses, connection and stream
// resets before, during and after a request, partially persisted chunks,
// short 308s, expired sessions, stalls, bandwidth limits and damaged
// downloads, over the wire GCS speaks (TLS, HTTP/2, a round-trip time, a
// per-connection rate).
//
// # Starting a server
//
// In a test, [NewTest] starts a server on a random 127.0.0.1 port, closes it
// at cleanup and fails the test if a scripted fault never fired:
//
//	srv := fakegcs.NewTest(t, fakegcs.Options{Buckets: []string{"bkt"}})
//	client, _ := storage.NewClient(ctx,
//		option.WithEndpoint(srv.Endpoint()), // srv.URL() + "/storage/v1/"
//		option.WithoutAuthentication())
//
// For gcsput's library, pass the base URL:
// upload.Options{Endpoint: srv.URL(), Auth: auth.Options{NoAuth: true}}.
//
// Outside tests, [New] returns the server and an error; [Server.Close] stops
// it. cmd/fakegcs is the same server as a program.
//
// # Storage
//
// [Options].Backend selects where object bytes go: memory (the default), a
// directory (streamed to files, nothing held whole in RAM) or discard (sizes,
// hashes and generations only). Metadata always lives in memory. Seed and
// inspect content with [Server.CreateBucket], [Server.PutObject],
// [Server.PutObjectFrom], [Server.Object], [Server.Attrs] and
// [Server.ObjectNames].
//
// # Protocol
//
// Paths served: /storage/v1/... (buckets insert/get/list/patch/delete;
// objects get/list/patch/update/delete/compose/copyTo/rewriteTo/moveTo;
// holds and object retention enforced as GCS enforces them; folders of
// hierarchical-namespace buckets: insert/get/list/delete/renameTo and
// operations get),
// /upload/storage/v1/... (uploadType media, multipart and resumable), its
// alias /resumable/upload/storage/v1/..., /download/storage/v1/..., and
// GET/HEAD /BUCKET/OBJECT.
//
// Resumable uploads follow GCS: the session URI
// (.../upload/storage/v1/b/BUCKET/o?uploadType=resumable&upload_id=ID) comes
// back in Location; chunks arrive by PUT or POST with Content-Range
// "bytes a-b/total|*"; a non-final chunk must be a multiple of 256 KiB; the
// answer is 308 with "Range: bytes=0-N" (no Range when nothing is persisted),
// or 200 with "X-Http-Status-Code-Override: 308" when the request says
// "X-GUploader-No-308: yes"; a status query ("bytes */total|*") finalizes only
// when total equals what is persisted; a chunk overlapping persisted bytes is
// taken from the persisted offset on, one starting beyond it is rejected
// (400); X-Upload-Content-Length is enforced; X-Goog-Hash on the final
// request and crc32c/md5Hash in the initiation metadata are checked (400);
// DELETE cancels (499); an unknown session is 404 and an expired one 410.
// Chunk bytes are streamed to the backend in 256 KiB quanta and hashed once,
// as they are persisted.
//
// Object listings take prefix, delimiter, includeTrailingDelimiter,
// startOffset, endOffset, maxResults, pageToken and matchGlob (*, **, ?,
// [set], [!set], {a,b} and \ escapes, matched against whole names before the
// delimiter groups them; [Stats].GlobLists counts the listings that used it).
// Names are kept in byte order per bucket, so a page costs a seek and the
// entries it returns (a rolled-up prefix is one seek), not the bucket.
// The fields parameter cuts objects, listings and rewrites to what it
// selects (items(name,size), items/name, *); an expression that is
// malformed or names a member the resource lacks is 400 "Invalid field
// selection", as in GCS.
//
// Objects carry generations, metagenerations, crc32c and md5Hash, and the
// customTime an insert, upload or compose destination gives (RFC 3339, as
// the JSON API's Object resource has it; an unparsable one is taken as unset
// where GCS answers 400, and patching it is not modelled);
// ifGenerationMatch (0 = must not exist), ifGenerationNotMatch,
// ifMetagenerationMatch and ifMetagenerationNotMatch fail with 412 (304 for
// "not match" on reads). Downloads carry x-goog-hash (of the whole object,
// whatever the range), x-goog-generation, x-goog-metageneration and
// x-goog-stored-content-length, honour one Range (206 with Content-Range
// "bytes A-B/SIZE"; 416 when it starts past the end), answer 404 to a read
// pinned with generation= once that generation is replaced, and transcode
// gzip objects for clients that do not accept gzip, whole whatever the
// Range, unless the object's Cache-Control has no-transform. A read, copy
// or compose keeps the generation it looked up readable until it is done,
// even if an overwrite replaces it meanwhile. Errors have GCS's JSON shape
// {"error":{"code":..,"message":..,"errors":[{"domain":"global","reason":..}]}}.
//
// Compose (cloud.google.com/storage/docs/composite-objects) takes 1 to 32
// sources, looked up in the destination's bucket, each with its generation
// and objectPreconditions.ifGenerationMatch (404 and 412 when unmet); the
// destination's ifGenerationMatch and ifMetagenerationMatch (412); sources
// of the destination's storage class only (400; the bucket's default class
// when the destination names none); deleteSourceObjects. The
// result's crc32c is combined from the sources' (a declared crc32c must
// match it), it has no md5Hash (a declared one is ignored), and its
// componentCount is the sum of the sources' (1 for an object that is not
// composite), saturating at 2^31-1 as GCS's does now that it no longer
// refuses composites of over 1024 components.
//
// # Faults
//
// [Server.Inject] scripts a [Fault]: what to do ([Kind]), to which requests
// (operation as a JSON API method ID such as "storage.objects.insert",
// bucket, object, resumable [Fault].Phase, chunk [Fault].Offset), how often
// ([Fault].Times, [Fault].Skip) or with what seeded [Fault].Probability. It
// returns an [Injection] whose Fired count tests can assert. A resumable
// chunk counts as storage.objects.insert and matches Offset by its
// Content-Range start; every download (JSON, /download, XML) is
// storage.objects.get.
//
//	srv.Inject(fakegcs.Fault{Op: "storage.objects.insert", Phase: fakegcs.PhaseChunk,
//		Offset: new(int64(8 << 20)), Kind: fakegcs.KindReset, AfterBytes: 5 << 20})
//
// Go's net/http client transparently retries an idempotent request (GET,
// HEAD, or one with an Idempotency-Key header) once when a reused connection
// is reset before any response byte: such a reset fault fires but the
// caller may never see it. [Injection.Fired] is the reliable count.
//
// A standalone server takes faults over HTTP (see [Server.ServeHTTP]'s
// control API: POST /_fakegcs/faults with a JSON fault, GET /_fakegcs/stats)
// and implements the storage-testbench Retry Test API: POST /retry_test with
// {"instructions":{"storage.objects.insert":["return-503-after-256K"]}} and
// the returned id sent in the x-retry-test-id header; GET and DELETE
// /retry_test/{id}. Known instructions: return-X, return-X-after-YK,
// return-reset-connection, return-broken-stream,
// return-broken-stream-after-YK, return-broken-stream-final-chunk-after-YB,
// stall-for-Ts-after-YK.
//
// # The wire
//
// storage.googleapis.com speaks TLS, offers HTTP/2 by ALPN, is tens of
// milliseconds away, and moves only so much per TCP connection. fakegcs
// models each, so that tests and benchmarks see the wire clients meet:
//
//   - [Options].TLS (cmd/fakegcs -tls) serves HTTPS with a self-signed
//     certificate ([Server.CertPEM]) and offers "h2" and "http/1.1" by ALPN,
//     as GCS does; Go's http.Transport, [Server.Client] among them, then
//     carries all its requests as streams of one connection, up to the 100
//     concurrent streams GCS advertises. [Options].HTTP1Only (-h2=false)
//     offers http/1.1 alone. Without TLS the server speaks HTTP/1.1 only.
//   - Faults keep their meaning over HTTP/2: a reset ([KindReset], and the
//     cut of [KindTruncate] or of a status after AfterBytes) resets the
//     request's stream (RST_STREAM INTERNAL_ERROR, which GCS's front ends
//     send and which the official Go client's storage.ShouldRetry does not
//     retry) and the connection's other streams carry on; [KindDropResponse]
//     resets the TCP connection and every stream on it. Stalls, throttles,
//     partial persists and statuses act on the request's stream alone.
//   - [Options].RTT (-rtt 20ms) delays what the server writes on each
//     connection by a round-trip time: a pipeline, so throughput is not
//     divided by it, but a response, a TLS handshake and an HTTP/2
//     WINDOW_UPDATE (which lets a client send more of an upload) each pay
//     it once.
//   - [Options].CapRate (-cap-rate 50M) holds every connection, TCP, TLS or
//     [Server.InMemoryClient]'s, to that many bytes per second in each
//     direction by a token bucket of its own, headers included: requests
//     kept alive on one connection, and the streams of an HTTP/2
//     connection, share its rate; N parallel connections get N times it.
//     It is not a fault and composes with the faults that fire and with
//     the RTT (bytes leave at the capped rate, then travel); KindThrottle
//     slows chosen requests instead, each on its own.
//   - [Options].Limits (-write-rate, -read-rate, -doubling,
//     -object-interval, -link-rate; [Server.SetLimits]) are GCS's
//     request-rate limits: a bucket's capacity for writes and reads with
//     its burst and growth, one write a second per object name, answered
//     with GCS's 429, and a total rate shared by every connection; see
//     [Limits]. [Stats].Refused counts the refusals per limit.
//
// [Stats].Connections counts the connections accepted and
// [Stats].Protocols the requests and connections per protocol
// ("HTTP/1.1", "HTTP/2.0"), so a test can assert how many connections a
// client used and whether it took HTTP/2.
//
// # Observability
//
// [Server.Stats] counts requests per operation, fired faults per kind and,
// per resumable session, bytes received versus persisted, so a test can
// assert that no byte was sent twice beyond one chunk per fault.
// [Server.Log] is the request log (method, Content-Range, status, response
// Range, fault), and [Server.LastSession] the newest session of an object.
// Upload session IDs never appear in either, nor in log lines.
// [Server.InsertCounts] says how many times each object of a bucket was
// created by an insert, so a test can check that every file of a tree, however
// many, arrived exactly once (the request log keeps only the last 10,000).
//
// # Performance
//
// Chunk bytes are read into pooled 256 KiB blocks that the memory backend
// keeps without copying and recycles when an object is replaced or deleted;
// CRC32C and MD5 run on a goroutine of their own while the next block is
// read. MD5 (which GCS computes and gcloud and gsutil verify) costs more per
// byte than loopback HTTP itself: for benchmarks that measure a client,
// use [BackendDiscard] and, when no client needs md5Hash,
// [Options].DisableMD5. BenchmarkResumable256MiB and BenchmarkSmallUploads
// compare fakegcs with a plain discard handler in the same run.
package fakegcs
