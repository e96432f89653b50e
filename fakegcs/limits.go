package fakegcs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// GCS's request-rate limits, as its "Request rate and access distribution
// guidelines" (cloud.google.com/storage/docs/request-rate) and "Quotas &
// limits" (cloud.google.com/storage/quotas) state them:
//
//   - a bucket starts with an IO capacity of about 1,000 object writes
//     ("uploading, updating, and deleting objects") and 5,000 object reads
//     ("listing objects, reading object data, and reading object
//     metadata") a second, and answers 429 (or 503) beyond it;
//   - it grows that capacity as the load stays near it: a client should
//     ramp up by "no more than double the request rate over a period of
//     20 minutes";
//   - one object name takes about one write a second ("Maximum rate of
//     writes to the same object name: One write per second").
//
// fakegcs models each, off unless set ([Options].Limits,
// [Server.SetLimits], PUT /_fakegcs/limits): a token bucket per bucket for
// writes and one for reads, a capacity that doubles over Doubling of
// busy time, and the shortest interval between two writes to one name.
// [Limits].LinkRate is the fourth: a total rate shared by every connection.

// Limits are the request-rate limits fakegcs enforces. The zero value
// enforces none. Which requests count:
//
//   - writes: objects.insert (a media or multipart upload, or the start of
//     a resumable session; its chunks do not count again), compose, copy
//     and rewrite (in the destination bucket), delete, patch and update;
//   - reads: objects.get (metadata or media, JSON or XML) and objects.list;
//   - writes to one object name: the same writes, except a session's start,
//     which creates no object (its final chunk does instead), and the later
//     calls of a rewrite (those that carry a rewriteToken).
type Limits struct {
	// WriteRate is a bucket's capacity for object writes, in requests per
	// second (GCS: about 1,000 at first). Zero means unlimited.
	WriteRate float64 `json:"writeRate,omitempty"`
	// WriteBurst is how many writes a bucket admits at once after an idle
	// spell (the token bucket's depth). Zero means one second's worth,
	// WriteRate. It grows with the capacity.
	WriteBurst float64 `json:"writeBurst,omitempty"`
	// ReadRate and ReadBurst are the same for reads (GCS: about 5,000).
	ReadRate  float64 `json:"readRate,omitempty"`
	ReadBurst float64 `json:"readBurst,omitempty"`
	// Status is what a request beyond a bucket's capacity gets: 429 (the
	// default when zero), or 503, as GCS answers while it redistributes a
	// bucket's load. The per-object limit always answers 429.
	Status int `json:"status,omitempty"`
	// Doubling, when positive, grows a bucket's capacity while its load
	// stays near it: time is cut into windows of Doubling/20, and each
	// window in which the requests offered (admitted and refused) reached
	// 80% of the capacity multiplies the capacity and burst by 2^(1/20).
	// So a bucket kept busy doubles its capacity every Doubling (GCS: 20
	// minutes; tests use e.g. 2s); one left idle keeps what it reached.
	// Zero means a fixed capacity.
	Doubling time.Duration `json:"doubling,omitempty"`
	// ObjectInterval, when positive, is the shortest time between two
	// admitted writes to one object name (GCS: one write per second);
	// a write sooner gets 429. Zero means no limit.
	ObjectInterval time.Duration `json:"objectInterval,omitempty"`
	// LinkRate, when positive, is a total rate in bytes per second, each
	// way, shared by every connection (on wire bytes, like
	// [Options].CapRate, which it composes with): the link's capacity,
	// where CapRate is one connection's. Zero means none.
	LinkRate int64 `json:"linkRate,omitempty"`
}

// Validate reports a limit that cannot be enforced.
func (l Limits) Validate() error {
	switch {
	case l.WriteRate < 0 || l.WriteBurst < 0 || l.ReadRate < 0 || l.ReadBurst < 0:
		return fmt.Errorf("fakegcs: negative rate or burst in %+v", l)
	case l.Status != 0 && l.Status != http.StatusTooManyRequests && l.Status != http.StatusServiceUnavailable:
		return fmt.Errorf("fakegcs: limits status %d: want 429 or 503", l.Status)
	case l.Doubling < 0 || l.ObjectInterval < 0:
		return fmt.Errorf("fakegcs: negative doubling %v or object interval %v", l.Doubling, l.ObjectInterval)
	case l.LinkRate < 0:
		return fmt.Errorf("fakegcs: negative link rate %d", l.LinkRate)
	}
	return nil
}

type limitsJSON struct {
	limitsAlias
	Doubling       jsonDuration `json:"doubling,omitempty"`
	ObjectInterval jsonDuration `json:"objectInterval,omitempty"`
}

type limitsAlias Limits

// MarshalJSON writes durations as strings such as "2s".
func (l Limits) MarshalJSON() ([]byte, error) {
	return json.Marshal(limitsJSON{limitsAlias(l), jsonDuration(l.Doubling), jsonDuration(l.ObjectInterval)})
}

// UnmarshalJSON reads durations as strings ("2s") or numbers of seconds.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var j limitsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields() // a misspelt limit would silently enforce nothing
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*l = Limits(j.limitsAlias)
	l.Doubling, l.ObjectInterval = time.Duration(j.Doubling), time.Duration(j.ObjectInterval)
	return nil
}

// Names of the limits in [Stats].Refused.
const (
	LimitBucketWrites = "bucketWrites" // a bucket's write capacity
	LimitBucketReads  = "bucketReads"  // a bucket's read capacity
	LimitObjectWrites = "objectWrites" // one object name's write rate
)

// GCS's answers beyond a limit. The capacity's text is what GCS sent to a
// client ramping up too fast (github.com/earth-mover/icechunk issue 954;
// its link is GCS's own, verbatim);
// the per-object one is GCS's JSON API message (github.com/bespokelabsai/curator
// issue 665, and the XML API's Details in icechunk's logs).
func errBucketCapacity(status int) *apiError {
	if status == http.StatusServiceUnavailable {
		return errf(503, "backendError", "We encountered an internal error. Please try again.")
	}
	e := errf(429, "rateLimitExceeded", "You have exceeded your bucket's IO capacity. Please follow the request rate "+
		"and access distribution guidelines at https://cloud.google.com/storage/docs/conformance in order to avoid "+
		"temporary limits on your bucket.")
	e.domain = "usageLimits"
	return e
}

func errObjectRate(bucket, object string) *apiError {
	e := errf(429, "rateLimitExceeded", "The object %s/%s exceeded the rate limit for object mutation operations "+
		"(create, update, and delete). Please reduce your request rate. See https://cloud.google.com/storage/docs/gcs429.",
		bucket, object)
	e.domain = "usageLimits"
	return e
}

// growthWindows is how many windows a doubling takes; busyShare is the
// share of the capacity a window's offered load must reach to count.
const (
	growthWindows = 20
	busyShare     = 0.8
)

// capacity is one bucket's token bucket for writes or for reads.
type capacity struct {
	lim      *rate.Limiter
	rate     float64 // requests per second now
	burst    float64
	winStart time.Time
	offered  int // requests in the window that began at winStart
}

func newCapacity(r, burst float64, now time.Time) *capacity {
	if burst == 0 {
		burst = r
	}
	burst = max(burst, 1)
	return &capacity{lim: rate.NewLimiter(rate.Limit(r), int(math.Ceil(burst))), rate: r, burst: burst, winStart: now}
}

// admit takes a token for one request at now, first growing the capacity
// for every finished busy window when doubling is positive.
func (c *capacity) admit(now time.Time, doubling time.Duration) bool {
	if doubling > 0 {
		c.grow(now, doubling/growthWindows)
		c.offered++
	}
	return c.lim.AllowN(now, 1)
}

func (c *capacity) grow(now time.Time, win time.Duration) {
	if win <= 0 || now.Sub(c.winStart) < win {
		return
	}
	if float64(c.offered) >= busyShare*c.rate*win.Seconds() {
		f := math.Pow(2, 1.0/growthWindows)
		c.rate, c.burst = c.rate*f, c.burst*f
		c.lim.SetLimitAt(now, rate.Limit(c.rate))
		c.lim.SetBurstAt(now, int(math.Ceil(c.burst)))
	}
	// The windows after the one just judged held no request: none was busy.
	c.winStart = c.winStart.Add(now.Sub(c.winStart) / win * win)
	c.offered = 0
}

// limiter is a Server's limits and their state.
type limiter struct {
	mu      sync.Mutex
	l       Limits
	writes  map[string]*capacity // by bucket
	reads   map[string]*capacity // by bucket
	objects map[string]time.Time // "bucket/object" → its last admitted write
	swept   time.Time            // when objects was last pruned
}

// Capacity is a bucket's capacity now, in requests per second ([Stats].Capacity).
type Capacity struct {
	Writes float64 `json:"writes,omitempty"`
	Reads  float64 `json:"reads,omitempty"`
}

// SetLimits replaces the limits enforced from the next request on. The
// buckets' capacities start over from the new rates; refusals already
// counted stay in [Stats].Refused.
func (s *Server) SetLimits(l Limits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	s.lim.mu.Lock()
	s.lim.l = l
	s.lim.writes, s.lim.reads, s.lim.objects = map[string]*capacity{}, map[string]*capacity{}, map[string]time.Time{}
	s.lim.mu.Unlock()
	s.link.set(l.LinkRate, s.linkClock(), s.done)
	return nil
}

// Limits returns the limits in force.
func (s *Server) Limits() Limits {
	s.lim.mu.Lock()
	defer s.lim.mu.Unlock()
	return s.lim.l
}

// limitKind says which limits a request meets: the bucket whose write or
// read capacity it spends ("" for none), whether it reads, and the object
// name a write mutates ("" for none).
func limitKind(ri *reqInfo) (bucket string, read bool, object string) {
	switch ri.op {
	case "storage.objects.get", "storage.objects.list":
		return ri.bucket, true, ""
	case "storage.objects.insert":
		switch ri.phase {
		case PhaseInitiate:
			return ri.bucket, false, ""
		case PhaseFinal:
			if ri.hasOffset { // a status query that finds the upload complete changes nothing
				return "", false, ri.object
			}
			return "", false, ""
		case "":
			return ri.bucket, false, ri.object
		}
		return "", false, ""
	case "storage.objects.copy":
		return ri.dstBucket, false, ri.dstObject
	case "storage.objects.rewrite":
		if ri.rewriteToken { // a rewrite's later call: the first one was the write to the name
			return ri.dstBucket, false, ""
		}
		return ri.dstBucket, false, ri.dstObject
	case "storage.objects.compose", "storage.objects.delete", "storage.objects.patch", "storage.objects.update":
		return ri.bucket, false, ri.object
	}
	return "", false, ""
}

// limit admits a request under the limits, or returns the error GCS answers
// beyond them and counts the refusal.
func (s *Server) limit(ri *reqInfo) *apiError {
	bucket, read, object := limitKind(ri)
	if bucket == "" && object == "" {
		return nil
	}
	now := s.now()
	objBucket := ri.bucket
	if ri.dstBucket != "" {
		objBucket = ri.dstBucket
	}
	what, apiErr := s.lim.admit(now, bucket, read, objBucket, object)
	if apiErr != nil {
		s.cmu.Lock()
		s.counters.refused[what]++
		s.cmu.Unlock()
	}
	return apiErr
}

func (lm *limiter) admit(now time.Time, bucket string, read bool, objBucket, object string) (string, *apiError) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	l := lm.l
	key := objBucket + "/" + object
	if object != "" && l.ObjectInterval > 0 {
		if last, ok := lm.objects[key]; ok && now.Sub(last) < l.ObjectInterval {
			return LimitObjectWrites, errObjectRate(objBucket, object)
		}
	}
	if bucket != "" {
		r, burst, caps, what := l.WriteRate, l.WriteBurst, lm.writes, LimitBucketWrites
		if read {
			r, burst, caps, what = l.ReadRate, l.ReadBurst, lm.reads, LimitBucketReads
		}
		if r > 0 {
			c := caps[bucket]
			if c == nil {
				c = newCapacity(r, burst, now)
				caps[bucket] = c
			}
			if !c.admit(now, l.Doubling) {
				return what, errBucketCapacity(l.Status)
			}
		}
	}
	if object != "" && l.ObjectInterval > 0 {
		lm.objects[key] = now
		lm.sweep(now)
	}
	return "", nil
}

// sweep forgets the names whose last write is past the interval, at most
// once an interval, so the map holds only the names written lately.
func (lm *limiter) sweep(now time.Time) {
	if now.Sub(lm.swept) < lm.l.ObjectInterval {
		return
	}
	lm.swept = now
	for k, t := range lm.objects {
		if now.Sub(t) >= lm.l.ObjectInterval {
			delete(lm.objects, k)
		}
	}
}

// capacities are the buckets' capacities now.
func (lm *limiter) capacities() map[string]Capacity {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	out := map[string]Capacity{}
	for b, c := range lm.writes {
		v := out[b]
		v.Writes = c.rate
		out[b] = v
	}
	for b, c := range lm.reads {
		v := out[b]
		v.Reads = c.rate
		out[b] = v
	}
	return out
}

// refusedCounts is a copy of the refusals per limit; s.cmu is held.
func (c *counters) refusedCounts() map[string]int { return maps.Clone(c.refused) }
