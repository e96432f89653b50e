package fakegcs

import (
	"compress/gzip"
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveObjectGet answers GET .../o/OBJECT: the Object resource, or the
// content with alt=media (always for /download/...).
func (s *Server) serveObjectGet(x *exchange) {
	q := x.r.URL.Query()
	ref, apiErr := s.readableObject(x, q.Get("generation"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	defer ref.done()
	if q.Get("alt") == "media" || strings.HasPrefix(x.r.URL.Path, "/download/") {
		if !ref.attrs.SoftDeleteTime.IsZero() {
			// Soft-deleted objects cannot be read (their metadata can).
			x.fail(errf(400, "invalid", "Soft-deleted object %s/%s#%d cannot be read: restore it first", x.ri.bucket, x.ri.object, ref.attrs.Generation))
			return
		}
		if apiErr := x.readKey(&ref.attrs); apiErr != nil {
			x.fail(apiErr)
			return
		}
		x.serveContent(ref)
		return
	}
	if _, apiErr := x.metadataKey(&ref.attrs); apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.writeObject(ref.attrs)
}

// serveXMLGet answers the XML API's path-style GET/HEAD /BUCKET/OBJECT,
// which the official Go client uses for downloads by default.
func (s *Server) serveXMLGet(x *exchange) {
	ref, apiErr := s.readableObject(x, x.r.URL.Query().Get("generation"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	defer ref.done()
	if apiErr := x.readKey(&ref.attrs); apiErr != nil {
		x.fail(apiErr)
		return
	}
	h := x.w.Header()
	for k, v := range ref.attrs.Metadata {
		h.Set("X-Goog-Meta-"+k, v)
	}
	x.serveContent(ref)
}

// readableObject finds the object of a read and checks generation and
// preconditions: the live generation, a noncurrent one by its generation,
// or with softDeleted=true a soft-deleted one by its generation. The
// caller must call done on the returned ref.
func (s *Server) readableObject(x *exchange, gen string) (objectRef, *apiError) {
	g, apiErr := parseGen(gen)
	if apiErr != nil {
		return objectRef{}, apiErr
	}
	ref, apiErr := s.acquireGen(x.ri.bucket, x.ri.object, g, x.r.URL.Query().Get("softDeleted") == "true")
	if apiErr != nil {
		return ref, apiErr
	}
	c, apiErr := parseConds(x.r.URL.Query(), x.r.Header, "if")
	if apiErr == nil {
		apiErr = c.checkAttrs(&ref.attrs, true)
	}
	if apiErr != nil {
		ref.done()
	}
	return ref, apiErr
}

// serveContent sends an object's bytes with GCS's download headers, honouring
// a single Range (206, or 416 when it cannot be met). A gzip-encoded object
// requested without Accept-Encoding: gzip is decompressed on the fly, whole
// whatever the Range and without Content-Length, as GCS's decompressive
// transcoding does (cloud.google.com/storage/docs/transcoding), unless its
// Cache-Control has no-transform.
func (x *exchange) serveContent(ref objectRef) {
	a := &ref.attrs
	h := x.w.Header()
	h.Set("Content-Type", a.ContentType)
	h.Set("X-Goog-Generation", strconv.FormatInt(a.Generation, 10))
	h.Set("X-Goog-Metageneration", strconv.FormatInt(a.Metageneration, 10))
	h.Set("X-Goog-Stored-Content-Length", strconv.FormatInt(a.Size, 10))
	h.Set("X-Goog-Stored-Content-Encoding", orDefault(a.ContentEncoding, "identity"))
	h.Set("X-Goog-Storage-Class", a.StorageClass)
	hashes := "crc32c=" + encodeCRC(a.CRC32C)
	if a.MD5 != nil {
		hashes += ",md5=" + base64.StdEncoding.EncodeToString(a.MD5)
	}
	h.Set("X-Goog-Hash", hashes)
	if a.CustomerKeySHA256 != "" {
		h.Set("X-Goog-Encryption-Algorithm", "AES256")
		h.Set("X-Goog-Encryption-Key-Sha256", a.CustomerKeySHA256)
	}
	h.Set("ETag", `"`+etag(a.Generation, a.Metageneration)+`"`)
	h.Set("Last-Modified", a.Updated.UTC().Format(http.TimeFormat))
	setIf(h, "Cache-Control", a.CacheControl)
	setIf(h, "Content-Disposition", a.ContentDisposition)
	setIf(h, "Content-Language", a.ContentLanguage)
	if a.ContentEncoding == "gzip" && !acceptsGzip(x.r) && !hasDirective(a.CacheControl, "no-transform") {
		x.serveGunzipped(ref)
		return
	}
	setIf(h, "Content-Encoding", a.ContentEncoding)
	h.Set("Accept-Ranges", "bytes")
	off, n, status := int64(0), a.Size, http.StatusOK
	if br, ok := parseRange(x.r.Header.Get("Range")); ok {
		var sat bool
		off, n, sat = br.resolve(a.Size)
		if !sat {
			h.Set("Content-Range", "bytes */"+strconv.FormatInt(a.Size, 10))
			x.fail(errf(416, "requestedRangeNotSatisfiable", "The requested range cannot be satisfied."))
			return
		}
		status = http.StatusPartialContent
		h.Set("Content-Range", "bytes "+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10)+"/"+strconv.FormatInt(a.Size, 10))
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	x.sendBody(ref.blob, off, n, status)
}

func (x *exchange) sendBody(b blob, off, n int64, status int) {
	if x.r.Method == http.MethodHead {
		x.w.WriteHeader(status)
		return
	}
	rc, err := b.open(off, n)
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: reading object: %v", err))
		return
	}
	defer rc.Close()
	x.w.media, x.w.bodyLen = true, n
	x.w.WriteHeader(status)
	_, _ = io.Copy(x.w, rc)
}

func (x *exchange) serveGunzipped(ref objectRef) {
	h := x.w.Header()
	h.Set("Warning", "214 UploadServer gunzipped")
	rc, err := ref.blob.open(0, ref.blob.size())
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: reading object: %v", err))
		return
	}
	defer rc.Close()
	zr, err := gzip.NewReader(rc)
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: object is not gzip: %v", err))
		return
	}
	x.w.media, x.w.bodyLen = true, ref.attrs.Size
	x.w.WriteHeader(http.StatusOK)
	// GCS sends a transcoded body without Content-Length. net/http would
	// add one to a small body it buffered whole (as it does when the
	// connection cannot sendfile, e.g. a capped one): the headers go first.
	if !x.w.dead {
		_ = http.NewResponseController(x.w.ResponseWriter).Flush()
	}
	if x.r.Method != http.MethodHead {
		_, _ = io.Copy(x.w, zr)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			enc, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if enc == "gzip" || enc == "*" {
				return true
			}
		}
	}
	return false
}

// hasDirective reports whether a Cache-Control value has the directive d.
func hasDirective(cacheControl, d string) bool {
	for part := range strings.SplitSeq(cacheControl, ",") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

func setIf(h http.Header, k, v string) {
	if v != "" {
		h.Set(k, v)
	}
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// writeXMLError answers an XML API request in its error format.
func writeXMLError(w http.ResponseWriter, e *apiError) {
	code := map[int]string{404: "NoSuchKey", 412: "PreconditionFailed", 416: "InvalidRange", 304: "NotModified", 429: "SlowDown"}[e.code]
	if code == "" {
		code = e.reason
	}
	body := struct {
		XMLName xml.Name `xml:"Error"`
		Code    string   `xml:"Code"`
		Message string   `xml:"Message"`
	}{Code: code, Message: e.msg}
	b, _ := xml.Marshal(body)
	b = append([]byte(xml.Header), b...)
	w.Header().Set("Content-Type", "application/xml; charset=UTF-8")
	if e.code == http.StatusNotModified {
		w.WriteHeader(e.code)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.code)
	_, _ = w.Write(b)
}
