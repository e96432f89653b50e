package upload

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gcsput/gcsput/auth"
	"github.com/gcsput/gcsput/internal/fill"
	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
)

// Defaults for the zero values of Options.
const (
	DefaultChunkSize          = resumable.DefaultChunkSize
	DefaultParallelism        = auth.DefaultParallelism
	DefaultSmallFileThreshold = 8 << 20
	DefaultSliceThreshold     = 128 << 20
	DefaultMaxSlices          = DefaultParallelism // the slices at DefaultParallelism; see Options.MaxSlices
	DefaultParallelThreshold  = 128 << 20
	DefaultComponentSize      = fill.MostComponent // once every stream has one; see Options.ComponentSize
)

// ParallelUploadMode says when a large file is uploaded as a parallel
// composite upload (see Options.ParallelUpload).
type ParallelUploadMode string

// The modes of Options.ParallelUpload.
const (
	// ParallelAuto composes only where it is safe and costs nothing extra:
	// into a bucket whose default storage class is STANDARD, with no
	// retention policy and no default event-based hold, and an upload
	// that names no other storage class. "" means ParallelAuto.
	ParallelAuto ParallelUploadMode = "auto"
	// ParallelOn composes every file of at least ParallelThreshold bytes.
	ParallelOn ParallelUploadMode = "on"
	// ParallelOff never composes.
	ParallelOff ParallelUploadMode = "off"
)

// Options configure a [Client]. The zero value uploads to Cloud Storage (or
// the emulator in STORAGE_EMULATOR_HOST) with Application Default
// Credentials, 8 files at a time, 16 MiB chunks and GCS's retry policy; it
// saves nothing to disk (set StateDir, e.g. to [DefaultStateDir], to resume
// across processes).
type Options struct {
	// Endpoint is the base URL of the JSON API, "scheme://host[:port]"
	// without a path: for fakegcs, Server.URL() (e.g. "http://127.0.0.1:4443").
	// The official client's form, with "/storage/v1/" (fakegcs's
	// Server.Endpoint()), means the same and is taken; any other path, or
	// a value without a scheme, is an error matching ErrBadOption. Empty:
	// the emulator named by STORAGE_EMULATOR_HOST if set, else
	// https://storage.googleapis.com. Auth.Endpoint follows the same rule.
	Endpoint string

	// HTTPClient sends every request and carries the credentials. Nil: one
	// is made by auth.New from Auth (with Endpoint and Parallelism filled
	// in), with a transport sized for Parallelism.
	HTTPClient *http.Client

	// Auth says where credentials come from when HTTPClient is nil; see
	// package auth. Its Endpoint and Parallelism default to the fields
	// above.
	Auth auth.Options

	// ChunkSize is the number of bytes per upload request: a multiple of
	// 256 KiB (GCS's rule), 0 means DefaultChunkSize (16 MiB), and then a
	// component of a composite upload goes up in one request whatever its
	// size. Files are streamed from disk with no chunk buffer; a stream
	// (UploadReader) holds one chunk in memory.
	ChunkSize int

	// Retry runs every request. Nil: a zero retry.Runner (GCS truncated
	// exponential backoff, at most 12 attempts and 10 minutes without
	// progress; the budget restarts whenever the server's offset advances).
	// The Runner is shared by all workers and never modified. A refused
	// request (429, 503) waits its own backoff; the other workers go on
	// (see Parallelism for how many).
	Retry *retry.Runner

	// Parallelism is the number of data streams at once: requests that
	// move an object's bytes. A file's transfer takes one; the slices of a
	// sliced download and the components of a composite upload take more
	// while they are free, never more than Parallelism in all; batch
	// methods (UploadDir, DownloadPrefix, Resume) run this many files at
	// once. 0 means DefaultParallelism (12). Memory is bounded by
	// Parallelism × ChunkSize at most (see the package doc).
	//
	// Parallelism is also the ceiling of the requests in flight to one
	// bucket. A bucket admits a limited rate of requests (GCS: about 1,000
	// writes and 5,000 reads a second at first, growing while the load
	// stays near it) and refuses the rest with 429 or 503. So the Client
	// keeps a window per bucket, as TCP does: it starts at Parallelism, is
	// cut to 0.7 of itself on a refusal (once per window of
	// requests: a burst of refusals from one overload is one cut; the first
	// one goes to 0.7 of what the bucket admitted of that window, never
	// below 1), and grows again by a fifth of the window it was cut from
	// per second (a rate in time, whatever the round trip), following the
	// bucket's capacity as it grows. Every
	// request to the bucket (uploads and session starts, metadata,
	// listings, composes, deletes, downloads) takes a slot from when it is
	// sent until its answer's headers arrive; the chunks and status
	// queries of a started session take none (one object write, on its
	// own stream) but their 429s and 503s cut the window too. A refused
	// request gives its slot back and waits its own backoff (Retry); the
	// others go on at the reduced window. A 429 for one object's mutation rate (GCS's one write a
	// second to an object name) cuts nothing: only that request waits.
	// Workers past the window wait for a slot, holding what their transfer
	// holds (the memory bound above is unchanged). BatchProgress reports
	// the window and the refusals.
	Parallelism int

	// StateDir is where unfinished transfers are saved so a later process
	// can resume them. Empty means nothing is saved: a library never writes
	// into the user's home on its own; pass DefaultStateDir() for the
	// location the gcsput command uses. NoState also disables saving, with
	// StateDir set.
	StateDir string
	NoState  bool

	// NoChecksumCache turns off the checksum cache. With a state directory,
	// the CRC32C of each local file a comparison reads (Sync in both
	// directions, SkipUnchanged) is saved there, in crc32c.cache, with the
	// file's size, mtime and ctime (to the nanosecond), inode and device;
	// a later comparison of the file with the same identity uses it rather
	// than reading the file again, unless the file changed within 2 seconds
	// of when it was read (then it is read again). The comparison is still
	// size and CRC32C. See docs/sync.md for its bounds; removing the file
	// drops it.
	NoChecksumCache bool

	// SmallFileThreshold: files smaller than this many bytes are uploaded
	// in one multipart request (with their CRC32C, under the retry policy)
	// instead of a resumable session: one request instead of two or more,
	// and nothing to save. 0 means DefaultSmallFileThreshold (8 MiB);
	// negative means every file takes a resumable session.
	SmallFileThreshold int64

	// SliceThreshold: an object of at least this many bytes is downloaded
	// to a file as up to MaxSlices ranged GETs at once (slices), each
	// written at its offset into the one temporary file, resumed inside
	// itself after a break and across runs, and checked by combining the
	// slices' CRC32Cs. GCS serves each connection at a limited rate, so
	// several are faster on a real link. The first response decides: no
	// request is spent to learn the size. Objects stored gzip-encoded and
	// streams (DownloadWriter) use one stream. 0 means
	// DefaultSliceThreshold (128 MiB); negative never slices.
	SliceThreshold int64

	// MaxSlices is the number of slices of one download. 0 (the default)
	// follows the streams: one slice per stream of Parallelism, each of
	// at least MinPartSize (8 MiB), so -j 32 fetches 256 MiB as 32
	// slices; at the default Parallelism (12) an object of 96 MiB or more
	// comes in DefaultMaxSlices (12). 1 never slices. Slices draw from the
	// Parallelism budget.
	MaxSlices int

	// ParallelUpload says when a file of at least ParallelThreshold bytes
	// goes up as a parallel composite upload: split into components of at
	// least ComponentSize bytes (at most 32, GCS's compose limit), each
	// uploaded, resumably, as a temporary object under "gcsput-tmp/" in
	// the destination's bucket, on the Parallelism budget like the slices
	// of a download; then one compose request makes the destination with
	// the upload's metadata and preconditions, and the components are
	// deleted. A composite object has a CRC32C but no MD5. "" means
	// ParallelAuto; see the modes for when each composes.
	ParallelUpload ParallelUploadMode

	// ParallelThreshold is the size in bytes from which a file is a
	// parallel composite upload (when ParallelUpload allows it). 0 means
	// DefaultParallelThreshold (128 MiB); negative never composes.
	ParallelThreshold int64

	// ComponentSize is the least size in bytes of a component of a
	// parallel composite upload (the last may be smaller); a file of more
	// than 32 components' worth has 32 larger ones. A file that would
	// have fewer than 2 is uploaded whole. 0 (the default) follows the
	// streams, in whole rounds of them: one component per stream of
	// Parallelism, of DefaultComponentSize (32 MiB) or less, down to
	// MinPartSize (8 MiB) (256 MiB at -j 16: 16 components of 16 MiB);
	// past 32 MiB a stream, as many rounds as keep them near 32 MiB within
	// 32 components (256 MiB at -j 5: 10 of 25.6 MiB; 1 GiB at the default
	// -j 12: 24 of 42.7 MiB).
	ComponentSize int64

	// StallTimeout abandons a request during which no bytes moved for this
	// long, then continues from the server's offset. 0 means 60 s; negative
	// disables it.
	StallTimeout time.Duration

	// Progress, if set, is called as a transfer moves: every 256 KiB sent
	// (uploads) or 1 MiB written (downloads), and at the end; a small file
	// sent in one request reports 0 when its request starts. It is called
	// from the workers' goroutines, concurrently: it must be safe for that,
	// and quick.
	Progress func(Progress)

	// BatchProgress, if set, is given the totals of everything the Client
	// transfers (files and bytes done of those known so far, the rate over
	// the time transfers ran, the time left, retries and resumes; see
	// [BatchProgress]) each time a transfer moves, starts or ends, and at
	// each retry or resume. It is called from the workers' goroutines, one
	// call at a time and in order: it must be quick and must not call the
	// Client.
	BatchProgress func(BatchProgress)

	// OnResult, if set, is given each result of a batch method (Upload,
	// UploadDir, DownloadObjects, DownloadPrefix, Resume) as soon as it is
	// final, in completion order, concurrently from the workers: so a
	// long batch can report each file when it ends rather than all at the
	// end. Every result the method returns is given exactly once.
	OnResult func(*Result)

	// OnEvent, if set, receives every step of every transfer (chunks,
	// status queries, retries with wait and cause, resumes), concurrently
	// from the workers. Events never contain session URIs or tokens.
	OnEvent func(resumable.Event)

	// Now is the clock for session ages; nil means time.Now.
	Now func() time.Time

	// Shard names this worker's share of a sharded job ("I/N"); it is kept in
	// every saved transfer, and a saved transfer of another share is never
	// resumed (nor removed) by this one.
	Shard string

	// Manifest, if set, is the path of a copy manifest as gcloud storage
	// cp --manifest-path (gsutil cp -L) writes it: a CSV file with one row
	// per result of a batch method (Source, Destination, Start, End, Md5,
	// Source Size, Bytes Transferred, Result "OK", "skip" or "error",
	// Description), appended as each ends; the header is written when the
	// file is missing or empty. Every transfer whose source the file
	// recorded as OK or skip when New opened it (as gcloud, rows this
	// Client adds do not count) is skipped (Note "in manifest") and
	// gets no new row: a rerun with the same manifest sends only the rest.
	// Sources and destinations are named as gcloud does:
	// gs://BUCKET/OBJECT, or file://PATH with the path as given. Md5 is left empty (gcsput
	// verifies CRC32C). Interrupted transfers get no row (a rerun resumes
	// them). A torn last row (a killed process) is ignored and cut off.
	// The file is opened by New and closed by Close; it is created 0644
	// less the umask. "": no manifest.
	Manifest string

	// EncryptionKey, KMSKeyName and DecryptionKeys are the keys of every
	// call that sets none: a call's Encryption (UploadOptions.Encryption and
	// the others), when set, replaces all three for that call.
	//
	// EncryptionKey, if set, is a customer-supplied encryption key (CSEK,
	// 32 bytes of AES-256) that encrypts every object the client writes
	// (uploads, composite uploads and their components), and reads objects
	// written with it. It is sent with every request that needs it, every
	// chunk and status query of a resumable upload, every range of a
	// sliced download; state records hold its SHA256 only, so resuming an
	// upload started with a key needs the same key (resumable.ErrEncryptionKey).
	// nil: objects are encrypted as the bucket says (Google's keys or the
	// bucket's default KMS key). A non-nil key of no bytes is not "no key":
	// New refuses it (ErrBadOption).
	EncryptionKey resumable.EncryptionKey

	// KMSKeyName, if set, encrypts every object the client writes with
	// this Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K),
	// unless an upload's Attrs.KMSKeyName names another. Not with
	// EncryptionKey. "" means none; a name of only whitespace, or with
	// whitespace around it, is refused by New (ErrBadOption).
	KMSKeyName string

	// DecryptionKeys are further customer-supplied keys to read with: an
	// object written with a CSEK is read with the key (of these and
	// EncryptionKey) whose SHA256 its metadata names. Reading one whose
	// key is not given fails with ErrNoDecryptionKey. When any key is
	// given, a download reads the object's metadata before its bytes.
	// An empty key in the list is refused by New (ErrBadOption).
	DecryptionKeys []resumable.EncryptionKey

	// UserProject, if set, is the project billed for every request (the
	// userProject parameter), which a requester-pays bucket requires: GCS
	// answers 400 to a request without it. Empty bills the bucket's owner.
	UserProject string

	// Warn, if set, is told what the user should know but that fails
	// nothing: credentials not used on a plain-http endpoint, a saved
	// session ignored because it cannot be trusted (a record that is a
	// symlink, not 0600 or another user's; a session URI on another host
	// than the endpoint), the first failure to save a transfer's state
	// (see Result.SaveErr). Nil drops them.
	Warn func(msg string)
}

// Progress reports one transfer's progress.
type Progress struct {
	// Source and Dest are as in Result.
	Source string
	Dest   string
	// Done is how far the transfer has got: for uploads, the offset the
	// bytes being sent have reached (it moves back to the server's offset
	// after a failed request); for downloads, the bytes written. Size is
	// the total, -1 while unknown.
	Done int64
	Size int64
}

// DefaultStateDir returns where sessions are saved by default:
// $XDG_STATE_HOME/gcsput, else ~/.local/state/gcsput on Unix, and
// gcsput/state under os.UserConfigDir elsewhere (%AppData% on Windows,
// ~/Library/Application Support on macOS).
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "gcsput"), nil
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("upload: no state directory: %w", err)
		}
		return filepath.Join(home, ".local", "state", "gcsput"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("upload: no state directory: %w", err)
	}
	return filepath.Join(d, "gcsput", "state"), nil
}

// ErrBadOption is matched (errors.Is) by the error New returns for an
// invalid option.
var ErrBadOption = errors.New("bad option")

// checkOptions validates opts and fills in defaults.
func checkOptions(o Options) (Options, error) {
	if o.ChunkSize == 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.ChunkSize < 0 || o.ChunkSize%(256<<10) != 0 {
		return o, fmt.Errorf("upload: %w: chunk size %d is not a positive multiple of 256 KiB (262144 bytes)", ErrBadOption, o.ChunkSize)
	}
	if o.Parallelism < 0 {
		return o, fmt.Errorf("upload: %w: parallelism %d is negative", ErrBadOption, o.Parallelism)
	}
	if o.Parallelism == 0 {
		o.Parallelism = DefaultParallelism
	}
	if o.SmallFileThreshold == 0 {
		o.SmallFileThreshold = DefaultSmallFileThreshold
	}
	if o.SliceThreshold == 0 {
		o.SliceThreshold = DefaultSliceThreshold
	}
	if o.MaxSlices < 0 {
		return o, fmt.Errorf("upload: %w: max slices %d is negative", ErrBadOption, o.MaxSlices)
	}
	if err := checkParallelUpload(&o); err != nil {
		return o, err
	}
	if err := checkKeys(o); err != nil {
		return o, err
	}
	var err error
	if o.Endpoint, err = checkEndpoint("Endpoint", o.Endpoint); err != nil {
		return o, err
	}
	if o.Auth.Endpoint, err = checkEndpoint("Auth.Endpoint", o.Auth.Endpoint); err != nil {
		return o, err
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.StateDir == "" {
		o.NoState = true
	}
	return o, nil
}

// checkParallelUpload validates and defaults the composite upload options.
func checkParallelUpload(o *Options) error {
	switch o.ParallelUpload {
	case "":
		o.ParallelUpload = ParallelAuto
	case ParallelAuto, ParallelOn, ParallelOff:
	default:
		return fmt.Errorf("upload: %w: parallel upload mode %q is not auto, on or off", ErrBadOption, o.ParallelUpload)
	}
	if o.ParallelThreshold == 0 {
		o.ParallelThreshold = DefaultParallelThreshold
	}
	if o.ComponentSize < 0 {
		return fmt.Errorf("upload: %w: component size %d is negative", ErrBadOption, o.ComponentSize)
	}
	return nil
}

// jsonAPIPath is the path of the JSON API under an endpoint: what a user of
// the official client passes to option.WithEndpoint (and what
// fakegcs.Server.Endpoint returns) ends with it.
const jsonAPIPath = "/storage/v1"

// checkEndpoint returns ep ("" or scheme://host[:port]) with a trailing "/"
// or "/storage/v1/" cut: the library builds every path itself
// (/storage/v1/..., /upload/storage/v1/..., /download/storage/v1/...), so the
// JSON API endpoint of the official client means the same server. Any other
// path, or no scheme, is an error naming the value to pass. The rest (scheme,
// credentials in the URL) is auth.New's to check.
func checkEndpoint(field, ep string) (string, error) {
	if ep == "" {
		return ep, nil
	}
	u, err := url.Parse(ep)
	if !strings.Contains(ep, "://") || err != nil {
		return ep, fmt.Errorf("upload: %w: %s %q has no scheme: want scheme://host[:port], e.g. %q; for fakegcs use Server.URL()",
			ErrBadOption, field, ep, "http://"+strings.TrimSuffix(ep, "/"))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return ep, nil // auth.New refuses it, saying why
	}
	path := strings.TrimSuffix(u.Path, "/")
	if path != "" && path != jsonAPIPath {
		base := *u
		base.Path, base.RawPath, base.RawQuery, base.Fragment = "", "", "", ""
		return ep, fmt.Errorf("upload: %w: %s %q: want scheme://host[:port] without a path, e.g. %q; for fakegcs use Server.URL()",
			ErrBadOption, field, u.Redacted(), base.Redacted())
	}
	u.Path, u.RawPath = "", ""
	return u.String(), nil
}
