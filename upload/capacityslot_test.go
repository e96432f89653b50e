package upload

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gcsput/gcsput/internal/aimd"
)

// Only requests that read or write a bucket's objects take a slot of its
// window: GCS's per-bucket capacity counts object reads (listings among
// them) and writes. A bucket's own metadata (the composability check's GET
// of /storage/v1/b/B, its IAM policy, its notifications) is not one of
// them, and a slot it held kept the last component's session waiting a
// round trip.
func TestCapacitySlotsAreForObjectRequests(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		slot         bool
	}{
		{"GET", "/storage/v1/b/bkt", false},
		{"GET", "/storage/v1/b/bkt?fields=softDeletePolicy", false},
		{"GET", "/storage/v1/b/bkt/iam", false},
		{"GET", "/storage/v1/b/bkt/notificationConfigs", false},
		{"GET", "/storage/v1/b?project=p", false},
		{"POST", "/batch/storage/v1", false},
		{"GET", "/storage/v1/b/bkt/o?prefix=a", true}, // a listing is an object read
		{"GET", "/storage/v1/b/bkt/o/a%2Fb", true},
		{"DELETE", "/storage/v1/b/bkt/o/a?generation=3", true},
		{"POST", "/storage/v1/b/bkt/o/d/compose", true},
		{"POST", "/storage/v1/b/bkt/o/s/rewriteTo/b/bkt/o/d", true},
		{"POST", "/upload/storage/v1/b/bkt/o?uploadType=resumable", true},
		{"GET", "/download/storage/v1/b/bkt/o/a?alt=media", true},
		{"GET", "/bkt/a/b", true},                                                     // the XML API's object
		{"PUT", "/upload/storage/v1/b/bkt/o?uploadType=resumable&upload_id=x", false}, // a session's chunk
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			buckets := aimd.NewBuckets(8, aimd.Tuning{})
			held := -1
			ct := capacityTransport{host: "gcs.test", buckets: buckets,
				base: roundTripFunc(func(r *http.Request) (*http.Response, error) {
					held = buckets.For("bkt").Stats().InFlight
					return &http.Response{StatusCode: 200, Body: http.NoBody, Request: r}, nil
				})}
			req, err := http.NewRequest(tc.method, "https://gcs.test"+tc.path, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := ct.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if want := map[bool]int{true: 1, false: 0}[tc.slot]; held != want {
				t.Fatalf("%d slots of bkt's window held while it was in flight, want %d", held, want)
			}
			if s := buckets.For("bkt").Stats(); s.InFlight != 0 {
				t.Fatalf("%d slots held after the answer", s.InFlight)
			}
		})
	}
}
