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

	"github.com/gcsput/gcsput/internal/listing"
	"github.com/gcsput/gcsput/internal/naming"
	"github.com/gcsput/gcsput/internal/objerr"
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
	max := runner.Budget()
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
type objectJSON = listing.Item

func objectOf(a *storage.ObjectAttrs) objectJSON { return listing.ItemOf(a) }

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
		if !naming.IsRemote(op) {
			return nil, usagef("%s is not a gs:// URL", op)
		}
		u, err := parseRemote(op)
		if err != nil {
			return nil, err
		}
		if u.Object == "" || strings.HasSuffix(u.Object, "/") {
			return nil, usagef("%s names a bucket or folder, not an object", op)
		}
		out = append(out, u)
	}
	return out, nil
}

// objectError says which object a request failed for, in words for the common cases.
func objectError(u upload.URL, err error) error { return objerr.New(u.Bucket, u.Object, err) }

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
