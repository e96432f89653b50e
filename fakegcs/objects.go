package fakegcs

import (
	"encoding/json"
	"io"
	"net/http"
)

// serveObjectDelete answers DELETE .../o/OBJECT (204). Without generation
// the live generation is retired (noncurrent with versioning); with one,
// that live or noncurrent generation is deleted for good, which under a
// soft delete policy means soft-deleted. A soft-deleted generation is 404.
func (s *Server) serveObjectDelete(x *exchange) {
	q := x.r.URL.Query()
	c, apiErr := parseConds(q, nil, "if")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	gen, apiErr := parseGen(q.Get("generation"))
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.mu.Lock()
	apiErr = s.deleteGen(x.ri.bucket, x.ri.object, gen, c)
	s.mu.Unlock()
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.w.WriteHeader(http.StatusNoContent)
}

// deleteGen deletes generation gen (0: the live one) of bucket/name; s.mu
// is held.
func (s *Server) deleteGen(bucket, name string, gen int64, c conds) *apiError {
	b, ok := s.buckets[bucket]
	if !ok {
		return errNoBucket
	}
	s.expire(b)
	notFound := errf(404, "notFound", "No such object: %s/%s", bucket, name)
	o := b.objects.get(name)
	if o != nil && (gen == 0 || gen == o.attrs.Generation) {
		if apiErr := c.check(o, false); apiErr != nil {
			return apiErr
		}
		if apiErr := s.retained(b, o); apiErr != nil {
			return apiErr
		}
		b.objects.remove(name)
		if gen == 0 {
			s.retire(b, o)
		} else {
			s.dropGen(b, o, s.now())
		}
		return nil
	}
	if gen == 0 {
		return notFound
	}
	i, nc := oldGen(b, name, gen, false)
	if nc == nil {
		return notFound
	}
	if apiErr := c.check(nc, false); apiErr != nil {
		return apiErr
	}
	removeOld(b, name, i)
	s.dropGen(b, nc, s.now())
	return nil
}

// serveObjectPatch answers PATCH .../o/OBJECT: the fields present in the
// body replace the stored ones; a null metadata value deletes that key.
func (s *Server) serveObjectPatch(x *exchange) { s.updateMetadata(x, false) }

// serveObjectUpdate answers PUT .../o/OBJECT: all writable metadata is
// replaced by the body's.
func (s *Server) serveObjectUpdate(x *exchange) { s.updateMetadata(x, true) }

func (s *Server) updateMetadata(x *exchange, replace bool) {
	var fields map[string]json.RawMessage
	body, err := io.ReadAll(io.LimitReader(x.r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &fields)
	}
	if err != nil {
		x.fail(errf(400, "parseError", "Parse Error: %v", err))
		return
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.mu.Lock()
	o, apiErr := s.getObjectLocked(x.ri.bucket, x.ri.object)
	if apiErr == nil {
		apiErr = c.check(o, false)
	}
	var hp holdsPatch
	if apiErr == nil {
		hp, apiErr = parseHolds(fields, replace)
	}
	if apiErr == nil {
		apiErr = s.applyHolds(s.buckets[x.ri.bucket], o, hp, x.r.URL.Query())
	}
	if apiErr == nil {
		apiErr = applyMetadata(&o.attrs, fields, replace)
	}
	var out ObjectAttrs
	if apiErr == nil {
		o.attrs.Metageneration++
		o.attrs.Updated = s.now()
		out = o.attrs.clone()
	}
	s.mu.Unlock()
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.writeObject(out)
}

func (s *Server) getObjectLocked(bucket, name string) (*object, *apiError) {
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, errNoBucket
	}
	o := b.objects.get(name)
	if o == nil {
		return nil, errf(404, "notFound", "No such object: %s/%s", bucket, name)
	}
	return o, nil
}

// applyMetadata sets the writable fields of a patch or update body.
func applyMetadata(a *ObjectAttrs, fields map[string]json.RawMessage, replace bool) *apiError {
	strs := map[string]*string{
		"contentType": &a.ContentType, "contentEncoding": &a.ContentEncoding,
		"contentDisposition": &a.ContentDisposition, "contentLanguage": &a.ContentLanguage,
		"cacheControl": &a.CacheControl,
	}
	for k, dst := range strs {
		v, ok := fields[k]
		if !ok {
			if replace {
				*dst = ""
			}
			continue
		}
		var sv *string
		if err := json.Unmarshal(v, &sv); err != nil {
			return errf(400, "invalid", "Invalid value for %s", k)
		}
		*dst = ""
		if sv != nil {
			*dst = *sv
		}
	}
	if replace && a.ContentType == "" {
		a.ContentType = "application/octet-stream"
	}
	v, ok := fields["metadata"]
	if !ok {
		if replace {
			a.Metadata = nil
		}
		return nil
	}
	var md map[string]*string
	if err := json.Unmarshal(v, &md); err != nil {
		return errf(400, "invalid", "Invalid value for metadata")
	}
	if md == nil || replace {
		a.Metadata = nil
	}
	for k, val := range md {
		if val == nil {
			delete(a.Metadata, k)
			continue
		}
		if a.Metadata == nil {
			a.Metadata = map[string]string{}
		}
		a.Metadata[k] = *val
	}
	return nil
}

// serveCopy answers copyTo: always one call (rewriteTo is serveRewrite).
func (s *Server) serveCopy(x *exchange) {
	meta, apiErr := readMetadata(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	src, apiErr := s.copySource(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	defer src.done()
	dstKey, dstKMS, apiErr := copySourceKey(x.r, &src.attrs)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	obj, apiErr := s.copyInto(src, meta, x.ri.dstBucket, x.ri.dstObject, c, dstKey, dstKMS)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.writeResource(http.StatusOK, rawObject(obj, x.baseURL()))
}

// copySource finds the source of a copy and checks its ifSource*
// conditions. The caller must call done on the returned ref.
func (s *Server) copySource(x *exchange) (objectRef, *apiError) {
	q := x.r.URL.Query()
	gen, apiErr := parseGen(q.Get("sourceGeneration"))
	if apiErr != nil {
		return objectRef{}, apiErr
	}
	ref, apiErr := s.acquireGen(x.ri.bucket, x.ri.object, gen, false)
	if apiErr != nil {
		return ref, apiErr
	}
	c, apiErr := parseConds(q, nil, "ifSource")
	if apiErr == nil {
		apiErr = c.checkAttrs(&ref.attrs, false)
	}
	if apiErr != nil {
		ref.done()
		return objectRef{}, apiErr
	}
	return ref, nil
}
