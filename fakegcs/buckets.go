package fakegcs

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	raw "google.golang.org/api/storage/v1"
)

func (s *Server) serveBucketInsert(x *exchange) {
	var req raw.Bucket
	if !x.readJSON(&req) {
		return
	}
	if req.Name == "" {
		x.fail(errf(400, "required", "Required: bucket name"))
		return
	}
	if err := s.validBucket(req.Name); err != nil {
		x.fail(err)
		return
	}
	s.mu.Lock()
	_, exists := s.buckets[req.Name]
	s.mu.Unlock()
	if exists {
		x.fail(errf(409, "conflict", "Your previous request to create the named bucket succeeded and you already own it."))
		return
	}
	if req.StorageClass != "" && !validClass(req.StorageClass) {
		x.fail(errf(400, "invalid", "Invalid storage class %q", req.StorageClass))
		return
	}
	softDelete := int64(s.opts.DefaultSoftDelete / time.Second)
	if p := req.SoftDeletePolicy; p != nil {
		softDelete = p.RetentionDurationSeconds
	}
	if apiErr := s.setSoftDelete(&bucket{}, softDelete); apiErr != nil {
		x.fail(apiErr)
		return
	}
	hns := req.HierarchicalNamespace != nil && req.HierarchicalNamespace.Enabled
	if hns && (req.IamConfiguration == nil || req.IamConfiguration.UniformBucketLevelAccess == nil ||
		!req.IamConfiguration.UniformBucketLevelAccess.Enabled) {
		x.fail(errf(400, "invalid", "Hierarchical namespace requires uniform bucket-level access: set iamConfiguration.uniformBucketLevelAccess.enabled=true"))
		return
	}
	_ = s.CreateBucket(req.Name)
	s.mu.Lock()
	if b := s.buckets[req.Name]; b != nil {
		b.storageClass, b.defaultHold = req.StorageClass, req.DefaultEventBasedHold
		b.objectRetention = x.r.URL.Query().Get("enableObjectRetention") == "true"
		b.versioning = req.Versioning != nil && req.Versioning.Enabled
		_ = s.setSoftDelete(b, softDelete)
		b.hns = hns
	}
	s.mu.Unlock()
	s.serveBucketGetNamed(x, req.Name)
}

func (s *Server) serveBucketGet(x *exchange) { s.serveBucketGetNamed(x, x.ri.bucket) }

func (s *Server) serveBucketGetNamed(x *exchange, name string) {
	s.mu.Lock()
	b, ok := s.buckets[name]
	var rb *raw.Bucket
	if ok {
		rb = rawBucket(b, x.baseURL())
	}
	s.mu.Unlock()
	if !ok {
		x.fail(errNoBucket)
		return
	}
	writeJSON(x.w, http.StatusOK, rb)
}

// serveStorageLayout answers GET /storage/v1/b/BUCKET/storageLayout, which
// gcloud storage asks before cp -r, mv and rm -r: the bucket's namespace
// (hierarchical or flat) in fakegcs's one location.
func (s *Server) serveStorageLayout(x *exchange) {
	if !s.hasBucket(x) {
		return
	}
	s.mu.Lock()
	hns := s.buckets[x.ri.bucket] != nil && s.buckets[x.ri.bucket].hns
	s.mu.Unlock()
	writeJSON(x.w, http.StatusOK, map[string]any{
		"kind": "storage#storageLayout", "bucket": x.ri.bucket,
		"location": "US", "locationType": "multi-region",
		"hierarchicalNamespace": map[string]bool{"enabled": hns},
	})
}

// serveBucketPatch answers a bucket patch or update under its
// ifMetagenerationMatch precondition. Of the bucket's settings fakegcs keeps
// the soft delete policy and versioning (softdelete.go),
// the retention policy (enforced on object delete and overwrite; a locked
// one cannot be shortened or removed), the default storage class (of new
// objects and compose destinations) and defaultEventBasedHold (new objects
// are created under an event-based hold); the others are accepted and dropped. Either way the
// metageneration moves.
func (s *Server) serveBucketPatch(x *exchange) {
	p, apiErr := parseBucketPatch(x)
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	c, apiErr := parseConds(x.r.URL.Query(), nil, "if")
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.mu.Lock()
	b, ok := s.buckets[x.ri.bucket]
	switch {
	case !ok:
		apiErr = errNoBucket
	case c.checkBucket(b) != nil:
		apiErr = errPrecondition
	default:
		apiErr = s.applyPatch(b, p)
	}
	s.mu.Unlock()
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	s.serveBucketGet(x)
}

// bucketPatch is what fakegcs keeps of a bucket patch; nil fields are not
// changed.
type bucketPatch struct {
	setRetention bool
	retention    *retentionField // nil with setRetention: remove the policy
	storageClass *string
	defaultHold  *bool
	billing      *raw.BucketBilling // requesterPays
	versioning   *raw.BucketVersioning
	softDelete   *raw.BucketSoftDeletePolicy
}

// parseBucketPatch reads a bucket patch's body.
func parseBucketPatch(x *exchange) (bucketPatch, *apiError) {
	var p bucketPatch
	var fields map[string]json.RawMessage
	if body, _ := io.ReadAll(io.LimitReader(x.r.Body, 1<<20)); len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &fields); err != nil {
			return p, errf(400, "parseError", "Parse Error: %v", err)
		}
	}
	var raw json.RawMessage
	if raw, p.setRetention = fields["retentionPolicy"]; p.setRetention {
		if err := json.Unmarshal(raw, &p.retention); err != nil {
			return p, errf(400, "parseError", "Parse Error in retentionPolicy: %v", err)
		}
	}
	if raw, ok := fields["storageClass"]; ok {
		if err := json.Unmarshal(raw, &p.storageClass); err != nil {
			return p, errf(400, "parseError", "Parse Error in storageClass: %v", err)
		}
		if p.storageClass != nil && !validClass(*p.storageClass) {
			return p, errf(400, "invalid", "Invalid storage class %q", *p.storageClass)
		}
	}
	if raw, ok := fields["billing"]; ok {
		if err := json.Unmarshal(raw, &p.billing); err != nil {
			return p, errf(400, "parseError", "Parse Error in billing: %v", err)
		}
	}
	if raw, ok := fields["versioning"]; ok {
		if err := json.Unmarshal(raw, &p.versioning); err != nil {
			return p, errf(400, "parseError", "Parse Error in versioning: %v", err)
		}
	}
	if raw, ok := fields["softDeletePolicy"]; ok {
		if err := json.Unmarshal(raw, &p.softDelete); err != nil {
			return p, errf(400, "parseError", "Parse Error in softDeletePolicy: %v", err)
		}
	}
	if raw, ok := fields["defaultEventBasedHold"]; ok {
		if err := json.Unmarshal(raw, &p.defaultHold); err != nil {
			return p, errf(400, "parseError", "Parse Error in defaultEventBasedHold: %v", err)
		}
	}
	return p, nil
}

// validClass reports a storage class GCS accepts for a bucket.
func validClass(c string) bool {
	switch c {
	case "STANDARD", "NEARLINE", "COLDLINE", "ARCHIVE", "MULTI_REGIONAL", "REGIONAL", "DURABLE_REDUCED_AVAILABILITY":
		return true
	}
	return false
}

// applyPatch changes b as p says; s.mu is held.
func (s *Server) applyPatch(b *bucket, p bucketPatch) *apiError {
	if p.setRetention {
		if apiErr := s.setRetention(b, p.retention); apiErr != nil {
			return apiErr
		}
	}
	if p.softDelete != nil {
		if apiErr := s.setSoftDelete(b, p.softDelete.RetentionDurationSeconds); apiErr != nil {
			return apiErr
		}
	}
	if p.versioning != nil {
		b.versioning = p.versioning.Enabled
	}
	if p.storageClass != nil {
		b.storageClass = *p.storageClass
	}
	if p.defaultHold != nil {
		b.defaultHold = *p.defaultHold
	}
	if p.billing != nil {
		b.requesterPays = p.billing.RequesterPays
	}
	b.metageneration++
	b.updated = s.now()
	return nil
}

// retentionField is the retentionPolicy of a bucket patch.
type retentionField struct {
	RetentionPeriod json.Number `json:"retentionPeriod"`
}

// setRetention sets (nil: removes) b's retention policy; s.mu is held.
func (s *Server) setRetention(b *bucket, rp *retentionField) *apiError {
	period := int64(0)
	if rp != nil && rp.RetentionPeriod != "" {
		n, err := rp.RetentionPeriod.Int64()
		if err != nil || n < 0 || n > 3155760000 {
			return errf(400, "invalid", "Invalid retention period %q: seconds, at most 100 years", rp.RetentionPeriod)
		}
		period = n
	}
	if b.retention != nil && b.retention.locked && period < b.retention.period {
		return errf(403, "forbidden", "The retention policy of bucket %s is locked: its period cannot be reduced or removed", b.name)
	}
	switch {
	case b.retention != nil && b.retention.locked:
		b.retention.period = period
	case period == 0:
		b.retention = nil
	default:
		b.retention = &retention{period: period, effective: s.now()}
	}
	return nil
}

func (s *Server) serveBucketDelete(x *exchange) {
	s.mu.Lock()
	b, ok := s.buckets[x.ri.bucket]
	var apiErr *apiError
	switch {
	case !ok:
		apiErr = errNoBucket
	case b.objects.len() > 0 || b.hasNoncurrent():
		// Soft-deleted generations do not keep a bucket from being deleted;
		// noncurrent ones do.
		apiErr = errf(409, "conflict", "The bucket you tried to delete is not empty.")
	default:
		delete(s.buckets, x.ri.bucket)
	}
	s.mu.Unlock()
	if apiErr != nil {
		x.fail(apiErr)
		return
	}
	x.w.WriteHeader(http.StatusNoContent)
}

// serveBucketList lists buckets (the project parameter is ignored) with
// prefix; all in one page.
func (s *Server) serveBucketList(x *exchange) {
	prefix := x.r.URL.Query().Get("prefix")
	s.mu.Lock()
	out := &raw.Buckets{Kind: "storage#buckets", Items: []*raw.Bucket{}}
	for _, b := range s.buckets {
		if strings.HasPrefix(b.name, prefix) {
			out.Items = append(out.Items, rawBucket(b, x.baseURL()))
		}
	}
	s.mu.Unlock()
	sort.Slice(out.Items, func(i, j int) bool { return out.Items[i].Name < out.Items[j].Name })
	writeJSON(x.w, http.StatusOK, out)
}

// hasBucket reports whether the request's bucket exists, answering GCS's 404
// when it does not.
func (s *Server) hasBucket(x *exchange) bool {
	s.mu.Lock()
	_, ok := s.buckets[x.ri.bucket]
	s.mu.Unlock()
	if !ok {
		x.fail(errNoBucket)
	}
	return ok
}
