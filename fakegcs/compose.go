package fakegcs

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	raw "google.golang.org/api/storage/v1"
)

// GCS's compose limits (cloud.google.com/storage/docs/composite-objects).
const (
	// maxComposeSources is the most source objects one compose takes.
	maxComposeSources = 32
	// maxComponentCount is where componentCount saturates: GCS no longer
	// limits the components of a composite object (it once refused more
	// than 1024), it only stops counting them.
	maxComponentCount = math.MaxInt32
)

// composeRequest is the body of objects.compose. It is fakegcs's own type,
// not raw.ComposeRequest, so that int64s parse whether a client sends them
// as JSON strings (Google's clients) or numbers, and an ifGenerationMatch
// of 0 is told apart from none.
type composeRequest struct {
	Destination         *raw.Object     `json:"destination"`
	SourceObjects       []composeSource `json:"sourceObjects"`
	DeleteSourceObjects bool            `json:"deleteSourceObjects"`
}

type composeSource struct {
	Name                string   `json:"name"`
	Generation          *jsonInt `json:"generation"`
	ObjectPreconditions *struct {
		IfGenerationMatch *jsonInt `json:"ifGenerationMatch"`
	} `json:"objectPreconditions"`
}

// jsonInt is an int64 sent as a JSON string or number.
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	*n = jsonInt(v)
	return err
}

// serveCompose answers POST .../o/OBJECT/compose: the destination is the
// sources' bytes in order. Its CRC32C is combined from theirs without
// reading them, its componentCount is the sum of theirs (1 for an object
// that is not composite), it has no MD5 (GCS ignores one in the request),
// and its other metadata comes from the request's destination resource.
func (s *Server) serveCompose(x *exchange) {
	req, c, apiErr := parseCompose(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	sent, apiErr := requestKey(x.r.Header, keyHeaders)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	src, apiErr := s.composeSources(x.ri.bucket, &req)
	if apiErr == nil {
		apiErr = composeKeys(sent, src.parts)
		if apiErr != nil {
			src.done()
		}
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	content, err := s.be.concat(src.blobs())
	src.done()
	if err != nil {
		x.fail(errf(500, "internalError", "fakegcs: compose: %v", err))
		return
	}
	dst := attrsFromRaw(req.Destination)
	dst.Bucket, dst.Name = x.ri.bucket, x.ri.object
	dst.CRC32C, dst.ComponentCount = src.crc, src.count
	dst.CustomerKeySHA256, dst.KMSKeyName = sent, x.r.URL.Query().Get("kmsKeyName")
	obj, apiErr := s.commitObject(dst, content, c)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	if req.DeleteSourceObjects && !s.opts.IgnoreComposeDeleteSources {
		s.deleteSources(x.ri.bucket, obj.Name, src.parts)
	}
	x.writeObject(obj)
}

// parseCompose reads a compose request: its body, the destination's
// preconditions (ifGenerationMatch, 0 meaning "must not exist", and
// ifMetagenerationMatch, checked when the result is committed). A crc32c
// or md5Hash declared in the destination resource is ignored: gcloud
// storage copies its first component's checksums there, and its composite
// uploads work against GCS; Google's storage-testbench ignores them too.
// (The Go client's Composer.SendCRC32C documents a check; two Google
// clients and the testbench say otherwise, and fakegcs sides with them.)
func parseCompose(x *exchange) (composeRequest, conds, *apiError) {
	var req composeRequest
	if apiErr := decodeJSON(x.r.Body, &req); apiErr != nil {
		return req, conds{}, apiErr
	}
	switch n := len(req.SourceObjects); {
	case n == 0:
		return req, conds{}, errf(400, "required", "You must provide at least one source component.")
	case n > maxComposeSources:
		return req, conds{}, errf(400, "invalid", "The number of source components provided (%d) exceeds the maximum (%d)", n, maxComposeSources)
	}
	for _, src := range req.SourceObjects {
		if src.Name == "" {
			return req, conds{}, errf(400, "required", "Required")
		}
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	return req, c, apiErr
}

// composeParts are the sources of a compose as it found them under the
// lock: one acquired objectRef per source (done releases them), their
// combined CRC32C and their component count.
type composeParts struct {
	parts []objectRef
	crc   uint32
	count int64
}

func (p *composeParts) blobs() []blob {
	out := make([]blob, len(p.parts))
	for i, r := range p.parts {
		out[i] = r.blob
	}
	return out
}

func (p *composeParts) done() {
	for _, r := range p.parts {
		r.done()
	}
}

// composeSources finds the sources of a compose in the destination's
// bucket, the only place GCS looks for them, and checks each one's
// generation and ifGenerationMatch, its storage class against the
// destination's, and (with deleteSourceObjects) the bucket's retention.
// On error nothing stays acquired.
func (s *Server) composeSources(bucket string, req *composeRequest) (out composeParts, apiErr *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if apiErr != nil {
			out.done()
		}
	}()
	b, ok := s.buckets[bucket]
	if !ok {
		return out, errNoBucket
	}
	class := b.class()
	if d := req.Destination; d != nil && d.StorageClass != "" {
		class = d.StorageClass
	}
	var others []string // source storage classes that differ from class
	for _, src := range req.SourceObjects {
		o := b.objects.get(src.Name)
		if apiErr := src.check(o); apiErr != nil {
			return out, apiErr
		}
		if req.DeleteSourceObjects {
			if apiErr := s.retained(b, o); apiErr != nil {
				return out, apiErr
			}
		}
		if c := o.attrs.StorageClass; c != class && !slices.Contains(others, c) {
			others = append(others, c)
		}
		o.blob.acquire()
		out.parts = append(out.parts, objectRef{attrs: o.attrs.clone(), blob: o.blob})
		out.crc = crcCombine(out.crc, o.attrs.CRC32C, o.attrs.Size)
		out.count = min(out.count+max(o.attrs.ComponentCount, 1), maxComponentCount)
	}
	if len(others) > 0 {
		return out, errf(400, "invalid", "Cannot compose object with destination storage class %s from source components that have different storage classes (%s)",
			class, strings.Join(others, ", "))
	}
	return out, nil
}

// check tests one source against the live object of its name (nil when
// there is none). A source names no bucket: it is looked up in the
// destination's. generation 0 is no generation, as in GCS's protobuf.
func (src composeSource) check(o *object) *apiError {
	var gen int64
	if src.Generation != nil {
		gen = int64(*src.Generation)
	}
	if o == nil || (gen != 0 && gen != o.attrs.Generation) {
		return errf(404, "notFound", "Object %s (generation: %d) not found.", src.Name, gen)
	}
	if p := src.ObjectPreconditions; p != nil && p.IfGenerationMatch != nil && int64(*p.IfGenerationMatch) != o.attrs.Generation {
		return errPrecondition
	}
	return nil
}

// composeKeys checks the sources of a compose against the key it carries
// (sent, a SHA256; "" for none), which also encrypts the result: a source
// written with a CSEK is composed only under that same key.
func composeKeys(sent string, parts []objectRef) *apiError {
	for _, p := range parts {
		if stored := p.attrs.CustomerKeySHA256; stored != "" {
			if apiErr := checkKey(sent, stored, errSourceKeyRequired); apiErr != nil {
				return apiErr
			}
		}
	}
	return nil
}

// deleteSources removes the sources of a compose with deleteSourceObjects:
// each generation that was composed and is still live, but never the
// destination, which a compose that appends names as its first source.
// They are deleted hard, as GCS documents (json_api/v1/objects/compose):
// never soft-deleted, nor kept noncurrent with versioning.
func (s *Server) deleteSources(bucket, dst string, parts []objectRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return
	}
	for _, p := range parts {
		o := b.objects.get(p.attrs.Name)
		if p.attrs.Name == dst || o == nil || o.attrs.Generation != p.attrs.Generation {
			continue
		}
		b.objects.remove(p.attrs.Name)
		o.blob.release()
	}
}
