package fakegcs

import (
	"fmt"
	"maps"
	"net/http"
)

// Requester pays. A bucket with requester pays (Options.RequesterPays,
// [Server.SetRequesterPays], or a bucket patch of billing.requesterPays as
// on GCS) serves only requests that name the project to bill in the
// userProject parameter (or the XML API's X-Goog-User-Project header);
// others get GCS's 400. Requests to an open upload
// session are not refused: the session URI was handed out to a request
// that was billed. Every request that names a userProject is counted in
// [Stats].Billed, whatever its bucket, as GCS bills that project for it.
var errUserProjectMissing = errf(400, "required", "Bucket is a requester pays bucket but no user project provided.")

// SetRequesterPays turns requester pays on or off for a bucket.
func (s *Server) SetRequesterPays(bucket string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return fmt.Errorf("%w: %s", ErrBucketNotFound, bucket)
	}
	b.requesterPays = on
	return nil
}

// bill counts a request billed to its userProject, and refuses one without
// a userProject to a requester-pays bucket.
func (s *Server) bill(r *http.Request, ri *reqInfo) *apiError {
	q := r.URL.Query()
	p := q.Get("userProject")
	if p == "" && ri.xml {
		p = r.Header.Get("X-Goog-User-Project") // the XML API's way
	}
	if p != "" {
		s.cmu.Lock()
		s.counters.billed[p]++
		s.cmu.Unlock()
		return nil
	}
	if q.Get("upload_id") != "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range []string{ri.bucket, ri.dstBucket} {
		if b, ok := s.buckets[name]; ok && b.requesterPays {
			return errUserProjectMissing
		}
	}
	return nil
}

// billedCounts is a copy of the requests billed per project; s.cmu is held.
func (c *counters) billedCounts() map[string]int { return maps.Clone(c.billed) }
