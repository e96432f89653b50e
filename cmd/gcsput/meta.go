package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"cloud.google.com/go/storage"

	"github.com/gcsput/gcsput/resumable"
	"github.com/gcsput/gcsput/retry"
	"github.com/gcsput/gcsput/upload"
)

// metaClient connects for the commands that make single metadata requests (stat, ls,
// meta set, sessions). With -v each retry is printed; --log gets them as events.
func (a *app) metaClient(ctx context.Context, r *remoteFlags, stateDir string) (*upload.Client, func(), error) {
	log, err := openEventLog(r.logFile)
	if err != nil {
		return nil, nil, err
	}
	runner, err := r.runner(nil)
	if err != nil {
		return nil, nil, err
	}
	max := runner.MaxAttempts
	if max == 0 {
		max = defaultAttempts(runner.Policy)
	}
	runner.OnRetry = func(e retry.Event) {
		log.write("retry", map[string]any{"attempt": e.Attempt, "wait_seconds": e.Wait.Seconds(), "error": redact(causeText(e.Err))})
		if r.verbose {
			fmt.Fprintln(a.stderr, retryLine("gcsput", e.Attempt, max, e.Wait, e.Err))
		}
	}
	// Metadata commands keep no sessions: "" opens no state directory at all.
	o := upload.Options{
		Endpoint: r.endpoint, Auth: r.authOptions(), Retry: runner, StateDir: stateDir,
		Warn: a.warn,
	}
	r.keys.apply(&o)
	c, err := upload.New(ctx, o)
	if err != nil {
		log.close()
		return nil, nil, err
	}
	return c, func() { c.Close(); log.close() }, nil
}

// withClient is the set-up of every command that needs only a client (stat, ls, du,
// cat, rm, meta set, restore): the remote flags are checked, then parse reads the
// operands and the command's other flags (nil: nothing to read), and only then is the
// client made, so a usage error needs no credentials; run gets it, and it is closed
// after.
func (a *app) withClient(ctx context.Context, r *remoteFlags, parse func() error, run func(*upload.Client) error) error {
	if err := r.check(); err != nil {
		return err
	}
	if parse != nil {
		if err := parse(); err != nil {
			return err
		}
	}
	c, done, err := a.metaClient(ctx, r, "")
	if err != nil {
		return err
	}
	defer done()
	return run(c)
}

// objectJSON is an object's metadata as stat --json and ls --json print it.
type objectJSON struct {
	URL                string            `json:"url"`
	Bucket             string            `json:"bucket"`
	Name               string            `json:"name,omitempty"`
	Prefix             string            `json:"prefix,omitempty"` // ls: a folder
	Size               int64             `json:"size"`
	ContentType        string            `json:"content_type,omitempty"`
	CacheControl       string            `json:"cache_control,omitempty"`
	ContentDisposition string            `json:"content_disposition,omitempty"`
	ContentEncoding    string            `json:"content_encoding,omitempty"`
	ContentLanguage    string            `json:"content_language,omitempty"`
	StorageClass       string            `json:"storage_class,omitempty"`
	CRC32C             string            `json:"crc32c,omitempty"`
	MD5                string            `json:"md5,omitempty"`
	Generation         int64             `json:"generation,omitempty"`
	Metageneration     int64             `json:"metageneration,omitempty"`
	Created            *time.Time        `json:"created,omitempty"`
	Updated            *time.Time        `json:"updated,omitempty"`
	Metadata           map[string]string `json:"metadata,omitempty"`
	// EncryptionKeySHA256 is the SHA256 of the customer-supplied key the object was
	// written with (its hashes are shown only when that key is given); KMSKeyName its
	// Cloud KMS key.
	EncryptionKeySHA256 string `json:"encryption_key_sha256,omitempty"`
	KMSKeyName          string `json:"kms_key_name,omitempty"`
	// TemporaryHold, EventBasedHold and the retention (mode, until) keep the object from
	// deletion and overwrite.
	TemporaryHold  bool       `json:"temporary_hold,omitempty"`
	EventBasedHold bool       `json:"event_based_hold,omitempty"`
	RetentionMode  string     `json:"retention_mode,omitempty"`
	RetainUntil    *time.Time `json:"retain_until,omitempty"`
	// Noncurrent and soft-deleted generations (ls -a, ls --soft-deleted).
	Deleted        *time.Time `json:"time_deleted,omitempty"`
	SoftDeleteTime *time.Time `json:"soft_delete_time,omitempty"`
	HardDeleteTime *time.Time `json:"hard_delete_time,omitempty"`
}

func objectOf(a *storage.ObjectAttrs) objectJSON {
	if a.Prefix != "" {
		return objectJSON{URL: "gs://" + a.Bucket + "/" + a.Prefix, Bucket: a.Bucket, Prefix: a.Prefix}
	}
	o := objectJSON{
		URL: "gs://" + a.Bucket + "/" + a.Name, Bucket: a.Bucket, Name: a.Name, Size: a.Size,
		ContentType: a.ContentType, CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition,
		ContentEncoding: a.ContentEncoding, ContentLanguage: a.ContentLanguage, StorageClass: a.StorageClass,
		CRC32C: resumable.EncodeCRC32C(a.CRC32C), Generation: a.Generation, Metageneration: a.Metageneration,
		Metadata: a.Metadata,
	}
	if len(a.MD5) > 0 {
		o.MD5 = encodeB64(a.MD5)
	}
	o.EncryptionKeySHA256, o.KMSKeyName = a.CustomerKeySHA256, a.KMSKeyName
	if a.CustomerKeySHA256 != "" && a.CRC32C == 0 && len(a.MD5) == 0 {
		o.CRC32C = "" // GCS shows a CSEK object's hashes only to a request with its key
	}
	if !a.Deleted.IsZero() {
		o.Deleted = &a.Deleted
	}
	if !a.SoftDeleteTime.IsZero() {
		o.SoftDeleteTime, o.HardDeleteTime = &a.SoftDeleteTime, &a.HardDeleteTime
	}
	if !a.Created.IsZero() {
		o.Created = &a.Created
	}
	if !a.Updated.IsZero() {
		o.Updated = &a.Updated
	}
	o.TemporaryHold, o.EventBasedHold = a.TemporaryHold, a.EventBasedHold
	if r := a.Retention; r != nil && !r.RetainUntil.IsZero() {
		o.RetentionMode, o.RetainUntil = r.Mode, &r.RetainUntil
	}
	return o
}

// keyColumn is "key:" padded to width, with at least one space before the
// value however long the key (a metadata key such as goog-reserved-file-mtime
// is longer than the column).
func keyColumn(k string, width int) string {
	k += ":"
	if pad := width - len([]rune(k)); pad > 0 {
		return k + strings.Repeat(" ", pad)
	}
	return k + " "
}

// printObject writes gsutil stat's layout: the URL, then one indented line per field.
func printObject(w io.Writer, o objectJSON) {
	fmt.Fprintf(w, "%s:\n", escapeText(o.URL))
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "    %s%s\n", keyColumn(k, 24), escapeText(v))
		}
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC1123)
	}
	line("Creation time", ts(o.Created))
	line("Update time", ts(o.Updated))
	line("Storage class", o.StorageClass)
	line("Content-Length", fmt.Sprint(o.Size))
	line("Content-Type", o.ContentType)
	line("Cache-Control", o.CacheControl)
	line("Content-Disposition", o.ContentDisposition)
	line("Content-Encoding", o.ContentEncoding)
	line("Content-Language", o.ContentLanguage)
	line("Encryption key SHA256", o.EncryptionKeySHA256)
	line("KMS key", o.KMSKeyName)
	if len(o.Metadata) > 0 {
		fmt.Fprintf(w, "    Metadata:\n")
		for _, k := range sortedKeys(o.Metadata) {
			fmt.Fprintf(w, "        %s%s\n", keyColumn(escapeText(k), 20), escapeText(o.Metadata[k]))
		}
	}
	line("Hash (crc32c)", o.CRC32C)
	line("Hash (md5)", o.MD5)
	line("Generation", fmt.Sprint(o.Generation))
	line("Metageneration", fmt.Sprint(o.Metageneration))
}

// objectOperands parses operands that must each name one object.
func objectOperands(ops []string) ([]upload.URL, error) {
	if len(ops) == 0 {
		return nil, usagef("name at least one object, e.g. gs://my-bucket/report.pdf")
	}
	var out []upload.URL
	for _, op := range ops {
		if err := checkTypo(op); err != nil {
			return nil, err
		}
		if !isRemote(op) {
			return nil, usagef("%s is not a gs:// URL", op)
		}
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		if u.object == "" || strings.HasSuffix(u.object, "/") {
			return nil, usagef("%s names a bucket or folder, not an object", op)
		}
		out = append(out, u.lib())
	}
	return out, nil
}

// objectError says which object a request failed for, in words for the common cases.
func objectError(u upload.URL, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrObjectNotExist):
		return fmt.Errorf("%s: no such object", u)
	case errors.Is(err, storage.ErrBucketNotExist):
		return fmt.Errorf("%s: no such bucket %q", u, u.Bucket)
	}
	return fmt.Errorf("%s: %w", u, err)
}

// eachObject runs fn for every object, reporting failures on stderr and going on; the
// result is a *failedError when any failed.
func (a *app) eachObject(urls []upload.URL, fn func(u upload.URL) error) error {
	failed := 0
	for _, u := range urls {
		if err := fn(u); err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			fmt.Fprintf(a.stderr, "gcsput: %v\n", escapeText(redact(err.Error())))
			failed++
		}
	}
	if failed > 0 {
		return &failedError{failed: failed, total: len(urls), noun: "objects"}
	}
	return nil
}

// printJSON writes v as one line.
func printJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
