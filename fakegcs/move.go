package fakegcs

import (
	"net/http"
	"strings"
)

// serveMove answers objects.move, POST
// /storage/v1/b/BUCKET/o/SOURCE/moveTo/o/DESTINATION: the live generation of
// SOURCE becomes DESTINATION in one step, inside one bucket, without a byte
// copied. The JSON API reference ("Objects: move": "Moves the source object
// to the destination object in the same bucket") restricts it to one
// bucket and not to hierarchical-namespace buckets, and GCS's "Rename
// objects atomically" sample uses it on any bucket, so fakegcs serves it on
// every bucket. The source must meet the ifSource* preconditions, the
// destination the if* ones (ifGenerationMatch=0: only where there is none);
// a source encrypted with a customer-supplied key must be named with its key
// (X-Goog-Encryption-*, as the official Go client sends it). A source under
// a hold or retention cannot be removed, and a destination under one
// cannot be replaced: GCS's 403 either way. The destination is a new
// generation (metageneration 1) with the source's content, hashes,
// metadata, storage class and encryption; the source is gone once it is
// answered, and no request ever sees neither or both.
func (s *Server) serveMove(x *exchange) {
	q := x.r.URL.Query()
	srcC, apiErr := parseConds(q, nil, "ifSource")
	var dstC conds
	if apiErr == nil {
		dstC, apiErr = parseConds(q, nil, "if")
	}
	if apiErr == nil && x.ri.object == x.ri.dstObject {
		apiErr = errf(400, "invalid", "Source and destination object names must be different.")
	}
	if apiErr == nil {
		apiErr = s.validObject(x.ri.dstObject)
	}
	var sent string
	if apiErr == nil {
		sent, apiErr = requestKey(x.r.Header, keyHeaders)
	}
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	out, apiErr := s.move(x.ri.bucket, x.ri.object, x.ri.dstObject, srcC, dstC, sent)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	writeJSON(x.w, http.StatusOK, rawObject(out, x.baseURL()))
}

// move renames bucket/src to bucket/dst under s.mu, so no request sees the
// moment between.
func (s *Server) move(bucketName, src, dst string, srcC, dstC conds, key string) (ObjectAttrs, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucketName]
	if !ok {
		return ObjectAttrs{}, errNoBucket
	}
	o := b.objects.get(src)
	if o == nil {
		return ObjectAttrs{}, errf(404, "notFound", "No such object: %s/%s", bucketName, src)
	}
	if apiErr := srcC.check(o, false); apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	if apiErr := checkKey(key, o.attrs.CustomerKeySHA256, errSourceKeyRequired); apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	old := b.objects.get(dst)
	if apiErr := dstC.check(old, false); apiErr != nil {
		return ObjectAttrs{}, apiErr
	}
	for _, held := range []*object{o, old} {
		if apiErr := s.retained(b, held); apiErr != nil {
			return ObjectAttrs{}, apiErr
		}
	}
	a := o.attrs.clone()
	a.Name = dst
	a.Generation = s.nextGeneration()
	a.Metageneration = 1
	a.Updated = s.now()
	b.addParents(dst, a.Updated)
	b.objects.set(dst, &object{attrs: a.clone(), blob: o.blob, acl: o.acl})
	b.objects.remove(src)
	if old != nil {
		s.retire(b, old)
	}
	return a, nil
}

// movePath splits the path after "/o/" of an objects.move request,
// SOURCE/moveTo/o/DESTINATION; ok is false for any other path.
func movePath(rest []string) (src, dst string, ok bool) {
	for i, seg := range rest {
		if seg == "moveTo" && i > 0 && len(rest) >= i+3 && rest[i+1] == "o" {
			return strings.Join(rest[:i], "/"), strings.Join(rest[i+2:], "/"), true
		}
	}
	return "", "", false
}
